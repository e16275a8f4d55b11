// SPDX-License-Identifier: GPL-3.0-or-later
// Everything the benchmark needs from the system before the first I/O: the target opened with
// O_DIRECT, the ranges the I/Os may use, the write and rewrite guards, and an engine (io_uring,
// or pread/pwrite when io_uring is unavailable).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "io/device/target.h"
#include "partalign/bench/bench_engine.h"
#include "partalign/bench/bench_report.h"
#include "partalign/bench/bench_runner.h"
#include "partalign/util/result.h"

namespace partalign {

/// What the benchmark does to its target.
enum class BenchAccess {
  kRead,
  /// bench --write: new data, where DecideWrite allows it.
  kWrite,
  /// bench --rewrite, apply --bench: the bytes read written back, on a target nobody uses.
  kRewrite,
};

struct BenchTarget {
  Target target;         ///< opened with O_DIRECT; read-write for writes and rewrites
  BenchTargetInfo info;  ///< describes ranges[0]
  std::vector<BenchRange> ranges;
};

/// Opens `path` for the benchmark; the I/Os go to `ranges` (the places of the run's cells), or
/// the whole target. For writes, block devices are opened exclusively (O_EXCL) so that nobody
/// mounts them meanwhile; for rewrites, image files and block devices are also locked (flock,
/// as apply and sfdisk --lock), unless `held`: the caller itself holds the disk that way (apply
/// --bench after the change), and a second O_EXCL open or lock would fail against it.
Result<BenchTarget> OpenBenchTarget(const std::string& path, BenchAccess access,
                                    std::vector<BenchRange> ranges = {}, bool held = false,
                                    const std::string& sysfs_root = "/sys");

/// Why `bench --rewrite` may not rewrite `path` (one sentence: a partition mounted, active swap,
/// a holder, a loop device on it), or nullopt when nobody uses it. The exclusive open and the
/// lock of OpenBenchTarget keep it so for the run.
Result<std::optional<std::string>> RewriteRefusal(const std::string& path);

/// Whether and where `bench --write` may write.
struct WriteDecision {
  /// Set when writing is refused: one sentence naming what was found.
  std::optional<std::string> refusal;
  /// Set when only part of the target may be written: the largest unallocated region of a
  /// disk (or disk image) with a partition table.
  std::optional<BenchRange> range;
  /// For the user when `range` is set: "writes go only into unallocated space: ...".
  std::string note;
};

/// Writes are allowed on a target without any libblkid signature (filesystem, RAID, crypto,
/// swap, partition table) and, on a disk or disk image with a partition table and nothing
/// else, only into its largest free region (libfdisk's, away from every table area). Refused:
/// anything with a superblock, a partition or image holding a table, a disk in use (mounted,
/// swap, holders) or with partition nodes but no table, a table without free space.
Result<WriteDecision> DecideWrite(const std::string& path, const std::string& sysfs_root = "/sys");

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
