// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/moved_disk.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include "io/device/target.h"
#include "io/util/xxhash_digest.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign::test {

MovedDisk::MovedDisk(const std::string& sfdisk_script, unsigned sector_size,
                     unsigned long long size_bytes)
    : image_(dir_.File("disk.img")), sector_size_(sector_size) {
  CreateSparseFile(image_, size_bytes);
  SfdiskImage(image_, sfdisk_script, sector_size);
  loop_ = std::make_unique<LoopDevice>(image_, sector_size);
  AddKernelPartitions(*loop_, sector_size);
}

void MovedDisk::Reattach(unsigned sector_size, bool partitions) {
  loop_.reset();  // deletes the partition nodes, detaches
  RunOrThrow({"sync"});
  loop_ = std::make_unique<LoopDevice>(image_, sector_size);
  sector_size_ = sector_size;
  if (partitions) AddKernelPartitions(*loop_, sector_size);
}

std::string MovedDisk::Copy(const std::string& name) const {
  std::string copy = dir_.File(name);
  RunOrThrow({"sync"});
  RunOrThrow({"cp", "--sparse=always", image_, copy});
  return copy;
}

FileSet MakeFiles(const std::string& seed) {
  FileSet files;
  const std::vector<std::pair<std::string, size_t>> shapes{
      {"small.txt", 1000}, {"blocks.bin", 300 * 1024 + 7}, {"dir/large.bin", 3 * 1024 * 1024}};
  for (const auto& [name, size] : shapes) {
    const std::string key = seed + "/" + name;
    std::seed_seq s(key.begin(), key.end());
    std::mt19937 rng(s);
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
    files[name] = std::move(bytes);
  }
  return files;
}

namespace {

// The test kernel has no vfat driver (environment.md): vfat files go in and out with mtools.
bool IsVfat(const std::string& node) {
  return RunCommand({"blkid", "-o", "value", "-s", "TYPE", node}).out == "vfat\n";
}

// `name` of `files` through mtools: "::/dir/large.bin".
std::string MtoolsPath(const std::string& name) { return "::/" + name; }

}  // namespace

void MakeFilesystemWithFiles(const std::vector<std::string>& mkfs, const std::string& node,
                             const std::string& mount_dir, const FileSet& files) {
  std::vector<std::string> argv = mkfs;
  argv.push_back(node);
  RunOrThrow(argv);
  std::filesystem::create_directories(mount_dir);
  if (IsVfat(node)) {
    for (const auto& [name, bytes] : files) {
      const std::filesystem::path p = std::filesystem::path(mount_dir) / name;
      std::filesystem::create_directories(p.parent_path());
      WriteFile(p.string(), bytes);
      const std::string parent = std::filesystem::path(name).parent_path().string();
      if (!parent.empty()) {
        RunCommand({"mmd", "-D", "s", "-i", node, MtoolsPath(parent)});  // exists: fine
      }
      RunOrThrow({"mcopy", "-o", "-i", node, p.string(), MtoolsPath(name)});
    }
    return;
  }
  MountPoint mount(node, mount_dir);
  for (const auto& [name, bytes] : files) {
    std::filesystem::path p = std::filesystem::path(mount_dir) / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }
  if (!mount.Unmount()) throw std::runtime_error("cannot unmount " + mount_dir);
}

std::string CheckFiles(const std::string& node, const std::string& mount_dir,
                       const FileSet& files) {
  std::filesystem::create_directories(mount_dir);
  if (IsVfat(node)) {
    for (const auto& [name, bytes] : files) {
      const std::string copy = mount_dir + "/copy.bin";
      std::filesystem::remove(copy);
      CommandResult r = RunCommand({"mcopy", "-n", "-i", node, MtoolsPath(name), copy});
      if (r.exit_code != 0) return "mcopy cannot read " + name + ": " + r.err;
      const std::string read = ReadFile(copy);
      if (read != bytes) return name + " differs (" + std::to_string(read.size()) + " bytes read)";
    }
    return "";
  }
  try {
    MountPoint mount(node, mount_dir, "ro");
    for (const auto& [name, bytes] : files) {
      const std::string read = ReadFile(mount_dir + "/" + name);
      if (read != bytes) return name + " differs (" + std::to_string(read.size()) + " bytes read)";
    }
  } catch (const std::exception& e) {
    return std::string("cannot mount: ") + e.what();
  }
  return "";
}

std::string DigestBytes(const std::string& path, uint64_t offset, uint64_t length) {
  Result<Target> target = OpenTarget(path);
  if (!target) throw std::runtime_error(target.error().message);
  Xxh64Digest digest;
  std::vector<char> buffer(1 << 20);
  for (uint64_t done = 0; done < length;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length - done));
    Result<size_t> got = ReadAt(target->fd.get(), buffer.data(), want, offset + done, path);
    if (!got || *got != want) throw std::runtime_error("short read of " + path);
    digest.Update(buffer.data(), want);
    done += want;
  }
  return digest.Hex();
}

}  // namespace partalign::test
