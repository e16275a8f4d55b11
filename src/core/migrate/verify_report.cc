// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/migrate/verify_report.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "partalign/layout/audit.h"
#include "partalign/tools/explain_report.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

// The partitioners whose behaviour a topology change alters, as explain names them.
struct ToolName {
  std::string_view tool;
  std::string_view name;
};
constexpr std::array<ToolName, 4> kVerifyHeadliners{{{"parted-optimal", "parted"},
                                                     {"sfdisk", "fdisk"},
                                                     {"sgdisk", "gdisk"},
                                                     {"systemd-repart", "systemd-repart"}}};

// The audit's verdicts a person checks with a tool, and partalign's own (the required
// criteria together: AuditReport's `aligned`).
struct VerdictName {
  std::string_view key;
  std::string_view name;
};
constexpr std::string_view kAlignedKey = "aligned";
constexpr std::array<VerdictName, 5> kVerdicts{
    {{kAlignedKey, "partalign's alignment"},
     {"parted_align_check_opt", "parted's align-check"},
     {"fdisk_physical_boundary", "fdisk's physical-sector check"},
     {"gdisk_verify_start", "gdisk's verify (start)"},
     {"gdisk_verify_end", "gdisk's verify (end)"}}};

std::string Join(const std::vector<std::string>& items, std::string_view last = " and ") {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) s += i + 1 == items.size() ? std::string(last) : ", ";
    s += items[i];
  }
  return s;
}

std::string Numbers(const std::vector<uint32_t>& numbers) {
  std::vector<std::string> items;
  for (uint32_t n : numbers) items.push_back(std::to_string(n));
  return (numbers.size() == 1 ? "partition " : "partitions ") + Join(items);
}

std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

uint64_t StartBytes(const PartitionTable& t, const Partition& p) {
  return p.start_sector * t.sector_size;
}
uint64_t SizeBytes(const PartitionTable& t, const Partition& p) {
  return p.size_sectors * t.sector_size;
}

std::string Extent(const PartitionTable& t, const Partition& p) {
  return fmt::format("bytes {}-{}", StartBytes(t, p), StartBytes(t, p) + SizeBytes(t, p) - 1);
}

// --- what each partitioner does, in bytes ---------------------------------------------------

struct ToolPlace {
  std::optional<uint64_t> grain_bytes;
  std::optional<uint64_t> offset_bytes;
  std::optional<uint64_t> first_gpt_bytes;
  bool error = false;
};

std::map<std::string, ToolPlace, std::less<>> ToolPlaces(const Topology& t,
                                                         const PartitionTable& view,
                                                         const ToolVersions& versions) {
  std::vector<uint64_t> starts;
  if (view.label == LabelType::kGpt) {
    for (const Partition& p : view.partitions) starts.push_back(p.start_sector);
  }
  std::map<std::string, ToolPlace, std::less<>> places;
  const uint64_t lss = t.logical_sector_size;
  for (const ToolPrediction& p : PredictAll(t, versions, starts)) {
    ToolPlace place;
    place.error = !p.error.empty();
    if (p.grain_sectors && *p.grain_sectors > 0) {
      place.grain_bytes = static_cast<uint64_t>(*p.grain_sectors) * lss;
    }
    if (p.offset_sectors && *p.offset_sectors >= 0) {
      place.offset_bytes = static_cast<uint64_t>(*p.offset_sectors) * lss;
    }
    if (p.first_start_gpt) place.first_gpt_bytes = *p.first_start_gpt * lss;
    places[p.tool] = place;
  }
  return places;
}

std::string GrainText(uint64_t bytes, uint64_t lss) {
  if (bytes % lss != 0) return FormatSize(bytes);
  return fmt::format("{} sectors ({})", bytes / lss, FormatSize(bytes));
}

