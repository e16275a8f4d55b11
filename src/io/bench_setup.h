// Everything the benchmark needs from the system before the first I/O: the target opened with
// O_DIRECT, the range the I/Os may use, the write guard, and an engine (io_uring, or pread/
// pwrite when io_uring is unavailable).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "io/target.h"
#include "partalign/bench_engine.h"
#include "partalign/bench_report.h"
#include "partalign/bench_runner.h"
#include "partalign/result.h"

namespace partalign {

struct BenchTarget {
  Target target;  ///< opened with O_DIRECT; read-write only for --write
  BenchTargetInfo info;
  BenchRange range;
};

/// Opens `path` for the benchmark. With `write`, block devices are opened exclusively (O_EXCL)
/// so that nobody mounts them while the benchmark writes.
Result<BenchTarget> OpenBenchTarget(const std::string& path, bool write,
                                    const std::string& sysfs_root = "/sys");

/// Why `bench --write` must not write to `path`, or nullopt when it may: a filesystem, RAID,
/// crypto or swap signature or a partition table (libblkid), a whole disk with partitions, or
/// a device in use. The sentence names what was found.
Result<std::optional<std::string>> WriteRefusal(const std::string& path,
                                                const std::string& sysfs_root = "/sys");

enum class EngineChoice { kAuto, kUring, kPsync };

std::optional<EngineChoice> ParseEngineChoice(std::string_view text);

struct BenchEngineSetup {
  std::unique_ptr<BenchEngine> engine;
  /// Why the engine is not the one asked for ("io_uring is not available: ..."), or empty.
  std::string fallback_reason;
};

/// kAuto: io_uring, or psync when io_uring cannot be set up. The engine keeps one buffer pool
/// of `pool_bytes` (the largest queue depth x block size of the run).
Result<BenchEngineSetup> MakeBenchEngine(EngineChoice choice, const Target& target,
                                         uint32_t max_queue_depth, uint64_t pool_bytes);

}  // namespace partalign
