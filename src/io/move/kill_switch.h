// SPDX-License-Identifier: GPL-3.0-or-later
// TEST ONLY. PARTALIGN_TEST_KILL_AFTER=[PHASE:]N makes the mover kill its own process with
// SIGKILL at its N-th write or flush (device and journal alike; counting only during PHASE when
// given: scan, move, verify, table, rollback, rollback-table, rollback-verify). The count is
// per process: apply runs one move per step, and the N-th point is counted across all of them,
// as is the total the process reports. A write that is hit is half done first - a torn write.
// Crash tests use it to stop the mover at a chosen instant deterministically; documented in
// partalign(8), ENVIRONMENT.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "io/block/block_io.h"
#include "partalign/util/result.h"

namespace partalign {

class KillSwitch {
 public:
  /// nullptr when PARTALIGN_TEST_KILL_AFTER is not set; an error when it is malformed.
  /// `already_counted`: the points earlier moves of this process passed.
  static Result<std::unique_ptr<KillSwitch>> FromEnvironment(uint64_t already_counted = 0);

  /// With a phase, nothing counts until the mover enters that phase. Counting starts after
  /// `already_counted` points, so that the N-th point is the N-th of the whole process.
  KillSwitch(std::string phase, uint64_t count, uint64_t already_counted = 0)
      : phase_(std::move(phase)),
        count_(count),
        active_(phase_.empty()),
        counted_(already_counted) {}

  void EnterPhase(const char* phase);
  /// Counts `ops` operations; returns which of them (0-based) must die, or nullopt.
  std::optional<uint64_t> Count(uint64_t ops);
  /// Operations counted so far, `already_counted` included (for calibrating kill points in
  /// scripts).
  uint64_t counted() const { return counted_.load(); }
  [[noreturn]] static void Die();

 private:
  const std::string phase_;  ///< empty: every phase
  const uint64_t count_;
  std::mutex phase_mutex_;
  bool active_;
  std::atomic<uint64_t> counted_{0};
};

/// Wraps a BlockIo: writes and flushes go through the kill switch.
class KillSwitchIo final : public BlockIo {
 public:
  KillSwitchIo(BlockIo& inner, KillSwitch& kill_switch) : inner_(inner), switch_(kill_switch) {}
  Status Read(std::span<const IoSpan> requests) override { return inner_.Read(requests); }
  Status Write(std::span<const IoSpan> requests) override;
  Status Flush() override;
  uint64_t size_bytes() const override { return inner_.size_bytes(); }
  const std::string& name() const override { return inner_.name(); }

 private:
  BlockIo& inner_;
  KillSwitch& switch_;
};

}  // namespace partalign