// "parted now aligns to 2048 sectors (1 MiB) instead of 65535 sectors (31.99 MiB)".
std::vector<std::string> ToolDifferences(const Topology& from, const Topology& to,
                                         const PartitionTable& table,
                                         const ToolVersions& versions) {
  std::vector<uint32_t> ignored;
  auto before =
      ToolPlaces(from, TableInSectors(table, from.logical_sector_size, &ignored), versions);
  auto after = ToolPlaces(to, TableInSectors(table, to.logical_sector_size, &ignored), versions);
  std::vector<std::string> out;
  for (const ToolName& h : kVerifyHeadliners) {
    auto b = before.find(h.tool);
    auto a = after.find(h.tool);
    if (b == before.end() || a == after.end()) continue;
    if (a->second.error != b->second.error) {
      out.push_back(fmt::format("{} {}", h.name,
                                a->second.error
                                    ? "cannot place partitions on this topology any more"
                                    : "can place partitions again"));
      continue;
    }
    if (a->second.grain_bytes != b->second.grain_bytes && a->second.grain_bytes &&
        b->second.grain_bytes) {
      out.push_back(fmt::format("{} now aligns to {} instead of {}", h.name,
                                GrainText(*a->second.grain_bytes, to.logical_sector_size),
                                GrainText(*b->second.grain_bytes, from.logical_sector_size)));
    } else if (a->second.offset_bytes != b->second.offset_bytes && a->second.offset_bytes &&
               b->second.offset_bytes) {
      out.push_back(fmt::format("{} now shifts its starts by {} bytes instead of {}", h.name,
                                *a->second.offset_bytes, *b->second.offset_bytes));
    } else if (a->second.first_gpt_bytes != b->second.first_gpt_bytes &&
               a->second.first_gpt_bytes && b->second.first_gpt_bytes) {
      out.push_back(fmt::format("{} now starts the first partition at byte {} instead of {}",
                                h.name, *a->second.first_gpt_bytes, *b->second.first_gpt_bytes));
    }
  }
  return out;
}

// --- verdicts ---------------------------------------------------------------------------------

// Per partition, per verdict key: passes or not (absent: does not apply).
using Verdicts = std::map<uint32_t, std::map<std::string, bool, std::less<>>>;

struct Audited {
  Verdicts verdicts;
  std::map<uint32_t, std::map<std::string, std::string, std::less<>>> details;
  std::vector<uint32_t> left_out;  ///< not whole sectors of the topology's size
  std::vector<uint32_t> misaligned;
};

Audited AuditAt(const PartitionTable& table, const Topology& t) {
  Audited out;
  PartitionTable view = TableInSectors(table, t.logical_sector_size, &out.left_out);
  view.disk_size_sectors = t.size_sectors();
  AuditReport report = AuditTable(view, t);
  for (const PartitionAudit& p : report.partitions) {
    auto& v = out.verdicts[p.number];
    v[std::string(kAlignedKey)] = p.aligned;
    if (!p.aligned) out.misaligned.push_back(p.number);
    for (const CheckResult& c : p.checks) {
      if (!c.applicable) continue;
      const std::string key(CriterionKey(c.criterion));
      v[key] = c.ok;
      out.details[p.number][key] = c.detail;
    }
  }
  return out;
}

// "partitions 2 and 4 now fail parted's align-check; partition 1 now passes fdisk's ...".
std::vector<std::string> FlipSentences(const Audited& before, const Audited& after) {
  std::vector<std::string> out;
  for (const VerdictName& v : kVerdicts) {
    std::vector<uint32_t> now_fail;
    std::vector<uint32_t> now_pass;
    for (const auto& [number, checks] : after.verdicts) {
      auto was = before.verdicts.find(number);
      if (was == before.verdicts.end()) continue;
      auto a = checks.find(v.key);
      auto b = was->second.find(v.key);
      if (a == checks.end() || b == was->second.end() || a->second == b->second) continue;
      (a->second ? now_pass : now_fail).push_back(number);
    }
    if (!now_fail.empty())
      out.push_back(fmt::format("{} now fail{} {}", Numbers(now_fail),
                                now_fail.size() == 1 ? "s" : "", v.name));
    if (!now_pass.empty())
      out.push_back(fmt::format("{} now pass{} {}", Numbers(now_pass),
                                now_pass.size() == 1 ? "es" : "", v.name));
  }
  return out;
}

// --- identity ---------------------------------------------------------------------------------

// 1: both known and equal; -1: both known and different; 0: one is unknown.
int CompareIds(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return 0;
  return a == b ? 1 : -1;
}

bool SameGptGuids(const PartitionTable& a, const PartitionTable& b) {
  if (a.label != LabelType::kGpt || b.label != LabelType::kGpt || a.disk_id.empty() ||
      a.disk_id != b.disk_id) {
    return false;
  }
  return std::all_of(a.partitions.begin(), a.partitions.end(), [&](const Partition& p) {
    return std::any_of(b.partitions.begin(), b.partitions.end(),
                       [&](const Partition& q) { return !p.uuid.empty() && q.uuid == p.uuid; });
  });
}

