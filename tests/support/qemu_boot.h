// SPDX-License-Identifier: GPL-3.0-or-later
// Boot tests in QEMU (docs/boot-records.md): disk images that boot GRUB 2 or EXTLINUX on BIOS
// as a distribution's installer leaves them, and a boot in qemu-system-x86_64 (TCG, SeaBIOS)
// that returns what the serial port printed. The loaders print a marker from a config file on
// the partition that moves, so a disk that prints it after a move found its files at the new
// place. Shared by the boot domain's tests and apply's (a disk built here, a plan applied to
// it, a boot).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "support/device_test.h"

namespace partalign::test {

enum class BootLoader {
  kGrubDos,     ///< GRUB 2: boot.img in the MBR, core.img in the DOS embedding area
  kGrubGpt,     ///< GRUB 2: boot.img in the protective MBR, core.img in a BIOS boot partition
  kExtlinuxDos  ///< syslinux's mbr.bin, EXTLINUX in the active partition's boot record
};

struct BootDiskLayout {
  BootLoader loader = BootLoader::kGrubDos;
  uint64_t disk_bytes = 64ull << 20;
  /// The partition holding the loader's files and config: DOS partition 1, GPT partition 2
  /// (ext2), in 512-byte sectors.
  uint64_t boot_start = 63;
  uint64_t boot_sectors = 40000;
  /// GPT: the BIOS boot partition (partition 1).
  uint64_t bios_boot_start = 34;
  uint64_t bios_boot_sectors = 2014;
  std::string marker = "PARTALIGN-BOOT-MARKER";
};

struct BuiltBootDisk {
  uint32_t boot_partition = 1;
  uint32_t bios_boot_partition = 0;  ///< 0: none
  uint64_t core_sector = 0;          ///< GRUB: core.img's first sector
  uint64_t core_sectors = 0;         ///< GRUB: core.img's length
};

/// Why a boot test with `loader` cannot run here, or nullopt: qemu-system-x86_64 and SeaBIOS;
/// for GRUB grub-mkimage, the i386-pc images and modules and mke2fs; for EXTLINUX extlinux,
/// syslinux's mbr.bin and modules, and root (it installs into a mounted partition).
std::optional<std::string> WhyNoBootTest(BootLoader loader);

/// Builds the disk image `image` (a new file) for `layout`; `work` is a scratch directory.
/// GRUB needs no root: the filesystem comes from `mke2fs -d`, core.img from grub-mkimage, and
/// the sectors are written as grub-setup writes them (boot.img's pointer, diskboot's
/// blocklist). EXTLINUX installs into the partition mounted through a loop device at its
/// offset (from which extlinux takes the start it writes). Throws on failure.
BuiltBootDisk BuildBootDisk(const std::string& image, const BootDiskLayout& layout,
                            const std::string& work);

struct QemuBoot {
  std::string serial;   ///< what the guest printed on its first serial port
  bool exited = false;  ///< QEMU stopped by itself (power-off, or a reboot under -no-reboot)
  double seconds = 0;
};

/// Boots `image` in qemu-system-x86_64: TCG, SeaBIOS, 128 MiB, no network, -no-reboot, a
/// failed boot rebooting (and so exiting) after half a second; at most `timeout_seconds`.
QemuBoot BootInQemu(const std::string& image, const std::string& work, int timeout_seconds = 60);

/// The serial output holds `marker` on a line of its own.
bool PrintedMarker(const QemuBoot& boot, const std::string& marker);

}  // namespace partalign::test

/// Skips a boot test with the reason, or fails it under PARTALIGN_REQUIRE_DEVICE_TESTS=1.
#define PARTALIGN_REQUIRE_BOOT_TEST(loader) \
  PARTALIGN_SKIP_WITH_REASON(::partalign::test::WhyNoBootTest(loader))
