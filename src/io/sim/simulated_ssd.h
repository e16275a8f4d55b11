// SPDX-License-Identifier: GPL-3.0-or-later
// The simulated SSD (partalign-ssd-sim, src/sim/ssd_sim.cc) as a block device, from partalign
// itself (demo --ssd): the simulator mounted on a directory over a backing file, its file
// attached as a loop device with direct I/O; scripts/ssd-sim does the same from a shell.
#pragma once

#include <string>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The simulator program: $PARTALIGN_SSD_SIM, else partalign-ssd-sim in the directory of the
/// running partalign (the build directory, or where both are installed).
std::string SsdSimulatorPath();

class SimulatedSsd {
 public:
  /// Mounts the simulator on `mountpoint` (created) over `backing`, with `options`
  /// ("--read-us=25", ...), and attaches its file to a loop device.
  static Result<SimulatedSsd> Start(const std::string& backing, const std::string& mountpoint,
                                    const std::vector<std::string>& options = {});
  SimulatedSsd(SimulatedSsd&& other) noexcept;
  SimulatedSsd& operator=(SimulatedSsd&&) = delete;
  SimulatedSsd(const SimulatedSsd&) = delete;
  ~SimulatedSsd();  ///< Stop(), errors ignored

  /// The loop device ("/dev/loop3").
  const std::string& device() const { return device_; }
  /// What the flash did: "reads N writes N pages N ...".
  Result<std::string> Stats() const;

  /// Detaches the loop device (delete its partition nodes first) and unmounts the simulator,
  /// which then exits. Idempotent.
  Status Stop();

 private:
  SimulatedSsd(std::string mountpoint, std::string device)
      : mountpoint_(std::move(mountpoint)), device_(std::move(device)) {}

  std::string mountpoint_;
  std::string device_;
};

}  // namespace partalign
