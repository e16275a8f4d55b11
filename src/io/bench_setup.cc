#include "io/bench_setup.h"

#include <fcntl.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "io/blkid_probe.h"
#include "io/psync_engine.h"
#include "io/sysfs_identity.h"
#include "io/unique_fd.h"
#include "io/uring_engine.h"

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
    "or to a disk without partitions";

}  // namespace

Result<BenchTarget> OpenBenchTarget(const std::string& path, bool write,
                                    const std::string& sysfs_root) {
  Result<Target> target = OpenTarget(path, {.write = write, .exclusive = write, .direct = true});
  if (!target) return target.error();
  BenchTarget bench{std::move(*target), {}, {}};
  const Target& t = bench.target;
  bench.info.path = path;
  bench.info.kind = "image file";
  if (t.kind == TargetKind::kBlockDevice) {
    Result<Identity> id = ReadSysfsIdentity(sysfs_root, t.major, t.minor);
    bench.info.kind = id && id->is_partition ? "partition" : "disk";
  }
  bench.info.size_bytes = t.size_bytes;
  bench.info.logical_sector_size = t.logical_sector_size;
  // The whole target. (A disk's unallocated space only, once the partition-table reader is
  // there; until then --write refuses disks with partitions, see WriteRefusal.)
  bench.range = {0, t.size_bytes};
  bench.info.range_start_bytes = bench.range.start;
  bench.info.range_bytes = bench.range.bytes;
  return bench;
}

Result<std::optional<std::string>> WriteRefusal(const std::string& path,
                                                const std::string& sysfs_root) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  if (target->kind == TargetKind::kBlockDevice) {
    // O_EXCL on a block device fails with EBUSY while it is mounted or held (dm, md, swap).
    UniqueFd exclusive(::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC));
    if (!exclusive.valid() && errno == EBUSY) {
      return std::optional<std::string>(fmt::format(
          "refusing to write to '{}': it is in use (mounted, active swap, or held by another "
          "device); {}",
          path, kWhereWritesGo));
    }
  }
  Result<std::vector<BlkidSignature>> signatures =
      ProbeBlkidSignatures(target->fd.get(), path, target->logical_sector_size);
  if (!signatures) return signatures.error();
  if (!signatures->empty()) {
    std::vector<std::string> found;
    bool table = false;
    for (const BlkidSignature& s : *signatures) {
      found.push_back(DescribeSignature(s));
      table |= s.usage == "partition table";
    }
    std::string why = fmt::format("refusing to write to '{}': it holds {}", path, Join(found));
    if (table && target->kind == TargetKind::kBlockDevice) {
      why +=
          "; writing into a disk's unallocated space needs its free-space map, which this "
          "version cannot read yet";
    }
    return std::optional<std::string>(why + "; " + kWhereWritesGo);
  }
  if (target->kind == TargetKind::kBlockDevice) {
    std::vector<std::string> parts = PartitionsOf(sysfs_root, target->major, target->minor);
    if (!parts.empty()) {
      return std::optional<std::string>(
          fmt::format("refusing to write to '{}': it is a disk with partitions ({}); {}", path,
                      Join(parts), kWhereWritesGo));
    }
  }
  return std::optional<std::string>();
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