// How many of `before`'s partitions are recognised by what they hold: the digest of their
// first bytes where they were or where a partition of `now` starts, or the filesystem UUID.
size_t RecognisedContents(const Snapshot& before, const Snapshot& now,
                          const std::vector<ContentDigest>& heads_now) {
  size_t found = 0;
  for (const Partition& p : before.table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    const ContentDigest* d = before.DigestAt(StartBytes(before.table, p));
    bool hit = false;
    if (d) {
      hit = std::any_of(heads_now.begin(), heads_now.end(),
                        [&](const ContentDigest& h) {
                          return h.offset_bytes == d->offset_bytes && h.xxh64 == d->xxh64;
                        }) ||
            std::any_of(now.digests.begin(), now.digests.end(),
                        [&](const ContentDigest& h) { return h.xxh64 == d->xxh64; });
    }
    if (!hit && !p.contents.fs_uuid.empty()) {
      hit =
          std::any_of(now.table.partitions.begin(), now.table.partitions.end(),
                      [&](const Partition& q) { return q.contents.fs_uuid == p.contents.fs_uuid; });
    }
    // A partition of zeros (or one whose first bytes repeat elsewhere) proves little, but it
    // does not contradict either.
    if (hit && p.contents.MayHoldData()) ++found;
  }
  return found;
}

void DecideIdentity(const Snapshot& before, const Snapshot& now,
                    const std::vector<ContentDigest>& heads_now, VerifyReport* r) {
  const Identity& a = before.identity;
  const Identity& b = now.identity;
  const int wwn = CompareIds(a.wwn, b.wwn);
  const int serial = CompareIds(a.serial, b.serial);
  if (wwn == 1) {
    r->matched_by = "wwn";
    r->identity.push_back(fmt::format("the WWN {} matches", a.wwn));
  } else if (serial == 1 && wwn != -1) {
    r->matched_by = "serial";
    r->identity.push_back(fmt::format("the serial number {} matches", a.serial));
  }
  if (r->matched_by.empty() && (wwn == -1 || serial == -1)) {
    const std::string what = wwn == -1 ? fmt::format("WWN {}, now {}", a.wwn, b.wwn)
                                       : fmt::format("serial {}, now {}", a.serial, b.serial);
    const bool through_bridge =
        a.usb_bridge.has_value() || b.usb_bridge.has_value() || a.transport != b.transport;
    if (!through_bridge) {
      r->identity.push_back(fmt::format(
          "{}: another disk (attached the same way both times, so the number is the disk's own; "
          "a copy of its table or data does not make it the same disk)",
          what));
      return;
    }
    r->identity.push_back(fmt::format(
        "{}: not decisive, since the disk moved between a USB bridge and another attachment and "
        "bridges often report their own number",
        what));
  }
  if (r->matched_by.empty()) {
    if (SameGptGuids(before.table, now.table)) {
      r->matched_by = "table_guids";
      r->identity.push_back(
          fmt::format("the GPT's disk GUID {} and the GUIDs of all {} partitions match",
                      before.table.disk_id, before.table.partitions.size()));
    } else if (before.table.label == LabelType::kDos && now.table.label == LabelType::kDos &&
               !before.table.disk_id.empty() && before.table.disk_id != "0x00000000" &&
               before.table.disk_id == now.table.disk_id) {
      r->matched_by = "dos_disk_id";
      r->identity.push_back(
          fmt::format("the DOS disk identifier {} matches", before.table.disk_id));
    }
  }
  const size_t data_partitions = static_cast<size_t>(std::count_if(
      before.table.partitions.begin(), before.table.partitions.end(), [](const Partition& p) {
        return p.kind != PartitionKind::kExtended && p.contents.MayHoldData();
      }));
  const size_t recognised = RecognisedContents(before, now, heads_now);
  if (r->matched_by.empty() && recognised > 0) {
    r->matched_by = "content_digests";
  }
  if (data_partitions > 0 && (r->matched_by == "content_digests" || recognised > 0)) {
    r->identity.push_back(fmt::format(
        "the contents of {} of {} partitions with data are found (digest of the first {} or "
        "filesystem UUID)",
        recognised, data_partitions, FormatSize(kContentDigestBytes)));
  }
  if (r->matched_by.empty()) {
    r->identity.push_back(
        "nothing identifies it: no serial number or WWN matches, the table's GUIDs differ and "
        "no partition's contents are found");
    return;
  }
  r->same_disk = true;
}

