// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/plan_maker.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/device/device_probe.h"
#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "io/table/fdisk_table.h"
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
  Plan plan;
  plan.disk = IdentityOf(*device);
  plan.topology = device->topology;
  plan.label = read->table.label;
  plan.table_fingerprint = read->table.fingerprint;
  plan.alignment = {grain_bytes, 0};
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
  for (const Partition& p : read->table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    PlanAction a{
        p.number, p.start_sector, p.end_sector(), p.start_sector, p.end_sector(), ActionKind::kNone,
        0,        "aligned"};
    uint64_t aligned = AlignUp(p.start_sector, grain_sectors);
    if (aligned != p.start_sector) {
      if (p.contents.MayHoldData() && discard_data && aligned <= p.end_sector()) {
        a.kind = ActionKind::kTableOnly;
        a.new_start_sector = aligned;
        a.empty = Emptiness::kDiscarded;
        a.reason = "contents discarded: the start moves up to the grain";
      } else if (p.contents.MayHoldData()) {
        a.kind = ActionKind::kMoveData;
        a.bytes_to_move = p.size_sectors * ss;
        a.reason = "holds data";
      } else if (aligned <= p.end_sector()) {
        a.kind = ActionKind::kTableOnly;
        a.new_start_sector = aligned;
        a.empty = p.contents.proof == ContentProof::kHoles ? Emptiness::kHoles : Emptiness::kZeros;
        a.reason = "no data: the start moves up to the grain";
      }
    }
    plan.actions.push_back(a);
  }
  return plan;
}

void WritePlanFile(const std::string& file, const Plan& plan) {
  WriteFile(file, PlanToJson(plan).dump(2) + "\n");
}

}  // namespace partalign::test
