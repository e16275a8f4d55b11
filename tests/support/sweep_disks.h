// The disks of a randomised sweep (tests/tools/): one image and one loop device per logical
// sector size, resized for every case (truncate + losetup --set-capacity) instead of attached
// anew, and wiped and detached at the end, by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

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
