// SPDX-License-Identifier: GPL-3.0-or-later
// The disks of a randomised sweep (tests/tools/): one image and one loop device per logical
// sector size, resized for every case (truncate + losetup --set-capacity) instead of attached
// anew, and wiped and detached at the end, by name.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign::test {

/// Cases and agreements per tool.
struct SweepTally {
  int cases = 0;
  int agree = 0;
};

/// The summary every sweep ends with: "NAME sweep: seed S, N cases", then TOOL CASES AGREE RATE.
void PrintSweepTally(const std::string& name, uint64_t seed, int cases, bool interrupted,
                     const std::map<std::string, SweepTally>& tally);

/// What one case of a sweep found.
struct SweepCase {
  std::string header;                  ///< what the case is ("--assume ... --layout '...'")
  std::map<std::string, bool> agreed;  ///< per tool
  std::vector<std::string> lines;      ///< how it disagreed
};

/// The loop of a sweep: up to `cases` cases, until `stop` turns non-zero; `run(n, &c)` sets
/// c.header first, then runs case n (it may throw: the case is then an error). Each case is
/// counted into `tally` and printed when it disagrees (every case with `verbose`). Returns the
/// cases run and the cases that disagreed or failed.
std::pair<int, int> RunSweepCases(int cases, bool verbose, const volatile sig_atomic_t& stop,
                                  std::map<std::string, SweepTally>* tally,
                                  const std::function<void(int, SweepCase*)>& run);

class SweepDisks {
 public:
  SweepDisks() = default;
  SweepDisks(const SweepDisks&) = delete;
  SweepDisks& operator=(const SweepDisks&) = delete;
  ~SweepDisks();

  /// A loop device of `logical_sector_size` holding `size_bytes` (sparse). Throws on failure.
  std::string Prepare(uint64_t logical_sector_size, uint64_t size_bytes);
  /// A directory for the case's scratch files.
  const std::string& scratch() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::map<uint64_t, std::unique_ptr<LoopDevice>> loops_;
};

}  // namespace partalign::test
