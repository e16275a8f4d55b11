// SPDX-License-Identifier: GPL-3.0-or-later
// --assume SPEC: override any topology value, or start from a named profile.
//
//   SPEC     := ITEM[,ITEM]...
//   ITEM     := PROFILE | KEY=SIZE
//   KEY      := log | phys | min-io | opt-io | align-offset | size
//
// A profile name must come first; later keys override it ("usb-jmicron-0xffff,opt-io=0").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// The values an --assume spec sets; unset fields keep what the device reports.
struct TopologyOverride {
  std::string profile;  ///< the profile the spec started from, if any
  std::optional<uint64_t> logical_sector_size;
  std::optional<uint64_t> physical_sector_size;
  std::optional<uint64_t> minimum_io_size;
  std::optional<uint64_t> optimal_io_size;
  std::optional<uint64_t> alignment_offset;
  std::optional<uint64_t> size_bytes;

  bool empty() const;
};

struct TopologyProfile {
  std::string name;
  std::string spec;
  std::string description;
};

/// Parses the profile table (data/topology-profiles.conf format). Errors name the line.
Result<std::vector<TopologyProfile>> ParseProfiles(std::string_view text);

/// The profiles compiled into the binary from data/topology-profiles.conf.
const std::vector<TopologyProfile>& BuiltinProfiles();

/// Parses SPEC against `profiles`. Rejects unknown keys and profiles, duplicate keys, values
/// that are not sizes, and logical sector sizes that are not a power of two of at least 512.
Result<TopologyOverride> ParseTopologySpec(std::string_view spec,
                                           const std::vector<TopologyProfile>& profiles);

/// Applies the override; the result's origin is kAssumed when anything changed.
/// Fails when the combination is impossible (an alignment offset not smaller than the physical
/// sector, or a size that is not a multiple of the logical sector size).
Result<Topology> ApplyOverride(Topology base, const TopologyOverride& override);

}  // namespace partalign