// --- changes ----------------------------------------------------------------------------------

std::string BridgeText(const std::optional<UsbBridge>& b) {
  if (!b) return "";
  std::string text = b->vendor_id + ":" + b->product_id;
  if (!b->manufacturer.empty() || !b->product.empty()) {
    text += " " + b->manufacturer + (b->manufacturer.empty() ? "" : " ") + b->product;
  }
  return text;
}

nlohmann::json TextOrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

struct TopologyField {
  const char* name;
  uint64_t Topology::*member;
};
constexpr std::array<TopologyField, 5> kTopologyFields{{
    {"logical_sector_size", &Topology::logical_sector_size},
    {"physical_sector_size", &Topology::physical_sector_size},
    {"minimum_io_size", &Topology::minimum_io_size},
    {"optimal_io_size", &Topology::optimal_io_size},
    {"alignment_offset", &Topology::alignment_offset},
}};

void IdentityChanges(const Snapshot& before, const Snapshot& now, VerifyReport* r) {
  const Identity& a = before.identity;
  const Identity& b = now.identity;
  if (a.transport != b.transport) {
    const bool topology_changed =
        std::any_of(kTopologyFields.begin(), kTopologyFields.end(),
                    [&](const TopologyField& f) {
                      return before.topology.*f.member != now.topology.*f.member;
                    }) ||
        before.topology.size_bytes != now.topology.size_bytes;
    r->changes.push_back({"transport", ToString(a.transport), ToString(b.transport),
                          topology_changed
                              ? "the disk is attached another way: its topology comes from "
                                "another controller now (the topology fields below)"
                              : "the disk is attached another way; its topology is the same as "
                                "before"});
  }
  if (BridgeText(a.usb_bridge) != BridgeText(b.usb_bridge)) {
    r->changes.push_back(
        {"usb_bridge", TextOrNull(BridgeText(a.usb_bridge)), TextOrNull(BridgeText(b.usb_bridge)),
         b.usb_bridge ? "a USB bridge now translates between the disk and the computer; bridges "
                        "report their own I/O sizes and sometimes their own sector size"
                      : "no USB bridge any more: the disk reports its own topology"});
  }
  for (const auto& [field, x, y] :
       {std::tuple<const char*, const std::string&, const std::string&>{"model", a.model, b.model},
        {"serial", a.serial, b.serial},
        {"wwn", a.wwn, b.wwn}}) {
    if (x != y) {
      r->changes.push_back({field, TextOrNull(x), TextOrNull(y),
                            "reported by whatever the disk is attached to (a USB bridge may show "
                            "its own)"});
    }
  }
}

// What reading a table written for `written_for`-byte sectors with `lss`-byte ones does.
std::string MisreadText(uint64_t written_for, uint64_t lss, LabelType label) {
  const std::string where =
      written_for > lss
          ? fmt::format("lands at 1/{} of the byte it was written for", written_for / lss)
          : fmt::format("lands {} times as far into the disk as the byte it was written for",
                        lss / written_for);
  const std::string what =
      label == LabelType::kGpt
          ? "the kernel, fdisk and gdisk find no GPT (gdisk offers to create a new, empty one: "
            "one write and the table is gone)"
          : "the kernel and fdisk show its partitions at the wrong places (reading one shows "
            "other bytes, writing one destroys them)";
  return fmt::format(
      "the table is written for {}-byte sectors: read with {}-byte sectors every LBA in it {}, "
      "so {}; translate it",
      written_for, lss, where, what);
}

// The sentence for a logical sector size change: what it does to the table.
std::string TableConsequence(const Snapshot& now) {
  const uint64_t lss = now.topology.logical_sector_size;
  if (!now.table_written_for || now.table.label == LabelType::kNone) {
    return "every LBA now counts in another unit";
  }
  const uint64_t w = *now.table_written_for;
  if (w == lss) {
    return fmt::format("the table is written for {}-byte sectors, as the disk now has", lss);
  }
  return MisreadText(w, lss, now.table.label);
}

