// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/advice/interrupted_write.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/apply/table_write.h"
#include "io/device/target.h"
#include "io/label/table_gate.h"
#include "io/table/table_write_marker.h"
#include "io/table/table_writer.h"
#include "io/util/xxhash_digest.h"
#include "partalign/util/shell_quote.h"

namespace partalign {
namespace {

enum class WriteState { kNotStarted, kComplete, kTorn };

// Where the marked write left the disk: every range still holds the saved bytes, every range
// the written ones, or some of each (or neither: a sector half-written).
std::optional<WriteState> StateOf(const Target& disk, const TableBackup& backup) {
  bool all_saved = true;
  bool all_applied = true;
  for (const BackupRange& r : backup.ranges) {
    Result<std::vector<uint8_t>> now =
        ReadExactly(disk.fd.get(), disk.path, r.offset_bytes, r.length_bytes);
    if (!now) return std::nullopt;
    const std::string hash = Xxh64Hex(now->data(), now->size());
    all_saved = all_saved && hash == r.xxh64;
    all_applied = all_applied && !r.applied_xxh64.empty() && hash == r.applied_xxh64;
  }
  if (all_saved) return WriteState::kNotStarted;
  if (all_applied) return WriteState::kComplete;
  return WriteState::kTorn;
}

// Whether the disk shows a table that is neither the one the backup saved nor the one its
// write made (read with either sector size): partitioned anew since, the marker is stale.
bool ShowsAnotherTable(const Target& disk, const TableBackup& backup) {
  for (uint64_t size : {backup.sector_size, backup.saved_table_sector_size()}) {
    const TableScan now = ScanTarget(disk.fd.get(), disk.path, disk.size_bytes, size);
    if (now.disk_id.empty()) continue;
    const bool known = std::any_of(
        backup.identity.tables.begin(), backup.identity.tables.end(),
        [&](const BackupTableIdentity& id) { return TableIdentityMismatches(id, now).empty(); });
    if (!known) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> InterruptedTranslateAdvice(const std::string& path,
                                                      const DeviceInfo& device) {
  Result<Target> disk = OpenTarget(path);
  if (!disk) return std::nullopt;
  std::vector<MarkedTableWrite> marked = FindMarkedTableWrites(BackupDeviceOf(device, *disk));
  // The latest translate first: it is the one that left the disk as it is.
  for (auto m = marked.rbegin(); m != marked.rend(); ++m) {
    if (m->backup.command != "translate") continue;
    if (StateOf(*disk, m->backup) != WriteState::kTorn) continue;
    if (ShowsAnotherTable(*disk, m->backup)) continue;
    // The disk may have another name now than when the backup was taken (sdb -> sdc).
    const std::string target =
        m->backup.device.disk.path == path ? "" : " --target " + ShellQuote(path);
    return fmt::format(
        "a translate of '{}' was interrupted part-way through its table write (its backup: {}); "
        "put the old table back with 'partalign restore{} {}', then run 'partalign translate "
        "--from-sector-size {} {}' again",
        path, m->backup_path, target, ShellQuote(m->backup_path),
        m->backup.saved_table_sector_size(), ShellQuote(path));
  }
  return std::nullopt;
}

}  // namespace partalign
