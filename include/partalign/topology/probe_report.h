// SPDX-License-Identifier: GPL-3.0-or-later
// The probe report model and its renderings: JSON (stable keys, numbers as numbers, units in
// key names) and the human key/value rows. Computing is separate from rendering (fio's stat.c).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/topology/device.h"
#include "partalign/topology/topology_check.h"

namespace partalign {

/// Version of the JSON documents partalign writes; bumped on incompatible changes
/// (docs/output.md has the history).
inline constexpr int kJsonSchemaVersion = 1;

/// The `topology` object shared by probe, explain and later reports: the I/O limits in bytes,
/// where they came from, identity, table type and `warnings` (one string per finding).
nlohmann::json TopologyJson(const DeviceInfo& device, const std::vector<TopologyFinding>& findings);

/// The whole `probe --json` document.
nlohmann::json ProbeJson(const DeviceInfo& device, const std::vector<TopologyFinding>& findings);

struct ReportField {
  std::string name;   ///< upper case, like lsblk column names
  std::string value;  ///< already formatted for a person
};

/// Human rows of `probe`, in display order; fields that are unknown are left out.
std::vector<ReportField> ProbeFields(const DeviceInfo& device);

}  // namespace partalign
