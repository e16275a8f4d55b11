// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/bench/bench_setup.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "io/bench/psync_engine.h"
#include "io/bench/uring_engine.h"
#include "io/device/blkid_probe.h"
#include "io/device/in_use.h"
#include "io/device/sysfs_identity.h"
#include "io/table/fdisk_table.h"
#include "io/util/unique_fd.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Partition nodes of the whole disk `major:minor`: sysfs lists each as a subdirectory of the
// disk's directory that has a "partition" attribute.
std::vector<std::string> PartitionsOf(const std::string& sysfs_root, uint32_t major,
                                      uint32_t minor) {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path dir = fs::path(sysfs_root) / "dev/block" / fmt::format("{}:{}", major, minor);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code exists_ec;
    if (fs::exists(it->path() / "partition", exists_ec)) {
      names.push_back(it->path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text;
}

std::string DescribeSignature(const BlkidSignature& s) {
  std::string text = s.type + " " + (s.usage.empty() ? "signature" : s.usage);
  if (s.offset_bytes) text += fmt::format(" at byte {}", *s.offset_bytes);
  return text;
}

// The sentence every refusal ends with: where --write may write instead.
constexpr const char* kWhereWritesGo =
    "bench --write writes only to an image or partition without any signature (see wipefs) "
    "or into the unallocated space of a disk";

// Unallocated space smaller than this is not worth a benchmark (one 1 MiB sequential block).
constexpr uint64_t kMinFreeBytes = kMiB;

bool Overlaps(uint64_t start, uint64_t bytes, uint64_t other_start, uint64_t other_bytes) {
  return start < other_start + other_bytes && other_start < start + bytes;
}

// The largest free region of the table on `path`, clear of every table area.
template <typename Refuse>
Result<WriteDecision> WriteIntoFreeSpace(const std::string& path, const std::string& tables,
                                         Refuse refuse, WriteDecision decision) {
  Result<TableRead> read =
      ReadPartitionTable(path, {.probe_contents = false, .partition_node = true});
  if (!read) return read.error();
  const PartitionTable& t = read->table;
  std::optional<BenchRange> best;
  for (const FreeRegion& f : t.free_regions) {
    const BenchRange r{f.start_sector * t.sector_size, f.size_sectors * t.sector_size};
    const bool clear = std::none_of(t.areas.begin(), t.areas.end(), [&](const TableArea& a) {
      return Overlaps(r.start, r.bytes, a.offset_bytes, a.size_bytes);
    });
    if (clear && r.bytes >= kMinFreeBytes && (!best || r.bytes > best->bytes)) best = r;
  }
  if (!best) return refuse("it holds " + tables + " and no unallocated space of 1 MiB or more");
  decision.range = best;
  decision.note = fmt::format(
      "'{}' holds {}: writes go only into its largest unallocated region, {} at byte {}", path,
      tables, FormatSize(best->bytes), best->start);
  return decision;
}

}  // namespace

Result<BenchTarget> OpenBenchTarget(const std::string& path, BenchAccess access,
                                    std::vector<BenchRange> ranges, bool held,
                                    const std::string& sysfs_root) {
  const bool write = access != BenchAccess::kRead;
  Result<Target> target =
      OpenTarget(path, {.write = write, .exclusive = write && !held, .direct = true});
  if (!target) return target.error();
  if (access == BenchAccess::kRewrite && !held) {
    if (Status s = LockExclusive(*target); !s) return s.error();
  }
  BenchTarget bench{std::move(*target), {}, std::move(ranges)};
  const Target& t = bench.target;
  bench.info.path = path;
  bench.info.kind = "image file";
  if (t.kind == TargetKind::kBlockDevice) {
    Result<Identity> id = ReadSysfsIdentity(sysfs_root, t.major, t.minor);
    bench.info.kind = id && id->is_partition ? "partition" : "disk";
  }
  bench.info.size_bytes = t.size_bytes;
  bench.info.logical_sector_size = t.logical_sector_size;
  if (bench.ranges.empty()) bench.ranges.push_back({0, t.size_bytes});
  for (const BenchRange& range : bench.ranges) {
    if (range.start + range.bytes > t.size_bytes) {
      return MakeError(fmt::format("the benchmark range ends past the end of '{}'", path));
    }
    if (range.origin > range.start) {
      return MakeError(
          fmt::format("the benchmark's offset origin lies after its range in '{}'", path));
    }
  }
  bench.info.range_start_bytes = bench.ranges.front().start;
  bench.info.range_bytes = bench.ranges.front().bytes;
  bench.info.offset_origin_bytes = bench.ranges.front().origin;
  return bench;
}

Result<std::optional<std::string>> RewriteRefusal(const std::string& path) {
  Result<std::vector<DiskUser>> users = FindDiskUsers(path);
  if (!users) return users.error();
  if (users->empty()) return std::optional<std::string>();
  std::string found;
  for (const DiskUser& u : *users) found += (found.empty() ? "" : "; ") + Describe(u);
  return std::optional<std::string>(
      fmt::format("refusing to rewrite '{}' while it is in use: {}", path, found));
}

Result<WriteDecision> DecideWrite(const std::string& path, const std::string& sysfs_root) {
  WriteDecision decision;
  auto refuse = [&](std::string why) {
    decision.refusal = fmt::format("refusing to write to '{}': {}; {}", path, why, kWhereWritesGo);
    return decision;
  };
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  const bool block_device = target->kind == TargetKind::kBlockDevice;
  bool partition = false;
  if (block_device) {
    // O_EXCL on a block device fails with EBUSY while it (or a partition of it) is mounted,
    // active swap or held by device-mapper, md, ...
    UniqueFd exclusive(::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC));
    if (!exclusive.valid() && errno == EBUSY) {
      return refuse("it is in use (mounted, active swap, or held by another device)");
    }
    Result<Identity> id = ReadSysfsIdentity(sysfs_root, target->major, target->minor);
    partition = id && id->is_partition;
  }
  Result<std::vector<BlkidSignature>> signatures =
      ProbeBlkidSignatures(target->fd.get(), path, target->logical_sector_size);
  if (!signatures) return signatures.error();
  std::vector<std::string> found;
  bool only_tables = true;
  for (const BlkidSignature& s : *signatures) {
    found.push_back(DescribeSignature(s));
    only_tables &= s.usage == "partition table";
  }
  if (!found.empty() && (!only_tables || partition)) return refuse("it holds " + Join(found));
  if (!found.empty()) return WriteIntoFreeSpace(path, Join(found), refuse, decision);
  if (block_device && !partition) {
    std::vector<std::string> parts = PartitionsOf(sysfs_root, target->major, target->minor);
    if (!parts.empty()) {
      return refuse(
          fmt::format("it is a disk with partitions ({}) but no partition table", Join(parts)));
    }
  }
  return decision;
}

std::optional<EngineChoice> ParseEngineChoice(std::string_view text) {
  if (text == "auto") return EngineChoice::kAuto;
  if (text == "io_uring") return EngineChoice::kUring;
  if (text == "psync") return EngineChoice::kPsync;
  return std::nullopt;
}

Result<BenchEngineSetup> MakeBenchEngine(EngineChoice choice, const Target& target,
                                         uint32_t max_queue_depth, uint64_t pool_bytes) {
  BenchEngineSetup setup;
  if (choice != EngineChoice::kPsync) {
    Result<std::unique_ptr<UringEngine>> uring =
        UringEngine::Create(target.fd.get(), target.path, max_queue_depth, pool_bytes);
    if (uring) {
      setup.engine = std::move(*uring);
      return setup;
    }
    if (choice == EngineChoice::kUring) return uring.error();
    setup.fallback_reason = uring.error().message;
  }
  Result<std::unique_ptr<PsyncEngine>> psync =
      PsyncEngine::Create(target.fd.get(), target.path, max_queue_depth, pool_bytes);
  if (!psync) return psync.error();
  setup.engine = std::move(*psync);
  return setup;
}

}  // namespace partalign
