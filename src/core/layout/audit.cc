// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/audit.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/stack/stack_check.h"
#include "partalign/stack/stack_render.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/tools/tool_verdicts.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/json_util.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

// The mathematical remainder of (value - offset) modulo m (m > 0).
uint64_t AuditOffsetMod(uint64_t value, uint64_t offset, uint64_t m) {
  return (value % m + m - offset % m) % m;
}

// "start 63 x 512 = 32256 bytes, 32256 % 1048576 = 32256", with "(bytes - offset)" when the
// device has an alignment offset.
std::string Arithmetic(std::string_view what, uint64_t sector, uint64_t sector_size,
                       uint64_t offset, uint64_t modulus) {
  std::optional<uint64_t> checked = LbaToBytes(sector, sector_size);
  if (!checked) {
    return fmt::format("{} {} x {} is beyond 2^64 bytes", what, sector, sector_size);
  }
  const uint64_t bytes = *checked;
  const uint64_t rest = AuditOffsetMod(bytes, offset, modulus);
  if (offset == 0) {
    return fmt::format("{} {} x {} = {} bytes, {} % {} = {}", what, sector, sector_size, bytes,
                       bytes, modulus, rest);
  }
  return fmt::format("{} {} x {} = {} bytes, ({} - {}) % {} = {}", what, sector, sector_size, bytes,
                     bytes, offset, modulus, rest);
}

CheckResult ModuloCheck(Criterion criterion, std::string_view what, uint64_t sector,
                        uint64_t sector_size, uint64_t offset, uint64_t modulus) {
  CheckResult c{criterion};
  // A table that passed the validation gate lies inside the disk; a wrapped product would
  // make a sector beyond 2^64 bytes look like byte 0, aligned.
  std::optional<uint64_t> bytes = LbaToBytes(sector, sector_size);
  c.ok = bytes && AuditOffsetMod(*bytes, offset, modulus) == 0;
  c.detail = Arithmetic(what, sector, sector_size, offset, modulus);
  return c;
}

CheckResult NotApplicable(Criterion criterion, std::string why) {
  CheckResult c{criterion};
  c.applicable = false;
  c.detail = std::move(why);
  return c;
}

CheckResult FromVerdict(Criterion criterion, const ToolVerdict& verdict) {
  CheckResult c{criterion};
  c.ok = verdict.ok;
  c.detail = verdict.message;
  return c;
}

// The human name of a criterion with its number ("grain 1 MiB").
std::string CriterionLabel(Criterion criterion, const AuditReport& r) {
  const Topology& t = r.topology;
  switch (criterion) {
    case Criterion::kGrain:
      return fmt::format("grain {}", FormatSize(r.grain_bytes));
    case Criterion::kPhysicalSector:
      return fmt::format("physical sector {}", t.physical_sector_size);
    case Criterion::kMinimumIo:
      return fmt::format("minimum I/O {}", t.minimum_io_size);
    case Criterion::kOptimalIo:
      return fmt::format("optimal I/O {}", t.optimal_io_size);
    case Criterion::kFilesystemBlock:
      return "filesystem block";
    case Criterion::kEndAligned:
      return fmt::format("end on {}", FormatSize(r.alignment.alignment.grain_bytes));
    case Criterion::kPartedAlignCheckOpt:
      return "parted align-check opt";
    case Criterion::kFdiskPhysicalBoundary:
      return "fdisk physical boundary";
    case Criterion::kGdiskVerifyStart:
      return "gdisk verify (start)";
    case Criterion::kGdiskVerifyEnd:
      return "gdisk verify (end)";
    case Criterion::kKpmcoreIsAligned:
      return "KPMcore (Calamares)";
  }
  return "";
}

