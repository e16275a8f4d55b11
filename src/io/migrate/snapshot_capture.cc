// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/migrate/snapshot_capture.h"

#include <algorithm>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/table/fdisk_table.h"
#include "io/table/table_sector_probe.h"
#include "io/table/table_writer.h"
#include "io/util/xxhash_digest.h"
#include "partalign/layout/audit.h"
#include "partalign/tools/explain_report.h"
#include "partalign/util/shell_quote.h"

namespace partalign {
namespace {

void RecordAudit(const PartitionTable& table, const Topology& topology, Snapshot* s) {
  AuditReport report = AuditTable(table, topology);
  for (const PartitionAudit& p : report.partitions) {
    SnapshotVerdicts v;
    v.number = p.number;
    v.aligned = p.aligned;
    for (const CheckResult& c : p.checks) {
      v.checks.push_back({std::string(CriterionKey(c.criterion)),
                          c.applicable ? std::optional<bool>(c.ok) : std::nullopt});
    }
    s->verdicts.push_back(std::move(v));
  }
}

void RecordPredictions(const Topology& topology, const PartitionTable* table,
                       const ToolVersions& versions, Snapshot* s) {
  std::vector<uint64_t> starts;
  if (table && table->label == LabelType::kGpt) {
    for (const Partition& p : table->partitions) starts.push_back(p.start_sector);
  }
  for (const ToolPrediction& p : PredictAll(topology, versions, starts)) {
    SnapshotPrediction out;
    out.tool = p.tool;
    out.version = p.version ? p.version->ToString() : "";
    out.grain_sectors = p.grain_sectors;
    out.offset_sectors = p.offset_sectors;
    out.first_start_gpt = p.first_start_gpt;
    out.first_start_dos = p.first_start_dos;
    out.warns_at_1mib = p.warns_at_1mib;
    out.error = p.error;
    s->predictions.push_back(std::move(out));
  }
}

}  // namespace

Result<std::vector<ContentDigest>> DigestPlaces(const std::string& path,
                                                const std::vector<ContentDigest>& where) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  std::vector<ContentDigest> out;
  for (const ContentDigest& w : where) {
    if (w.offset_bytes > target->size_bytes ||
        w.length_bytes > target->size_bytes - w.offset_bytes) {
      continue;
    }
    Result<std::vector<uint8_t>> bytes =
        ReadExactly(target->fd.get(), path, w.offset_bytes, w.length_bytes);
    if (!bytes) return bytes.error();
    out.push_back({w.offset_bytes, w.length_bytes, Xxh64Hex(bytes->data(), bytes->size())});
  }
  return out;
}

Result<Snapshot> CaptureSnapshot(const std::string& path, const ProbeOptions& options,
                                 const ToolVersions& versions) {
  Result<DeviceInfo> device = ProbeTarget(path, options);
  if (!device) return device.error();
  Result<TableSectorSizeGuess> written_for = DetectTableSectorSize(path, *device);
  if (!written_for) return written_for.error();
  Snapshot s;
  s.identity = device->identity;
  s.topology = device->topology;
  s.table_written_for = written_for->sector_size;
  s.table_written_for_reason = written_for->reason;
  const uint64_t lss = device->topology.logical_sector_size;
  const uint64_t read_size = written_for->sector_size.value_or(lss);
  ReadTableOptions read{.probe_contents = true};
  // Only when it differs, or was assumed: a user sector size also resets libfdisk's I/O sizes.
  if (read_size != lss || options.assume.logical_sector_size) read.sector_size = read_size;
  Result<TableRead> table = ReadPartitionTable(path, read);
  if (!table) return table.error();
  s.table = std::move(table->table);
  s.table.areas.clear();
  s.table.free_regions.clear();

  std::vector<ContentDigest> places;
  for (const Partition& p : s.table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    const uint64_t size = p.size_sectors * s.table.sector_size;
    places.push_back(
        {p.start_sector * s.table.sector_size, std::min(size, kContentDigestBytes), ""});
  }
  Result<std::vector<ContentDigest>> digests = DigestPlaces(path, places);
  if (!digests) return digests.error();
  s.digests = std::move(*digests);

  if (read_size == lss) {
    RecordAudit(s.table, s.topology, &s);
    RecordPredictions(s.topology, &s.table, versions, &s);
  } else {
    s.audit_note = fmt::format(
        "not audited: the table is written for {}-byte sectors and the disk has {}-byte sectors "
        "(rewrite it for them first: 'partalign translate {}')",
        read_size, lss, ShellQuote(path));
    RecordPredictions(s.topology, nullptr, versions, &s);
  }
  return s;
}

}  // namespace partalign