// What going from topology `from` to `to` changes for each partitioner and each partition's
// verdicts, one sentence each.
std::vector<std::string> TopologyConsequences(const Topology& from, const Topology& to,
                                              const PartitionTable& table,
                                              const ToolVersions& versions) {
  std::vector<std::string> out = ToolDifferences(from, to, table, versions);
  for (std::string& s : FlipSentences(AuditAt(table, from), AuditAt(table, to))) {
    out.push_back(std::move(s));
  }
  return out;
}

// Each topology field that changed, with what it means. The consequences are those of the
// whole change (the topology before against the topology now, never a half-changed one), each
// said once, under the field it needs: the first field that, changed back alone, makes it go
// away (the first changed field when only several together cause it).
void TopologyChanges(const Snapshot& before, const Snapshot& now, const ToolVersions& versions,
                     VerifyReport* r) {
  std::vector<const TopologyField*> changed;
  for (const TopologyField& f : kTopologyFields) {
    if (before.topology.*f.member != now.topology.*f.member) changed.push_back(&f);
  }
  std::map<const TopologyField*, std::vector<std::string>> said;
  if (!changed.empty()) {
    const std::vector<std::string> whole =
        TopologyConsequences(before.topology, now.topology, now.table, versions);
    std::map<const TopologyField*, std::vector<std::string>> without;
    for (const TopologyField* f : changed) {
      Topology t = now.topology;
      t.*f->member = before.topology.*f->member;
      without[f] = TopologyConsequences(before.topology, t, now.table, versions);
    }
    for (const std::string& sentence : whole) {
      const TopologyField* owner = changed.front();
      for (const TopologyField* f : changed) {
        const std::vector<std::string>& w = without[f];
        if (std::find(w.begin(), w.end(), sentence) == w.end()) {
          owner = f;
          break;
        }
      }
      said[owner].push_back(sentence);
    }
  }
  const Audited now_audit = AuditAt(now.table, now.topology);
  for (const TopologyField* f : changed) {
    std::vector<std::string> parts;
    if (f->member == &Topology::logical_sector_size) {
      parts.push_back(TableConsequence(now));
      if (!now_audit.left_out.empty()) {
        parts.push_back(fmt::format("{} {} not whole {}-byte sectors", Numbers(now_audit.left_out),
                                    now_audit.left_out.size() == 1 ? "is" : "are",
                                    now.topology.logical_sector_size));
      }
    }
    for (std::string& s : said[f]) parts.push_back(std::move(s));
    if (parts.empty()) parts.push_back("no partitioner changes what it does, in bytes");
    r->changes.push_back({f->name, before.topology.*f->member, now.topology.*f->member,
                          Capitalized(Join(parts, "; "))});
  }
  if (before.topology.size_bytes != now.topology.size_bytes) {
    const bool smaller = now.topology.size_bytes < before.topology.size_bytes;
    std::string consequence =
        smaller ? "the disk shows fewer bytes than before (some USB bridges hide the last ones)"
                : "the disk shows more bytes than before (some USB bridges hide the last ones)";
    if (now.table.label == LabelType::kGpt) {
      consequence += "; the backup GPT is not at the end of the disk any more";
    }
    std::vector<uint32_t> beyond;
    for (const Partition& p : now.table.partitions) {
      if (StartBytes(now.table, p) + SizeBytes(now.table, p) > now.topology.size_bytes) {
        beyond.push_back(p.number);
      }
    }
    if (!beyond.empty()) {
      consequence += fmt::format("; {} end{} beyond the disk now", Numbers(beyond),
                                 beyond.size() == 1 ? "s" : "");
    }
    r->changes.push_back({"size_bytes", before.topology.size_bytes, now.topology.size_bytes,
                          Capitalized(consequence)});
  }
}