std::vector<CheckResult> CheckPartition(const Partition& p, const Topology& t,
                                        const AuditReport& report) {
  const uint64_t ss = t.logical_sector_size;
  const uint64_t off = t.alignment_offset;
  const uint64_t start = p.start_sector;
  std::vector<CheckResult> checks;
  checks.push_back(ModuloCheck(Criterion::kGrain, "start", start, ss, off, report.grain_bytes));
  if (t.physical_sector_size != 0) {
    checks.push_back(
        ModuloCheck(Criterion::kPhysicalSector, "start", start, ss, off, t.physical_sector_size));
  } else {
    checks.push_back(NotApplicable(Criterion::kPhysicalSector, "no physical sector size"));
  }
  if (t.minimum_io_size != 0) {
    checks.push_back(
        ModuloCheck(Criterion::kMinimumIo, "start", start, ss, off, t.minimum_io_size));
  } else {
    checks.push_back(NotApplicable(Criterion::kMinimumIo, "no minimum I/O size reported"));
  }
  if (IsSaneOptimalIo(t)) {
    checks.push_back(
        ModuloCheck(Criterion::kOptimalIo, "start", start, ss, off, t.optimal_io_size));
  } else if (t.optimal_io_size == 0) {
    checks.push_back(NotApplicable(Criterion::kOptimalIo, "no optimal I/O size reported"));
  } else {
    checks.push_back(NotApplicable(
        Criterion::kOptimalIo,
        fmt::format("optimal I/O {} is not a usable stripe size, ignored", t.optimal_io_size)));
  }
  if (p.contents.fs_block_size && *p.contents.fs_block_size != 0) {
    checks.push_back(ModuloCheck(Criterion::kFilesystemBlock, "start", start, ss, off,
                                 *p.contents.fs_block_size));
  } else {
    checks.push_back(NotApplicable(Criterion::kFilesystemBlock, "no filesystem block size"));
  }
  const Alignment& a = report.alignment.alignment;
  checks.push_back(ModuloCheck(Criterion::kEndAligned, "end + 1 =", p.end_sector() + 1, ss,
                               a.offset_bytes, a.grain_bytes));
  checks.push_back(
      FromVerdict(Criterion::kPartedAlignCheckOpt, PartedAlignCheckOpt(t, p.number, start)));
  checks.push_back(
      FromVerdict(Criterion::kFdiskPhysicalBoundary, FdiskPhysicalBoundary(t, p.number, start)));
  checks.push_back(
      FromVerdict(Criterion::kGdiskVerifyStart,
                  GdiskVerifyStart(t, p.number, start, report.gdisk_test_alignment_sectors)));
  checks.push_back(FromVerdict(
      Criterion::kGdiskVerifyEnd,
      GdiskVerifyEnd(t, p.number, p.end_sector(), report.gdisk_test_alignment_sectors)));
  // The only installer that checks existing partitions (installers/installer_report.h).
  checks.push_back(FromVerdict(Criterion::kKpmcoreIsAligned,
                               KpmcoreVerdict(t, p.number, start, p.end_sector())));
  return checks;
}

const char* Cell(const CheckResult& c) {
  if (!c.applicable) return "-";
  return c.ok ? "yes" : "no";
}

std::string RequiredText(const AuditReport& r) {
  const Topology& t = r.topology;
  std::vector<std::string> parts;
  parts.push_back(fmt::format("grain {}", FormatSize(r.grain_bytes)));
  if (t.physical_sector_size != 0) {
    parts.push_back(fmt::format("physical sector {} bytes", t.physical_sector_size));
  }
  if (t.minimum_io_size != 0) {
    parts.push_back(fmt::format("minimum I/O {} bytes", t.minimum_io_size));
  }
  if (IsSaneOptimalIo(t)) parts.push_back(fmt::format("optimal I/O {} bytes", t.optimal_io_size));
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  if (t.alignment_offset != 0) {
    text += fmt::format(", each after the alignment offset {} bytes", t.alignment_offset);
  }
  if (t.optimal_io_size != 0 && !IsSaneOptimalIo(t)) {
    text += fmt::format("; optimal I/O {} ignored", t.optimal_io_size);
  }
  return text;
}

}  // namespace

std::string_view CriterionKey(Criterion criterion) {
  switch (criterion) {
    case Criterion::kGrain:
      return "grain";
    case Criterion::kPhysicalSector:
      return "physical_sector";
    case Criterion::kMinimumIo:
      return "minimum_io";
    case Criterion::kOptimalIo:
      return "optimal_io";
    case Criterion::kFilesystemBlock:
      return "filesystem_block";
    case Criterion::kEndAligned:
      return "end_aligned";
    case Criterion::kPartedAlignCheckOpt:
      return "parted_align_check_opt";
    case Criterion::kFdiskPhysicalBoundary:
      return "fdisk_physical_boundary";
    case Criterion::kGdiskVerifyStart:
      return "gdisk_verify_start";
    case Criterion::kGdiskVerifyEnd:
      return "gdisk_verify_end";
    case Criterion::kKpmcoreIsAligned:
      return "kpmcore_is_aligned";
  }
  return "";
}

bool IsRequired(Criterion criterion) {
  return criterion == Criterion::kGrain || criterion == Criterion::kPhysicalSector ||
         criterion == Criterion::kMinimumIo || criterion == Criterion::kOptimalIo;
}

const CheckResult& PartitionAudit::Check(Criterion criterion) const {
  for (const CheckResult& c : checks) {
    if (c.criterion == criterion) return c;
  }
  return checks.front();  // unreachable: AuditTable fills every criterion
}

size_t AuditReport::misaligned_count() const {
  return static_cast<size_t>(std::count_if(partitions.begin(), partitions.end(),
                                           [](const PartitionAudit& p) { return !p.aligned; }));
}

