// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/plan_maker.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/device/device_probe.h"
#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "io/table/fdisk_table.h"
#include "partalign/layout/planner.h"
#include "partalign/table/plan_check.h"
#include "partalign/topology/alignment.h"
#include "support/temp_dir.h"

namespace partalign::test {

Plan MakeTableOnlyPlan(const std::string& path, uint64_t sector_size, uint64_t grain_bytes,
                       bool discard_data) {
  ProbeOptions options;
  if (sector_size != 0) options.assume.logical_sector_size = sector_size;
  Result<DeviceInfo> device = ProbeTarget(path, options);
  if (!device) throw std::runtime_error(device.error().message);
  const uint64_t ss = device->topology.logical_sector_size;
  Result<TableRead> read = ReadPartitionTable(path, {.sector_size = ss, .probe_contents = true});
  if (!read) throw std::runtime_error(read.error().message);
  const Alignment alignment{grain_bytes, 0};
  Plan plan = EmptyPlan(read->table, *device, alignment);
  const uint64_t grain_sectors = grain_bytes / ss;
  // As plan does it: a partition without a signature whose head is zeros is read in full.
  Result<Target> disk = OpenTarget(path);
  if (!disk) throw std::runtime_error(disk.error().message);
  for (Partition& p : read->table.partitions) {
    if (p.contents.proof != ContentProof::kUnscanned) continue;
    Result<std::optional<uint64_t>> data =
        FindFirstNonZero(disk->fd.get(), path, p.start_sector * ss, p.size_sectors * ss);
    if (!data) throw std::runtime_error(data.error().message);
    p.contents.proof = *data ? ContentProof::kData : ContentProof::kZeros;
  }
  // The target: every start that may move by the table alone moved up to the grain, its end
  // kept; described as plan describes a layout (apply recomputes every claim from it).
  PlanOptions plan_options;
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const Partition& p : read->table.partitions) {
    const uint64_t aligned = AlignUp(p.start_sector, grain_sectors);
    const bool data = p.contents.MayHoldData();
    if (p.kind == PartitionKind::kExtended || aligned == p.start_sector ||
        aligned > p.end_sector() || (data && !discard_data)) {
      extents.emplace_back(p.start_sector, p.end_sector());
      continue;
    }
    if (data) plan_options.discard.push_back(p.number);
    extents.emplace_back(aligned, p.end_sector());
  }
  Result<std::vector<PlanAction>> actions =
      DescribeExtents(read->table, alignment, plan_options, extents);
  if (!actions) throw std::runtime_error(actions.error().message);
  plan.actions = std::move(*actions);
  return plan;
}

void WritePlanFile(const std::string& file, const Plan& plan) {
  WriteFile(file, PlanToJson(plan).dump(2) + "\n");
}

}  // namespace partalign::test