void TableChanges(const Snapshot& before, const Snapshot& now, VerifyReport* r) {
  const PartitionTable& a = before.table;
  const PartitionTable& b = now.table;
  if (a.label != b.label) {
    r->changes.push_back({"table_type", ToString(a.label), ToString(b.label),
                          b.label == LabelType::kNone
                              ? "No partition table is found any more"
                              : "The disk holds another kind of partition table"});
    return;
  }
  if (before.table_written_for != now.table_written_for && before.table_written_for &&
      now.table_written_for) {
    const uint64_t lss = now.topology.logical_sector_size;
    r->changes.push_back(
        {"table_sector_size", *before.table_written_for, *now.table_written_for,
         *now.table_written_for == lss
             ? fmt::format("The table was rewritten (translated) for {}-byte sectors, the "
                           "disk's: every partition is where its bytes are",
                           lss)
             : fmt::format("The table was rewritten since the snapshot, and is not written for "
                           "the disk's {}-byte sectors: {}",
                           lss, MisreadText(*now.table_written_for, lss, now.table.label))});
  }
  if (a.disk_id != b.disk_id) {
    r->changes.push_back({"disk_id", TextOrNull(a.disk_id), TextOrNull(b.disk_id),
                          "The table was created anew (another disk identifier)"});
  }
  if (a.fingerprint != b.fingerprint) {
    r->changes.push_back({"table_fingerprint", a.fingerprint, b.fingerprint,
                          "The table's bytes changed since the snapshot"});
  }
}

const ContentDigest* FindDigest(const std::vector<ContentDigest>& digests, uint64_t offset) {
  for (const ContentDigest& d : digests) {
    if (d.offset_bytes == offset) return &d;
  }
  return nullptr;
}

// The command that puts `p` (of `table`, the snapshot's) back into the disk's table as the
// snapshot recorded it: its bytes, type, GUID and name, in the disk's sectors now.
std::string RestoreEntryCommand(const Partition& p, const PartitionTable& table,
                                const Snapshot& now) {
  const uint64_t lss = now.topology.logical_sector_size;
  std::string type = p.type_code;
  if (type.rfind("0x", 0) == 0) type = type.substr(2);  // sfdisk reads DOS types as hex
  std::string entry = fmt::format("start={}, size={}, type={}", StartBytes(table, p) / lss,
                                  SizeBytes(table, p) / lss, type);
  if (!p.uuid.empty()) entry += ", uuid=" + p.uuid;
  if (!p.name.empty()) entry += fmt::format(", name=\"{}\"", p.name);
  if (p.bootable) entry += ", bootable";
  std::string quoted;
  for (char c : entry) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return fmt::format("echo '{}' | sfdisk -N {} {}", quoted, p.number,
                     ShellQuote(now.identity.path));
}

void PartitionChanges(const Snapshot& before, const Snapshot& now,
                      const std::vector<ContentDigest>& heads_now, VerifyReport* r) {
  const PartitionTable& a = before.table;
  const PartitionTable& b = now.table;
  for (const Partition& p : a.partitions) {
    const std::string field = fmt::format("partitions[{}]", p.number);
    const uint64_t start = StartBytes(a, p);
    const ContentDigest* was = before.DigestAt(start);
    const ContentDigest* still = FindDigest(heads_now, start);
    const bool data_still_there = was && still && still->xxh64 == was->xxh64;
    const Partition* q = b.Find(p.number);
    if (!q) {
      r->changes.push_back(
          {field, Extent(a, p), nullptr,
           data_still_there
               ? fmt::format("No partition {} any more, but its data is still at byte {} (its "
                             "first {} match): put its entry back as the snapshot has it, rather "
                             "than creating a new one: {}",
                             p.number, start, FormatSize(was->length_bytes),
                             RestoreEntryCommand(p, a, now))
               : fmt::format("No partition {} any more", p.number)});
      continue;
    }
    if (StartBytes(b, *q) != start || SizeBytes(b, *q) != SizeBytes(a, p)) {
      const ContentDigest* moved = now.DigestAt(StartBytes(b, *q));
      std::string consequence;
      if (was && moved && moved->xxh64 == was->xxh64) {
        consequence = "The partition moved with its data (its first bytes match)";
      } else if (data_still_there) {
        consequence = fmt::format(
            "The table points elsewhere, but the data is still at byte {}: the partition now "
            "shows other bytes",
            start);
      } else {
        consequence = "The partition is at another place";
      }
      r->changes.push_back({field + ".extent", Extent(a, p), Extent(b, *q), consequence});
    }
    for (const auto& [key, x, y] : {std::tuple<const char*, const std::string&, const std::string&>{
                                        "type", p.type_code, q->type_code},
                                    {"uuid", p.uuid, q->uuid},
                                    {"name", p.name, q->name}}) {
      if (x != y) {
        r->changes.push_back({fmt::format("{}.{}", field, key), TextOrNull(x), TextOrNull(y),
                              "The table entry was edited"});
      }
    }
    const PartitionContents& c = p.contents;
    const PartitionContents& d = q->contents;
    if (c.fs_type != d.fs_type || c.fs_uuid != d.fs_uuid) {
      const bool gone = !c.fs_type.empty() && d.fs_type.empty();
      r->changes.push_back({field + ".filesystem",
                            TextOrNull(c.fs_type + (c.fs_uuid.empty() ? "" : " " + c.fs_uuid)),
                            TextOrNull(d.fs_type + (d.fs_uuid.empty() ? "" : " " + d.fs_uuid)),
                            gone ? "No filesystem is found where the partition starts any more"
                                 : "Another filesystem is found where the partition starts"});
    } else if (was && now.DigestAt(StartBytes(b, *q)) &&
               now.DigestAt(StartBytes(b, *q))->xxh64 != was->xxh64 && StartBytes(b, *q) == start) {
      r->changes.push_back({field + ".head_xxh64", was->xxh64,
                            now.DigestAt(StartBytes(b, *q))->xxh64,
                            "Its first bytes changed: expected once it was used (mounting "
                            "updates a superblock), so it does not decide anything"});
    }
  }
  for (const Partition& q : b.partitions) {
    if (!a.Find(q.number)) {
      r->changes.push_back({fmt::format("partitions[{}]", q.number), nullptr, Extent(b, q),
                            "A partition the snapshot does not have"});
    }
  }
}

