// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/partitioned_loop.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/table/fdisk_write.h"
#include "support/run_command.h"

namespace partalign::test {
std::vector<std::string> ApplyArgs(const PartitionedLoop& disk, const std::string& plan,
                                   const std::vector<std::string>& extra) {
  std::vector<std::string> args{"apply",         "--yes",
                                "--backup-dir",  disk.File("backups"),
                                "--journal-dir", disk.File("journals")};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(plan);
  return args;
}

void SfdiskImage(const std::string& image, const std::string& script, unsigned sector_size) {
  // sfdisk 2.38 has no --sector-size; WriteSfdiskScript applies scripts as sfdisk does
  // (byte-identical, tests/io/table/fdisk_write_test.cc) with any sector size.
  Result<std::vector<std::string>> written =
      WriteSfdiskScript(image, script, {.sector_size = sector_size});
  if (!written) throw std::runtime_error(written.error().message);
}

PartitionedLoop::PartitionedLoop(const std::string& sfdisk_script, unsigned sector_size,
                                 unsigned long long size_bytes)
    : image_(dir_.File("disk.img")), sector_size_(sector_size) {
  CreateSparseFile(image_, size_bytes);
  SfdiskImage(image_, sfdisk_script, sector_size);
  loop_ = std::make_unique<LoopDevice>(image_, sector_size);
  AddKernelPartitions(*loop_, sector_size);
}

const std::string& PartitionedLoop::Reattach() {
  // Attached before the old one goes, so that it gets another number.
  auto next = std::make_unique<LoopDevice>(image_, sector_size_);
  loop_ = std::move(next);
  AddKernelPartitions(*loop_, sector_size_);
  return loop_->path();
}

void AddKernelPartitions(const LoopDevice& loop, unsigned sector_size) {
  // partx registers a DOS extended partition as 1 KiB, which a 4096-byte-sector device
  // rejects; the kernel's own parser uses one sector there (block/partitions/msdos.c).
  CommandResult list = RunCommand({"sfdisk", "-J", loop.path()});
  nlohmann::json table = nlohmann::json::parse(list.out, nullptr, false);
  if (list.exit_code != 0 || table.is_discarded()) throw std::runtime_error(list.err);
  // The first logical partition may start right after its EBR: the extended partition is then
  // registered up to it only (BLKPG refuses overlapping partitions), as apply does.
  unsigned long long first_logical = ~0ull;
  for (const nlohmann::json& p : table["partitiontable"]["partitions"]) {
    std::string node = p["node"];
    if (std::stoul(node.substr(node.find_last_not_of("0123456789") + 1)) >= 5) {
      first_logical = std::min(first_logical, p["start"].get<unsigned long long>());
    }
  }
  for (const nlohmann::json& p : table["partitiontable"]["partitions"]) {
    std::string node = p["node"];
    std::string number = node.substr(loop.path().size() + 1);
    if (p["type"] == "5" || p["type"] == "f" || p["type"] == "85") {
      unsigned long long units = sector_size / 512;
      const unsigned long long start = p["start"].get<unsigned long long>();
      unsigned long long size = units < 2 ? 2 : units;
      if (first_logical > start) size = std::min(size, (first_logical - start) * units);
      RunOrThrow(
          {"addpart", loop.path(), number, std::to_string(start * units), std::to_string(size)});
    } else {
      RunOrThrow({"partx", "--add", "--nr", number, loop.path()});
    }
  }
}

std::string PartitionedLoop::Snapshot(const std::string& name) const {
  std::string copy = dir_.File(name);
  RunOrThrow({"sync"});
  RunOrThrow({"cp", "--sparse=always", image_, copy});
  return copy;
}

nlohmann::json SfdiskJson(const std::string& target) {
  CommandResult r = RunCommand({"sfdisk", "-J", target});
  if (r.exit_code != 0) throw std::runtime_error("sfdisk -J '" + target + "' failed: " + r.err);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("partitiontable")) {
    throw std::runtime_error("sfdisk -J '" + target + "' printed no table: " + r.out);
  }
  return j["partitiontable"];
}

std::pair<uint64_t, uint64_t> KernelStartSize(const LoopDevice& loop, int number) {
  const std::string dir =
      "/sys/block/" + loop.name() + "/" + loop.name() + "p" + std::to_string(number);
  uint64_t start = 0, size = 0;
  std::ifstream(dir + "/start") >> start;
  std::ifstream(dir + "/size") >> size;
  return {start, size};
}

std::string CmpFiles(const std::string& a, const std::string& b) {
  RunCommand({"sync"});
  CommandResult r = RunCommand({"cmp", a, b});
  if (r.exit_code == 0) return "";
  return "cmp " + a + " " + b + ": " + r.out + r.err;
}

}  // namespace partalign::test
