// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/boot_steps.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "io/device/target.h"

namespace partalign {
namespace {

// The start in bytes of partition `number` in `table` (0: the disk: 0); nullopt when absent.
std::optional<uint64_t> StartOf(const PartitionTable& table, uint32_t number) {
  if (number == 0) return 0;
  const Partition* p = table.Find(number);
  if (p == nullptr) return std::nullopt;
  return p->start_sector * table.sector_size;
}

// The step that changes `cause`'s entry (its move, or the table-only change that rides in it).
std::optional<size_t> StepOf(const std::vector<RecordStep>& steps, uint32_t cause) {
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].moved == cause) return k;
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    const std::vector<uint32_t>& c = steps[k].changed;
    if (std::find(c.begin(), c.end(), cause) != c.end()) return k;
  }
  return std::nullopt;
}

// A sector of a partition's bytes, wherever the partition is: (partition, offset of the
// sector from its start).
using SectorKey = std::pair<uint32_t, uint64_t>;

}  // namespace

Result<std::vector<StepRecords>> RecordsPerStep(const BootReport& report, int fd,
                                                const std::string& path,
                                                const PartitionTable& original,
                                                std::vector<RecordStep>& steps,
                                                std::vector<ByteEdit>* unassigned) {
  const uint64_t ss = original.sector_size;
  std::vector<StepRecords> out(steps.size());
  // The edits of each step, with their findings' descriptions.
  std::vector<std::vector<const ByteEdit*>> edits(steps.size());
  std::vector<std::vector<std::string>> whats(steps.size());
  for (const BootFinding& f : report.findings) {
    if (f.verdict != BootVerdict::kUpdate) continue;
    for (const ByteEdit& e : f.edits) {
      std::optional<size_t> k = e.cause == 0 ? std::nullopt : StepOf(steps, e.cause);
      if (!k) {
        unassigned->push_back(e);
        continue;
      }
      edits[*k].push_back(&e);
      if (out[*k].descriptions.empty() || out[*k].descriptions.back() != f.description) {
        out[*k].descriptions.push_back(f.description);
      }
    }
  }
  // The bytes of each sector an edit touches, as the steps so far leave them.
  std::map<SectorKey, std::vector<uint8_t>> sectors;
  for (size_t k = 0; k < steps.size(); ++k) {
    std::vector<SectorKey> touched;
    std::map<SectorKey, std::vector<uint8_t>> before;
    for (const ByteEdit* e : edits[k]) {
      const uint64_t first = e->offset_bytes / ss * ss;
      const uint64_t end = (e->offset_bytes + e->new_bytes.size() + ss - 1) / ss * ss;
      for (uint64_t at = first; at < end; at += ss) {
        const SectorKey key{e->partition, at};
        if (!sectors.count(key)) {
          std::optional<uint64_t> start = StartOf(original, e->partition);
          if (!start) {
            return MakeError(fmt::format(
                "a boot record of partition {} names no partition of the table", e->partition));
          }
          std::vector<uint8_t> bytes(ss);
          Result<size_t> got = ReadAt(fd, bytes.data(), ss, *start + at, path);
          if (!got) return got.error();
          if (*got != ss) {
            return MakeError(fmt::format("'{}': cannot read byte {}", path, *start + at));
          }
          sectors[key] = std::move(bytes);
        }
        if (!before.count(key)) {
          touched.push_back(key);
          before[key] = sectors[key];
        }
      }
      for (size_t i = 0; i < e->new_bytes.size(); ++i) {
        const uint64_t byte = e->offset_bytes + i;
        std::vector<uint8_t>& sector = sectors[{e->partition, byte / ss * ss}];
        if (sector[byte % ss] != e->old_bytes[i]) {
          return MakeError(fmt::format(
              "a boot record at byte {} of partition {} does not hold what it was read with "
              "(the disk changed under the plan)",
              byte, e->partition));
        }
        sector[byte % ss] = e->new_bytes[i];
      }
    }
    RecordStep& step = steps[k];
    for (const SectorKey& key : touched) {
      const auto& [partition, at] = key;
      std::optional<uint64_t> start = StartOf(*step.after, partition);
      if (!start) {
        return MakeError(
            fmt::format("partition {} is not in the table of step {}", partition, k + 1));
      }
      const uint64_t offset = *start + at;
      const std::vector<uint8_t>& old_bytes = before.at(key);
      const std::vector<uint8_t>& new_bytes = sectors.at(key);
      out[k].edited.push_back({offset, offset + ss});
      // Inside a table range of the step (the MBR): the range's new bytes take the edit.
      bool merged = false;
      for (TableRange& r : step.transition->ranges) {
        if (offset < r.offset_bytes || offset + ss > r.offset_bytes + r.length_bytes) continue;
        const uint64_t in = offset - r.offset_bytes;
        for (size_t i = 0; i < ss; ++i) {
          if (old_bytes[i] == new_bytes[i]) continue;
          if (r.old_bytes[in + i] != old_bytes[i]) {
            return MakeError(
                fmt::format("a boot record at byte {} and the {} disagree about its bytes",
                            offset + i, AreaName(step.transition->label, r)));
          }
          r.new_bytes[in + i] = new_bytes[i];
        }
        merged = true;
      }
      if (merged) continue;
      // Inside the moved partition: its bytes are the moved data's until the table is written.
      const bool in_data = partition == step.moved && partition != 0;
      out[k].updates.push_back({offset, old_bytes, new_bytes, in_data});
    }
  }
  return out;
}

}  // namespace partalign