void VerdictChanges(const Snapshot& before, const Snapshot& now, VerifyReport* r) {
  const Audited was = AuditAt(before.table, before.topology);
  const Audited is = AuditAt(now.table, now.topology);
  for (const auto& [number, checks] : is.verdicts) {
    auto old = was.verdicts.find(number);
    if (old == was.verdicts.end()) continue;
    for (const VerdictName& v : kVerdicts) {
      auto a = checks.find(v.key);
      auto b = old->second.find(v.key);
      if (a == checks.end() || b == old->second.end() || a->second == b->second) continue;
      std::string detail;
      auto d = is.details.find(number);
      if (d != is.details.end()) {
        auto text = d->second.find(v.key);
        if (text != d->second.end()) detail = text->second;
      }
      std::string consequence = fmt::format("{} {} {}", Capitalized(Numbers({number})),
                                            a->second ? "passes" : "fails", v.name);
      if (!detail.empty()) consequence += ": " + detail;
      r->changes.push_back(
          {fmt::format("partitions[{}].{}", number, v.key), b->second, a->second, consequence});
    }
  }
}

void DecideActions(const Snapshot& now, const TranslateOutlook& translate, VerifyReport* r) {
  const uint64_t lss = now.topology.logical_sector_size;
  const std::string device = ShellQuote(now.identity.path);
  if (now.table_written_for && *now.table_written_for != lss &&
      now.table.label != LabelType::kNone) {
    const uint64_t w = *now.table_written_for;
    r->actions.push_back(kActionTranslate);
    r->translate = translate;
    std::string reason = fmt::format(
        "the table is written for {}-byte sectors and the disk has {}-byte sectors now", w, lss);
    if (translate.refusals.empty()) {
      reason += fmt::format(
          ": 'partalign translate {}' rewrites it for {}-byte sectors, every partition at the "
          "same byte offsets",
          device, lss);
    } else if (translate.only_acceptable) {
      std::vector<std::string> numbers;
      for (uint32_t n : translate.acceptable) numbers.push_back(std::to_string(n));
      reason += fmt::format(
          ", but 'partalign translate {}' refuses it as it stands: {}. 'partalign translate "
          "--accept {} {}' rewrites it for {}-byte sectors, every partition at the same byte "
          "offsets, if you accept that",
          device, Join(translate.refusals, "; "), Join(numbers, ","), device, lss);
    } else {
      reason += fmt::format(
          ", but 'partalign translate {}' refuses it: {}. Instead: use the disk where it has "
          "{}-byte sectors, where the table and filesystems are read as they are; or do there "
          "what the reasons above ask, then translate",
          device, Join(translate.refusals, "; "), w);
    }
    r->action_reasons.push_back(std::move(reason));
  }
  const Audited audit = AuditAt(now.table, now.topology);
  if (!audit.misaligned.empty()) {
    r->actions.push_back(kActionPlan);
    r->action_reasons.push_back(fmt::format(
        "{} {} misaligned on the disk's topology now{}: 'partalign plan {}' says what to change",
        Numbers(audit.misaligned), audit.misaligned.size() == 1 ? "is" : "are",
        r->actions.size() > 1 ? " (once translated)" : "", device));
  }
  if (r->actions.empty()) {
    r->actions.push_back(kActionNone);
    r->action_reasons.push_back(
        "the table is written for the disk's sector size and every partition is aligned on its "
        "topology now");
  }
}

}  // namespace

