// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/sweep_disks.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "support/run_command.h"
#include "support/tool_oracle.h"

namespace partalign::test {

void PrintSweepTally(const std::string& name, uint64_t seed, int cases, bool interrupted,
                     const std::map<std::string, SweepTally>& tally) {
  std::printf("\n%s sweep: seed %llu, %d cases%s\n", name.c_str(),
              static_cast<unsigned long long>(seed), cases, interrupted ? " (interrupted)" : "");
  std::printf("%-16s %6s %6s %8s\n", "TOOL", "CASES", "AGREE", "RATE");
  for (const auto& [tool, t] : tally) {
    std::printf("%-16s %6d %6d %7.2f%%\n", tool.c_str(), t.cases, t.agree,
                t.cases ? 100.0 * t.agree / t.cases : 0.0);
  }
}

std::pair<int, int> RunSweepCases(int cases, bool verbose, const volatile sig_atomic_t& stop,
                                  std::map<std::string, SweepTally>* tally,
                                  const std::function<void(int, SweepCase*)>& run) {
  int ran = 0, failures = 0;
  for (int n = 1; n <= cases && !stop; ++n) {
    SweepCase c;
    try {
      run(n, &c);
      ++ran;
      bool all = true;
      for (const auto& [tool, agreed] : c.agreed) {
        ++(*tally)[tool].cases;
        if (agreed) ++(*tally)[tool].agree;
        all &= agreed;
      }
      if (!all) ++failures;
      if (verbose || !all) {
        std::printf("case %d: %s -> %s\n", n, c.header.c_str(), all ? "agree" : "DISAGREE");
      }
      for (const std::string& line : c.lines) std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    } catch (const std::exception& ex) {
      std::printf("case %d: %s -> ERROR %s\n", n, c.header.c_str(), ex.what());
      ++failures;
    }
  }
  return {ran, failures};
}

SweepDisks::~SweepDisks() {
  for (auto& [lbs, loop] : loops_) {
    try {
      WipeDevice(loop->path());
    } catch (const std::exception&) {
      // The loop device is detached by its own destructor all the same.
    }
  }
}

std::string SweepDisks::Prepare(uint64_t lbs, uint64_t size_bytes) {
  const std::string image = dir_.File(fmt::format("disk-{}.img", lbs));
  if (::truncate(image.c_str(), static_cast<off_t>(size_bytes)) != 0) {
    CreateSparseFile(image, size_bytes);
  }
  if (!loops_.count(lbs)) {
    loops_[lbs] = std::make_unique<LoopDevice>(image, static_cast<unsigned>(lbs));
  }
  const std::string dev = loops_[lbs]->path();
  CommandResult cap = RunCommand({"losetup", "--set-capacity", dev});
  if (cap.exit_code != 0) throw std::runtime_error("losetup --set-capacity: " + cap.err);
  return dev;
}

}  // namespace partalign::test
