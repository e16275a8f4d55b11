// SPDX-License-Identifier: GPL-3.0-or-later
// What the crash tests of table writes (apply's, translate's) share: killing partalign at a
// random time, and reading where a table puts its partitions with libfdisk and with sfdisk.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace partalign::test {

/// Partition number, first and last sector, sorted; DOS extended partitions left out.
using Places = std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>;

/// sfdisk -J's view of `device`, or nullopt when it reads no table.
std::optional<Places> SfdiskPlaces(const std::string& device);

/// libfdisk's view of `device` read with `sector_size`-byte sectors, or nullopt.
std::optional<Places> LibfdiskPlaces(const std::string& device, uint64_t sector_size);

/// Runs partalign with `args` and `env` and SIGKILLs it after `delay` unless it finished
/// before. Returns true when the kill landed (the process was still running).
bool RunAndKill(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                std::chrono::microseconds delay);

}  // namespace partalign::test