bool VerifyReport::action_needed() const {
  return std::any_of(actions.begin(), actions.end(),
                     [](const std::string& a) { return a != kActionNone; });
}

PartitionTable TableInSectors(const PartitionTable& table, uint64_t sector_size,
                              std::vector<uint32_t>* left_out) {
  PartitionTable view;
  view.label = table.label;
  view.sector_size = sector_size;
  view.disk_size_sectors = table.disk_size_sectors * table.sector_size / sector_size;
  view.disk_id = table.disk_id;
  view.fingerprint = table.fingerprint;
  for (const Partition& p : table.partitions) {
    const uint64_t start = StartBytes(table, p);
    const uint64_t size = SizeBytes(table, p);
    if (start % sector_size != 0 || size % sector_size != 0) {
      left_out->push_back(p.number);
      continue;
    }
    Partition q = p;
    q.start_sector = start / sector_size;
    q.size_sectors = size / sector_size;
    view.partitions.push_back(std::move(q));
  }
  return view;
}

VerifyReport CompareSnapshots(const Snapshot& before, const Snapshot& now,
                              const std::vector<ContentDigest>& heads_now,
                              const ToolVersions& versions, const TranslateOutlook& translate) {
  VerifyReport r;
  DecideIdentity(before, now, heads_now, &r);
  if (!r.same_disk) return r;
  IdentityChanges(before, now, &r);
  TopologyChanges(before, now, versions, &r);
  TableChanges(before, now, &r);
  PartitionChanges(before, now, heads_now, &r);
  VerdictChanges(before, now, &r);
  DecideActions(now, translate, &r);
  return r;
}

nlohmann::json VerifyJson(const VerifyReport& r, const std::string& device,
                          const std::string& snapshot_path, const Snapshot& before) {
  nlohmann::json changes = nlohmann::json::array();
  for (const VerifyChange& c : r.changes) {
    changes.push_back({{"field", c.field},
                       {"before", c.before},
                       {"after", c.after},
                       {"consequence", c.consequence}});
  }
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"device", device},
          {"snapshot", snapshot_path},
          {"snapshot_created", before.created},
          {"snapshot_device", before.identity.path},
          {"same_disk", r.same_disk},
          {"matched_by", TextOrNull(r.matched_by)},
          {"identity", r.identity},
          {"changes", changes},
          {"actions", r.actions},
          {"action_reasons", r.action_reasons},
          {"translate_refusals", r.translate.refusals},
          {"translate_accept", r.translate.only_acceptable ? nlohmann::json(r.translate.acceptable)
                                                           : nlohmann::json::array()}};
}

std::vector<std::string> VerifyLines(const VerifyReport& r, const std::string& device,
                                     const Snapshot& before) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("'{}' against the snapshot of '{}' taken {} ({}):", device,
                              before.identity.path, before.created,
                              ToString(before.identity.transport)));
  if (!r.same_disk) {
    lines.push_back("not the same disk:");
  } else {
    lines.push_back(fmt::format("same disk (matched by {}):", r.matched_by));
  }
  for (const std::string& s : r.identity) lines.push_back("  " + s);
  if (!r.same_disk) return lines;
  if (r.changes.empty()) {
    lines.push_back("No changes.");
  } else {
    lines.push_back(
        fmt::format("{} change{}:", r.changes.size(), r.changes.size() == 1 ? "" : "s"));
    for (const VerifyChange& c : r.changes) {
      auto text = [](const nlohmann::json& v) {
        return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
      };
      lines.push_back(fmt::format("  {}: {} -> {}", c.field, text(c.before), text(c.after)));
      lines.push_back("    " + c.consequence);
    }
  }
  for (size_t i = 0; i < r.actions.size(); ++i) {
    lines.push_back(fmt::format("action: {}: {}", r.actions[i],
                                i < r.action_reasons.size() ? r.action_reasons[i] : ""));
  }
  return lines;
}

}  // namespace partalign
