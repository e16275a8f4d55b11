// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/qemu_boot.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "partalign/boot/boot_disk.h"
#include "partalign/util/byte_order.h"
#include "support/boot_sectors.h"
#include "support/mount_point.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign::test {
namespace {

namespace fs = std::filesystem;

constexpr char kGrubDir[] = "/usr/lib/grub/i386-pc";
constexpr char kSyslinuxMbr[] = "/usr/lib/syslinux/mbr/mbr.bin";
constexpr char kSyslinuxModules[] = "/usr/lib/syslinux/modules/bios";
constexpr char kSeabios[] = "/usr/share/seabios/bios-256k.bin";
constexpr char kLinuxFsType[] = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

bool InPath(const std::string& program) {
  return RunCommand({"sh", "-c", "command -v " + program}).exit_code == 0;
}

// An ext2 filesystem of `sectors` 512-byte sectors holding `root`'s files, written into
// `image` at sector `start`.
void PutExt2(const std::string& image, uint64_t start, uint64_t sectors, const std::string& root,
             const std::string& work) {
  const std::string fs_image = work + "/fs.img";
  RunOrThrow({"mke2fs", "-q", "-F", "-t", "ext2", "-b", "1024", "-d", root, fs_image,
              std::to_string(sectors / 2)});
  RunOrThrow({"dd", "if=" + fs_image, "of=" + image, "bs=512", "seek=" + std::to_string(start),
              "conv=notrunc", "status=none"});
  fs::remove(fs_image);
}

BuiltBootDisk BuildGrub(const std::string& image, const BootDiskLayout& l,
                        const std::string& work) {
  const bool gpt = l.loader == BootLoader::kGrubGpt;
  BuiltBootDisk out;
  out.boot_partition = gpt ? 2 : 1;
  out.bios_boot_partition = gpt ? 1 : 0;
  std::string script;
  if (gpt) {
    script = fmt::format(
        "label: gpt\nfirst-lba: 34\nstart={}, size={}, type={}\nstart={}, size={}, "
        "type={}\n",
        l.bios_boot_start, l.bios_boot_sectors, kBiosBootPartitionType, l.boot_start,
        l.boot_sectors, kLinuxFsType);
  } else {
    script = fmt::format("label: dos\nlabel-id: 0x6a1b2c3d\nstart={}, size={}, type=83, bootable\n",
                         l.boot_start, l.boot_sectors);
  }
  CommandResult sf = WriteWithSfdisk(image, script);
  if (sf.exit_code != 0) throw std::runtime_error(Describe({"sfdisk", image}, sf));

  // /boot/grub: the config that prints the marker on the serial port and powers off, and the
  // modules GRUB loads from there (normal, serial, echo, halt and what they need).
  const std::string root = work + "/grub-root";
  fs::create_directories(root + "/boot/grub/i386-pc");
  for (const fs::directory_entry& e : fs::directory_iterator(kGrubDir)) {
    const std::string ext = e.path().extension();
    if (ext == ".mod" || ext == ".lst") {
      fs::copy_file(e.path(), root + "/boot/grub/i386-pc/" + e.path().filename().string());
    }
  }
  WriteFile(root + "/boot/grub/grub.cfg",
            fmt::format("serial --unit=0 --speed=115200\nterminal_input serial\nterminal_output "
                        "serial\necho {}\nhalt\n",
                        l.marker));
  PutExt2(image, l.boot_start, l.boot_sectors, root, work);
  fs::remove_all(root);

  // core.img finds /boot by partition number and the table, not by place.
  const std::string core = work + "/core.img";
  RunOrThrow({"grub-mkimage", "-O", "i386-pc", "-o", core, "-p",
              gpt ? "(hd0,gpt2)/boot/grub" : "(hd0,msdos1)/boot/grub", "biosdisk",
              gpt ? "part_gpt" : "part_msdos", "ext2"});
  const std::string core_text = ReadFile(core);
  Bytes core_bytes(core_text.begin(), core_text.end());
  out.core_sectors = (core_bytes.size() + 511) / 512;
  core_bytes.resize(out.core_sectors * 512, 0);
  out.core_sector = gpt ? l.bios_boot_start : 1;
  const uint64_t room = gpt ? l.bios_boot_sectors : l.boot_start - 1;
  if (out.core_sectors > room) {
    throw std::runtime_error(
        fmt::format("core.img ({} sectors) does not fit in {} sectors", out.core_sectors, room));
  }
  // What grub-setup writes: diskboot's first blocklist entry (the rest of core.img, right
  // after its first sector) and boot.img's pointer to core.img; boot.img takes the MBR's
  // first 440 bytes, the table stays.
  PutLe(core_bytes, 0x1F4, out.core_sector + 1, 8);
  PutLe(core_bytes, 0x1FC, out.core_sectors - 1, 2);
  PutLe(core_bytes, 0x1FE, 0x820, 2);
  WriteBytesAt(image, out.core_sector * 512, core_bytes);
  const std::string boot_text = ReadFile(std::string(kGrubDir) + "/boot.img");
  Bytes boot(boot_text.begin(), boot_text.begin() + 440);
  PutLe(boot, 0x5C, out.core_sector, 8);
  WriteBytesAt(image, 0, boot);
  return out;
}

// A loop device on a byte range of an image, detached by its own name when the test ends.
class OffsetLoop {
 public:
  OffsetLoop(const std::string& image, uint64_t offset, uint64_t size) {
    CommandResult r = RunCommand({"losetup", "--find", "--show", "--offset", std::to_string(offset),
                                  "--sizelimit", std::to_string(size), image});
    if (r.exit_code != 0) throw std::runtime_error(Describe({"losetup", image}, r));
    path_ = r.out.substr(0, r.out.find('\n'));
  }
  ~OffsetLoop() { RunCommand({"losetup", "--detach", path_}); }
  OffsetLoop(const OffsetLoop&) = delete;
  OffsetLoop& operator=(const OffsetLoop&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BuiltBootDisk BuildExtlinux(const std::string& image, const BootDiskLayout& l,
                            const std::string& work) {
  CommandResult sf = WriteWithSfdisk(
      image, fmt::format("label: dos\nlabel-id: 0x6a1b2c3e\nstart={}, size={}, type=83, bootable\n",
                         l.boot_start, l.boot_sectors));
  if (sf.exit_code != 0) throw std::runtime_error(Describe({"sfdisk", image}, sf));
  const std::string mbr = ReadFile(kSyslinuxMbr);
  WriteBytesAt(image, 0, Bytes(mbr.begin(), mbr.begin() + std::min<size_t>(mbr.size(), 440)));
  // extlinux writes the partition's start into the boot record (bsHidden) from the loop
  // device's offset, as it does from HDIO_GETGEO on a disk's partition.
  OffsetLoop loop(image, l.boot_start * 512, l.boot_sectors * 512);
  RunOrThrow({"mke2fs", "-q", "-F", "-t", "ext2", loop.path()});
  const std::string mnt = work + "/extlinux-mnt";
  fs::create_directories(mnt);
  {
    MountPoint mounted(loop.path(), mnt);
    const std::string dir = mnt + "/boot/extlinux";
    fs::create_directories(dir);
    for (const char* module : {"cat.c32", "poweroff.c32", "libcom32.c32", "libutil.c32"}) {
      fs::copy_file(std::string(kSyslinuxModules) + "/" + module, dir + "/" + module);
    }
    // SAY and DISPLAY do not reach the serial port in syslinux 6.04; cat.c32 does. After it,
    // the prompt times out into poweroff.c32, and QEMU stops.
    WriteFile(dir + "/marker.txt", l.marker + "\n");
    WriteFile(dir + "/extlinux.conf",
              "SERIAL 0 115200\nPROMPT 0\nTIMEOUT 1\nDEFAULT show\nONTIMEOUT poweroff\n"
              "LABEL show\n  COM32 cat.c32\n  APPEND marker.txt\n"
              "LABEL poweroff\n  COM32 poweroff.c32\n");
    RunOrThrow({"extlinux", "--install", dir});
    if (!mounted.Unmount()) throw std::runtime_error("cannot unmount " + mnt);
  }
  return BuiltBootDisk{1, 0, 0, 0};
}

}  // namespace

std::optional<std::string> WhyNoBootTest(BootLoader loader) {
  if (!InPath("qemu-system-x86_64") || !fs::exists(kSeabios)) {
    return "boot test skipped: qemu-system-x86_64 with SeaBIOS is not installed "
           "(Debian: qemu-system-x86)";
  }
  if (loader == BootLoader::kExtlinuxDos) {
    if (!InPath("extlinux") || !fs::exists(kSyslinuxMbr) ||
        !fs::exists(std::string(kSyslinuxModules) + "/cat.c32")) {
      return "boot test skipped: extlinux or syslinux's mbr.bin and modules are not installed "
             "(Debian: extlinux, syslinux-common)";
    }
    if (std::optional<std::string> why = WhyNoDeviceTests()) {
      return "boot test skipped: extlinux installs into a mounted partition: " + *why;
    }
    return std::nullopt;
  }
  if (!InPath("grub-mkimage") || !fs::exists(std::string(kGrubDir) + "/boot.img") ||
      !fs::exists(std::string(kGrubDir) + "/normal.mod")) {
    return "boot test skipped: GRUB's i386-pc images are not installed (Debian: grub-pc-bin, "
           "grub-common)";
  }
  if (!InPath("mke2fs")) return "boot test skipped: mke2fs is not installed (e2fsprogs)";
  return std::nullopt;
}

BuiltBootDisk BuildBootDisk(const std::string& image, const BootDiskLayout& layout,
                            const std::string& work) {
  CreateSparseFile(image, layout.disk_bytes);
  return layout.loader == BootLoader::kExtlinuxDos ? BuildExtlinux(image, layout, work)
                                                   : BuildGrub(image, layout, work);
}

QemuBoot BootInQemu(const std::string& image, const std::string& work, int timeout_seconds) {
  const std::string serial = work + "/serial.txt";
  fs::remove(serial);
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = RunCommand({"timeout", "--kill-after=5", std::to_string(timeout_seconds),
                                "qemu-system-x86_64", "-drive", "file=" + image + ",format=raw",
                                "-display", "none", "-serial", "file:" + serial, "-m", "128",
                                "-no-reboot", "-net", "none", "-boot", "reboot-timeout=500"});
  QemuBoot boot;
  boot.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  boot.exited = r.exit_code == 0;
  if (fs::exists(serial)) boot.serial = ReadFile(serial);
  return boot;
}

bool PrintedMarker(const QemuBoot& boot, const std::string& marker) {
  // GRUB's serial terminal prefixes its output with escape sequences; the marker ends a line.
  size_t at = boot.serial.find(marker);
  while (at != std::string::npos) {
    const size_t end = at + marker.size();
    if (end == boot.serial.size() || boot.serial[end] == '\r' || boot.serial[end] == '\n') {
      return true;
    }
    at = boot.serial.find(marker, at + 1);
  }
  return false;
}

}  // namespace partalign::test
