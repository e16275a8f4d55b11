// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/partition_table.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace partalign {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string SectorRange(uint64_t start, uint64_t end) {
  return fmt::format("sectors {}-{}", start, end);
}

constexpr std::array<std::pair<ContentProof, std::string_view>, 5> kProofNames{{
    {ContentProof::kUnscanned, "unscanned"},
    {ContentProof::kSignature, "signature"},
    {ContentProof::kData, "data"},
    {ContentProof::kZeros, "zeros"},
    {ContentProof::kHoles, "holes"},
}};

}  // namespace

std::string_view ToString(ContentProof proof) {
  for (const auto& [p, name] : kProofNames) {
    if (p == proof) return name;
  }
  return "unscanned";
}

std::optional<ContentProof> ContentProofFromString(std::string_view text) {
  for (const auto& [p, name] : kProofNames) {
    if (name == text) return p;
  }
  return std::nullopt;
}

bool IsBiosBootPartition(std::string_view type_code) {
  return Lower(std::string(type_code)) == Lower(std::string(kBiosBootPartitionType));
}

std::string MayHoldDataText(const PartitionContents& c) {
  if (!c.fs_type.empty()) return fmt::format("holds data ({})", c.fs_type);
  switch (c.proof) {
    case ContentProof::kData:
      return c.data_offset_bytes ? fmt::format("holds data (no signature, byte {} is not zero)",
                                               *c.data_offset_bytes)
                                 : "holds data (no signature)";
    case ContentProof::kZeros:
      return "holds nothing (every byte read: zeros)";
    case ContentProof::kHoles:
      return "holds nothing (only holes in the image)";
    case ContentProof::kSignature:
      return "holds data";
    case ContentProof::kUnscanned:
      break;
  }
  return "may hold data (no signature, not proven empty)";
}

void CopyContentProofs(const PartitionTable& from, PartitionTable* to) {
  for (Partition& p : to->partitions) {
    const Partition* known = from.Find(p.number);
    if (known == nullptr || known->start_sector != p.start_sector ||
        known->size_sectors != p.size_sectors) {
      continue;
    }
    if (!p.contents.zeros_from_bytes)
      p.contents.zeros_from_bytes = known->contents.zeros_from_bytes;
    if (!p.contents.tail_data_bytes) p.contents.tail_data_bytes = known->contents.tail_data_bytes;
    if (p.contents.proof != ContentProof::kUnscanned) continue;
    p.contents.proof = known->contents.proof;
    p.contents.data_offset_bytes = known->contents.data_offset_bytes;
  }
}

Status CheckChangeable(const PartitionTable& table) {
  if (WorstSeverity(table.findings) < TableSeverity::kReadOnly) return {};
  return MakeError(
      fmt::format("{}; partalign changes only a sound table (repair it first, for "
                  "example with gdisk, or restore a backup)",
                  DescribeFindings(table.findings, TableSeverity::kReadOnly)));
}

std::vector<std::string> ScanVersusTable(const TableScan& scan, const PartitionTable& table) {
  std::vector<std::string> out;
  if (scan.label != table.label) {
    out.push_back(fmt::format("libfdisk reads a {} table, the scan a {} table",
                              ToString(table.label), ToString(scan.label)));
    return out;
  }
  if (Lower(scan.disk_id) != Lower(table.disk_id)) {
    out.push_back(
        fmt::format("disk identifier: libfdisk {}, the scan {}", table.disk_id, scan.disk_id));
  }
  if (scan.label == LabelType::kGpt && (scan.first_usable_lba != table.first_usable_lba ||
                                        scan.last_usable_lba != table.last_usable_lba)) {
    out.push_back(fmt::format("usable area: libfdisk {}, the scan {}",
                              SectorRange(table.first_usable_lba, table.last_usable_lba),
                              SectorRange(scan.first_usable_lba, scan.last_usable_lba)));
  }
  for (const ScannedPartition& s : scan.partitions) {
    const Partition* p = table.Find(s.number);
    if (!p) {
      out.push_back(fmt::format("partition {}: found by the scan, not by libfdisk", s.number));
      continue;
    }
    if (p->kind != s.kind || p->start_sector != s.start_sector ||
        p->size_sectors != s.size_sectors) {
      out.push_back(
          fmt::format("partition {}: libfdisk reads a {} partition of {} sectors at {}, "
                      "the scan a {} partition of {} sectors at {}",
                      s.number, ToString(p->kind), p->size_sectors, p->start_sector,
                      ToString(s.kind), s.size_sectors, s.start_sector));
    }
  }
  for (const Partition& p : table.partitions) {
    bool found = std::any_of(scan.partitions.begin(), scan.partitions.end(),
                             [&](const ScannedPartition& s) { return s.number == p.number; });
    if (!found) {
      out.push_back(fmt::format("partition {}: found by libfdisk, not by the scan", p.number));
    }
  }
  return out;
}

const Partition* PartitionTable::Find(uint32_t number) const {
  for (const Partition& p : partitions) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

}  // namespace partalign
