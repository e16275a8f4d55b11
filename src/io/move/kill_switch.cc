// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/kill_switch.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

/// A torn write keeps this alignment so that O_DIRECT accepts the half that is written.
constexpr uint64_t kTornAlignBytes = 4096;

}  // namespace

Result<std::unique_ptr<KillSwitch>> KillSwitch::FromEnvironment(uint64_t already_counted) {
  const char* value = std::getenv("PARTALIGN_TEST_KILL_AFTER");
  if (value == nullptr || *value == '\0') return std::unique_ptr<KillSwitch>();
  std::string text(value);
  std::string phase;
  if (size_t colon = text.rfind(':'); colon != std::string::npos) {
    phase = text.substr(0, colon);
    text = text.substr(colon + 1);
  }
  Result<uint64_t> count = ParseUint(text);
  if (!count || *count == 0) {
    return MakeError(
        fmt::format("PARTALIGN_TEST_KILL_AFTER='{}': expected [PHASE:]N with N >= 1", value));
  }
  return std::make_unique<KillSwitch>(phase, *count, already_counted);
}

void KillSwitch::EnterPhase(const char* phase) {
  std::lock_guard lock(phase_mutex_);
  active_ = phase_.empty() || phase_ == phase;
}

std::optional<uint64_t> KillSwitch::Count(uint64_t ops) {
  {
    std::lock_guard lock(phase_mutex_);
    if (!active_) return std::nullopt;
  }
  const uint64_t before = counted_.fetch_add(ops);
  if (before < count_ && before + ops >= count_) return count_ - before - 1;
  return std::nullopt;
}

void KillSwitch::Die() {
  ::raise(SIGKILL);
  ::_exit(137);  // not reached
}

Status KillSwitchIo::Write(std::span<const IoSpan> requests) {
  std::optional<uint64_t> victim = switch_.Count(requests.size());
  if (!victim) return inner_.Write(requests);
  // Everything before the victim completes; the victim is half written; then the process dies.
  (void)inner_.Write(requests.first(*victim));
  IoSpan half = requests[*victim];
  half.length = half.length / 2 / kTornAlignBytes * kTornAlignBytes;
  if (half.length > 0) (void)inner_.Write({&half, 1});
  KillSwitch::Die();
}

Status KillSwitchIo::Flush() {
  if (switch_.Count(1)) KillSwitch::Die();
  return inner_.Flush();
}

}  // namespace partalign