bool AuditReport::all_aligned() const {
  return misaligned_count() == 0 && (!whole_disk || whole_disk->aligned());
}

AuditReport AuditTable(const PartitionTable& table, const Topology& topology,
                       const AuditOptions& options) {
  AuditReport report;
  report.topology = topology;
  report.label = table.label;
  report.sector_size = table.sector_size;
  report.table_findings = table.findings;
  report.grain_bytes = options.grain_bytes.value_or(kDefaultGrainBytes);
  report.alignment = RecommendAlignment(topology, options.grain_bytes);
  std::vector<uint64_t> starts;
  for (const Partition& p : table.partitions) {
    if (p.kind != PartitionKind::kExtended) starts.push_back(p.start_sector);
  }
  report.gdisk_test_alignment_sectors =
      GdiskVerifyAlignment(topology, table.disk_size_sectors, starts);
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    PartitionAudit audit;
    audit.number = p.number;
    audit.kind = p.kind;
    audit.start_sector = p.start_sector;
    audit.end_sector = p.end_sector();
    audit.size_bytes = LbaToBytes(p.size_sectors, table.sector_size).value_or(0);
    audit.contents = p.contents;
    audit.checks = CheckPartition(p, topology, report);
    const StackCheckOptions stack_options{report.grain_bytes, options.lvm2_version};
    if (auto it = options.stacks.find(p.number); it != options.stacks.end()) {
      audit.stack = it->second;
      CheckStack(&audit.stack, topology, p.start_sector * table.sector_size, stack_options);
    }
    audit.aligned = audit.stack.aligned() &&
                    std::all_of(audit.checks.begin(), audit.checks.end(), [](const auto& c) {
                      return !IsRequired(c.criterion) || !c.applicable || c.ok;
                    });
    report.partitions.push_back(std::move(audit));
  }
  if (table.label == LabelType::kNone && options.whole_disk && !options.whole_disk->empty()) {
    report.whole_disk = options.whole_disk;
    CheckStack(&*report.whole_disk, topology, 0, {report.grain_bytes, options.lvm2_version});
  }
  return report;
}

std::string AuditSummary(const AuditReport& report) {
  const size_t total = report.partitions.size();
  const std::string required = RequiredText(report);
  if (report.whole_disk) {
    return fmt::format("No partition table; the whole-disk stack is {} (required: {}).",
                       report.whole_disk->aligned() ? "aligned" : "misaligned", required);
  }
  if (total == 0) return fmt::format("No partitions to audit (required: {}).", required);
  const size_t bad = report.misaligned_count();
  if (bad == 0) {
    return fmt::format("All {} partition{} aligned (required: {}).", total,
                       total == 1 ? " is" : "s are", required);
  }
  std::vector<std::string> numbers;
  for (const PartitionAudit& p : report.partitions) {
    if (p.aligned) continue;
    // Misaligned only inside: the partition's own start passes every required check.
    const bool inside = std::all_of(p.checks.begin(), p.checks.end(), [](const auto& c) {
      return !IsRequired(c.criterion) || !c.applicable || c.ok;
    });
    numbers.push_back(std::to_string(p.number) + (inside ? " inside" : ""));
  }
  return fmt::format("{} of {} partition{} misaligned ({}) (required: {}).", bad, total,
                     total == 1 ? " is" : "s are", fmt::join(numbers, ", "), required);
}

