// SPDX-License-Identifier: GPL-3.0-or-later
// partalign-ssd-sim (src/sim/ssd_sim.cc) mounted for the duration of a test: /disk.img over a
// backing file in the test's directory, its I/Os charged per flash page. The destructor
// unmounts it, also when the test fails; attach the image to a LoopDevice (destroyed first) for
// a block device.
#pragma once

#include <string>
#include <vector>

namespace partalign::test {

struct SsdSimOptions {
  unsigned long long size_bytes = 256ull << 20;
  double read_us = 25;
  double program_us = 200;
  unsigned page_size = 4096;
  unsigned dies = 8;
};

class SsdSim {
 public:
  /// Creates `dir`/backing.img (sparse, unless it exists) and mounts the simulator on
  /// `dir`/mnt; throws (failing the test) on error.
  SsdSim(const std::string& dir, const SsdSimOptions& options = {});
  ~SsdSim();
  SsdSim(const SsdSim&) = delete;
  SsdSim& operator=(const SsdSim&) = delete;

  /// The simulated device's file.
  std::string image() const { return mountpoint_ + "/disk.img"; }
  std::string backing() const { return backing_; }
  /// "reads N writes N pages N page_reads N page_programs N partial_pages N".
  std::string Stats() const;
  /// One counter of Stats().
  unsigned long long Stat(const std::string& name) const;

 private:
  std::string mountpoint_;
  std::string backing_;
};

}  // namespace partalign::test
