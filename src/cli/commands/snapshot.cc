// SPDX-License-Identifier: GPL-3.0-or-later
// partalign snapshot TARGET: records the disk as it is now (identity, topology, the table and
// what each partition holds, the audit, each partitioner's prediction) in a snapshot file, for
// `partalign verify` after the disk moved to another controller (docs/migration.md). Never
// writes to the disk.
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "cli/move/unfinished_move.h"
#include "cli/target/target_options.h"
#include "io/migrate/snapshot_capture.h"
#include "io/migrate/snapshot_file.h"
#include "io/tools/tool_versions.h"
#include "io/util/smartcols_table.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

struct SnapshotCommand {
  TargetOptions target;
  std::string output;
};

void PrintSummary(std::ostream& out, const Snapshot& s, const std::string& path) {
  const Topology& t = s.topology;
  const Identity& id = s.identity;
  out << fmt::format("Snapshot of '{}' written to {}\n", id.path, path);
  std::string who = std::string(ToString(id.transport));
  if (!id.model.empty()) who += ", " + id.model;
  if (!id.serial.empty()) who += ", serial " + id.serial;
  if (id.usb_bridge)
    who += ", USB bridge " + id.usb_bridge->vendor_id + ":" + id.usb_bridge->product_id;
  out << fmt::format("  disk: {} ({}), {}\n", FormatSize(t.size_bytes), t.size_bytes, who);
  out << fmt::format(
      "  topology: logical {}, physical {}, minimum I/O {}, optimal I/O {}, alignment offset {} "
      "({})\n",
      t.logical_sector_size, t.physical_sector_size, t.minimum_io_size, t.optimal_io_size,
      t.alignment_offset, ToString(t.origin));
  std::string written_for = s.table_written_for
                                ? fmt::format("written for {}-byte sectors", *s.table_written_for)
                                : "sector size not recorded in it";
  out << fmt::format("  table: {} ({}), {} partitions, {}\n", ToString(s.table.label), written_for,
                     s.table.partitions.size(), s.table.fingerprint);
  if (s.table.partitions.empty()) return;
  TextTable table({{"NR", true},
                   {"START", true},
                   {"SIZE", true},
                   {"TYPE"},
                   {"FS"},
                   {"FS-UUID"},
                   {"HEAD-XXH64"},
                   {"ALIGNED"}});
  for (const Partition& p : s.table.partitions) {
    const uint64_t start = p.start_sector * s.table.sector_size;
    const ContentDigest* d = s.DigestAt(start);
    std::string aligned = "-";
    for (const SnapshotVerdicts& v : s.verdicts) {
      if (v.number == p.number) aligned = v.aligned ? "yes" : "no";
    }
    table.AddRow({std::to_string(p.number), std::to_string(p.start_sector),
                  FormatSize(p.size_sectors * s.table.sector_size),
                  p.kind == PartitionKind::kExtended ? "extended" : p.type_name, p.contents.fs_type,
                  p.contents.fs_uuid, d ? d->xxh64 : "", aligned});
  }
  out << table.Render();
  if (!s.audit_note.empty()) out << "  " << s.audit_note << '\n';
}

ExitCode RunSnapshot(const SnapshotCommand& c, Streams io) {
  // A snapshot of a half-moved disk would be the baseline verify compares against later.
  if (RefuseIfUnfinished(io, c.target.target, c.target.json)) return ExitCode::kUnfinished;
  Result<ProbeOptions> options = MakeProbeOptions(c.target);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  Result<Snapshot> snapshot = CaptureSnapshot(c.target.target, *options, DetectToolVersions());
  if (!snapshot) {
    PrintError(io.err, snapshot.error().message);
    return ExitCode::kFailure;
  }
  snapshot->partalign_version = kVersion;
  snapshot->created = UtcTime("%Y-%m-%dT%H:%M:%SZ");
  Result<std::string> path = WriteSnapshotFile(
      c.output, SnapshotFileName(snapshot->identity, UtcTime("%Y%m%dT%H%M%SZ")), *snapshot);
  if (!path) {
    PrintError(io.err, path.error().message);
    return ExitCode::kFailure;
  }
  if (c.target.json) {
    io.out << SnapshotToJson(*snapshot).dump(2) << '\n';
    io.err << fmt::format("partalign: snapshot written to {}\n", *path);
  } else {
    PrintSummary(io.out, *snapshot, *path);
  }
  return ExitCode::kOk;
}

}  // namespace

void AddSnapshotCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<SnapshotCommand>();
  CLI::App* sub = app.add_subcommand(
      "snapshot",
      "record a disk's identity, topology, table and contents for a later 'verify' (no writes "
      "to the disk)");
  AddTargetOptions(sub, &command->target);
  sub->add_option("-o,--output", command->output,
                  std::string("snapshot file (default: a new file in ") + kDefaultSnapshotDir +
                      ", named after the disk)");
  runners[sub] = [command](Streams io) { return RunSnapshot(*command, io); };
}

}  // namespace partalign