nlohmann::json AuditJson(const AuditReport& report, const DeviceInfo& device,
                         const std::vector<TopologyFinding>& findings,
                         const std::string& table_fingerprint) {
  nlohmann::json partitions = nlohmann::json::array();
  for (const PartitionAudit& p : report.partitions) {
    nlohmann::json checks = nlohmann::json::object();
    nlohmann::json details = nlohmann::json::object();
    for (const CheckResult& c : p.checks) {
      const std::string key(CriterionKey(c.criterion));
      checks[key] = c.applicable ? nlohmann::json(c.ok) : nlohmann::json(nullptr);
      details[key] = StringOrNull(c.detail);
    }
    const PartitionContents& fs = p.contents;
    partitions.push_back(
        {{"number", p.number},
         {"kind", ToString(p.kind)},
         {"start_sector", p.start_sector},
         {"end_sector", p.end_sector},
         {"size_bytes", p.size_bytes},
         {"start_bytes", OptionalJson(LbaToBytes(p.start_sector, report.sector_size))},
         {"fs_type", StringOrNull(fs.fs_type)},
         {"fs_block_size", OptionalJson(fs.fs_block_size)},
         {"fs_size_bytes", OptionalJson(fs.fs_size_bytes)},
         {"has_data", fs.MayHoldData()},
         {"content_proof", ToString(fs.proof)},
         {"checks", checks},
         {"details", details},
         {"stack", StackJson(p.stack)},
         {"stack_errors", p.stack.errors},
         {"aligned", p.aligned}});
  }
  nlohmann::json whole_disk = nullptr;
  if (report.whole_disk) {
    whole_disk = {{"stack", StackJson(*report.whole_disk)},
                  {"stack_errors", report.whole_disk->errors},
                  {"aligned", report.whole_disk->aligned()}};
  }
  nlohmann::json required = nlohmann::json::array();
  for (Criterion c : kAllCriteria) {
    if (IsRequired(c)) required.push_back(CriterionKey(c));
  }
  nlohmann::json table_findings = nlohmann::json::array();
  for (const TableFinding& f : report.table_findings) {
    table_findings.push_back(
        {{"code", f.code}, {"severity", ToString(f.severity)}, {"message", f.message}});
  }
  const Alignment& a = report.alignment.alignment;
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"topology", TopologyJson(device, findings)},
          {"label", ToString(report.label)},
          {"sector_size", report.sector_size},
          {"table_fingerprint", table_fingerprint},
          {"table_status", TableStatus(report.table_findings)},
          {"table_findings", table_findings},
          {"grain_bytes", report.grain_bytes},
          {"alignment",
           {{"grain_bytes", a.grain_bytes},
            {"offset_bytes", a.offset_bytes},
            {"reasons", report.alignment.reasons}}},
          {"gdisk_test_alignment_sectors", report.gdisk_test_alignment_sectors},
          {"required_checks", required},
          {"partitions", partitions},
          {"whole_disk", whole_disk},
          {"summary",
           {{"partitions", report.partitions.size()},
            {"aligned", report.partitions.size() - report.misaligned_count()},
            {"misaligned", report.misaligned_count()},
            {"text", AuditSummary(report)}}},
          {"aligned", report.all_aligned()}};
}

std::vector<std::string> AuditColumns() {
  return {"NR",    "START",   "END",     "SIZE",     "FS",     "GRAIN",
          "PHY",   "MIN-IO",  "OPT-IO",  "FS-BLOCK", "END-AL", "PARTED",
          "FDISK", "GDISK-S", "GDISK-E", "KPMCORE",  "STACK",  "ALIGNED"};
}

// The FS column: the filesystem, or what is known of a partition without one ("data" with
// bytes found, "?" when not proven empty, nothing when proven empty).
std::string ContentsCell(const PartitionContents& c) {
  if (!c.fs_type.empty()) return c.fs_type;
  if (c.proof == ContentProof::kData) return "data";
  return c.MayHoldData() ? "?" : "";
}

std::vector<std::vector<std::string>> AuditRows(const AuditReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const PartitionAudit& p : report.partitions) {
    std::vector<std::string> row{std::to_string(p.number), std::to_string(p.start_sector),
                                 std::to_string(p.end_sector), FormatSize(p.size_bytes),
                                 ContentsCell(p.contents)};
    for (const CheckResult& c : p.checks) row.push_back(Cell(c));
    row.push_back(p.stack.layers.empty() ? "-" : p.stack.aligned() ? "yes" : "no");
    row.push_back(p.aligned ? "yes" : "NO");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> AuditDetails(const AuditReport& report) {
  std::vector<std::string> lines;
  for (const PartitionAudit& p : report.partitions) {
    std::vector<std::string> failing;
    for (const CheckResult& c : p.checks) {
      if (!c.applicable || c.ok) continue;
      failing.push_back(fmt::format("  {}{}: {}", CriterionLabel(c.criterion, report),
                                    IsRequired(c.criterion) ? "" : " (informational)", c.detail));
    }
    if (failing.empty()) continue;
    std::string what = p.contents.fs_type.empty() ? "" : ", " + p.contents.fs_type;
    lines.push_back(fmt::format("partition {} (sectors {}-{}{}){}:", p.number, p.start_sector,
                                p.end_sector, what, p.aligned ? "" : " is misaligned"));
    lines.insert(lines.end(), failing.begin(), failing.end());
  }
  for (const PartitionAudit& p : report.partitions) {
    if (p.stack.empty()) continue;
    lines.push_back(
        fmt::format("partition {} stack{}:", p.number, p.stack.aligned() ? "" : " (misaligned)"));
    std::vector<std::string> tree = StackTreeLines(p.stack, "  ");
    lines.insert(lines.end(), tree.begin(), tree.end());
  }
  if (report.whole_disk) {
    lines.push_back(
        fmt::format("whole-disk stack{}:", report.whole_disk->aligned() ? "" : " (misaligned)"));
    std::vector<std::string> tree = StackTreeLines(*report.whole_disk, "  ");
    lines.insert(lines.end(), tree.begin(), tree.end());
  }
  return lines;
}

}  // namespace partalign
