// penalty_fs (tests/fuse/penalty_fs.cc) mounted for the duration of a test: a file whose reads
// that cross a 4 KiB boundary take `penalty_us` longer. The destructor unmounts it, also when
// the test fails.
#pragma once

#include <string>

namespace partalign::test {

class PenaltyFs {
 public:
  /// Mounts on `mountpoint` (created if missing); throws (failing the test) on error.
  PenaltyFs(const std::string& mountpoint, unsigned penalty_us, unsigned long long size_bytes);
  ~PenaltyFs();
  PenaltyFs(const PenaltyFs&) = delete;
  PenaltyFs& operator=(const PenaltyFs&) = delete;

  /// The file with the penalty.
  std::string image() const { return mountpoint_ + "/disk.img"; }
  /// How many reads arrived and how many crossed: "reads N crossing M".
  std::string Stats() const;

 private:
  std::string mountpoint_;
};

}  // namespace partalign::test
