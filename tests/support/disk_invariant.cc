// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/disk_invariant.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/table/fdisk_table.h"
#include "io/used/used_map_reader.h"
#include "io/util/text_file.h"
#include "io/util/unique_fd.h"
#include "partalign/layout/plan.h"
#include "support/run_command.h"

namespace partalign::test {
namespace {

using Range = std::pair<uint64_t, uint64_t>;  // [first, end) in bytes

constexpr size_t kCompareChunk = 1 << 20;

struct Place {
  uint64_t start_bytes = 0;
  uint64_t size_bytes = 0;
  bool container = false;  // a DOS extended partition: its logical ones are checked instead
};

// Partition number -> place: as sfdisk reads `target` (a block device, or an image of 512-byte
// sectors: sfdisk 2.38 has no --sector-size), else as libfdisk does through partalign's reader.
std::map<uint32_t, Place> Places(const std::string& target, unsigned sector_size) {
  std::map<uint32_t, Place> out;
  const bool block = RunCommand({"test", "-b", target}).exit_code == 0;
  if (!block && sector_size != 512) {
    Result<TableRead> read =
        ReadPartitionTable(target, {.sector_size = sector_size, .probe_contents = false});
    if (!read) return out;
    for (const Partition& p : read->table.partitions) {
      out[p.number] = {p.start_sector * sector_size, p.size_sectors * sector_size,
                       p.kind == PartitionKind::kExtended};
    }
    return out;
  }
  CommandResult r = RunCommand({"sfdisk", "-J", target});
  if (r.exit_code != 0) return out;  // no table: no partitions
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("partitiontable")) return out;
  const nlohmann::json& t = j["partitiontable"];
  const uint64_t ss = t.value("sectorsize", uint64_t{sector_size});
  for (const nlohmann::json& p : t.value("partitions", nlohmann::json::array())) {
    const std::string node = p.value("node", "");
    size_t digits = node.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(node[digits - 1]))) --digits;
    if (digits == node.size()) continue;
    const uint32_t number = static_cast<uint32_t>(std::stoul(node.substr(digits)));
    const std::string type = p.value("type", "");
    Place place{p.value("start", uint64_t{0}) * ss, p.value("size", uint64_t{0}) * ss, false};
    place.container = t.value("label", "") == "dos" && (type == "5" || type == "f" || type == "85");
    out[number] = place;
  }
  return out;
}

}  // namespace

DiskInvariantOptions InvariantOptionsForPlan(const std::string& plan_file, unsigned sector_size) {
  Result<std::string> text = ReadWholeFile(plan_file, "plan");
  if (!text) throw std::runtime_error(text.error().message);
  Result<Plan> plan = PlanFromJson(*text);
  if (!plan) throw std::runtime_error(plan.error().message);
  DiskInvariantOptions options;
  options.before_sector_size = options.after_sector_size = sector_size;
  for (const PlanAction& a : plan->actions) {
    if (a.kind == ActionKind::kTableOnly && a.empty != Emptiness::kNotClaimed) {
      options.left_behind.push_back(a.partition);
    }
  }
  return options;
}

void AddDryRunRecords(DiskInvariantOptions& options, const std::string& dry_run_json) {
  const nlohmann::json doc = nlohmann::json::parse(dry_run_json, nullptr, false);
  if (!doc.is_object()) throw std::runtime_error("not apply's dry-run JSON: " + dry_run_json);
  if (!doc.contains("steps")) return;  // a table-only plan rewrites no record
  for (const nlohmann::json& step : doc["steps"]) {
    for (const nlohmann::json& s : step["boot_records"]["sectors"]) {
      const uint64_t first = s["offset_bytes"];
      options.updated_records.emplace_back(first, first + s["length_bytes"].get<uint64_t>());
    }
  }
}

std::vector<Range> TableAreaRanges(const std::string& target, unsigned sector_size) {
  Result<TableRead> read =
      ReadPartitionTable(target, {.sector_size = sector_size, .probe_contents = false});
  std::vector<Range> out;
  if (!read) {
    // (A disk without a table reads as label "none", with no areas.)
    throw std::runtime_error(
        fmt::format("cannot locate the table areas of '{}': {}", target, read.error().message));
  }
  for (const TableArea& a : read->table.areas) {
    const uint64_t first = a.offset_bytes / sector_size * sector_size;
    const uint64_t end =
        (a.offset_bytes + a.size_bytes + sector_size - 1) / sector_size * sector_size;
    out.push_back({first, end});
  }
  return out;
}

namespace {

// `ranges` sorted and merged.
std::vector<Range> Merge(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (r.first >= r.second) continue;
    if (!out.empty() && r.first <= out.back().second) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// [lo, hi) minus `holes` (merged).
std::vector<Range> Minus(uint64_t lo, uint64_t hi, const std::vector<Range>& holes) {
  std::vector<Range> out;
  uint64_t at = lo;
  for (const Range& h : holes) {
    if (h.second <= at) continue;
    if (h.first >= hi) break;
    if (h.first > at) out.push_back({at, std::min(h.first, hi)});
    at = std::max(at, h.second);
    if (at >= hi) break;
  }
  if (at < hi) out.push_back({at, hi});
  return out;
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY)) {
    if (!fd_.valid()) throw std::runtime_error("cannot open '" + path + "'");
    size_ = static_cast<uint64_t>(::lseek(fd_.get(), 0, SEEK_END));
  }
  uint64_t size() const { return size_; }
  int fd() const { return fd_.get(); }
  // Bytes [offset, offset + n), zeros past the end.
  void Read(uint64_t offset, size_t n, std::vector<uint8_t>* out) const {
    out->assign(n, 0);
    size_t done = 0;
    while (done < n && offset + done < size_) {
      ssize_t got =
          ::pread(fd_.get(), out->data() + done, n - done, static_cast<off_t>(offset + done));
      if (got <= 0) throw std::runtime_error("cannot read '" + path_ + "'");
      done += static_cast<size_t>(got);
    }
  }

 private:
  std::string path_;
  UniqueFd fd_;
  uint64_t size_ = 0;
};

// The first offset in [0, length) where a[a_at + x] != b[b_at + x], if any.
std::optional<uint64_t> FirstDifference(const Reader& a, uint64_t a_at, const Reader& b,
                                        uint64_t b_at, uint64_t length) {
  std::vector<uint8_t> x, y;
  for (uint64_t done = 0; done < length;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kCompareChunk, length - done));
    a.Read(a_at + done, n, &x);
    b.Read(b_at + done, n, &y);
    if (x != y) {
      size_t i = 0;
      while (x[i] == y[i]) ++i;
      return done + i;
    }
    done += n;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> DiskInvariantViolations(const std::string& before,
                                                 const std::string& after,
                                                 const DiskInvariantOptions& options) {
  std::vector<std::string> out;
  const Reader old_disk(before);
  const Reader new_disk(after);
  if (old_disk.size() != new_disk.size()) {
    out.push_back(fmt::format("the disk's size changed: {} bytes before, {} after", old_disk.size(),
                              new_disk.size()));
    return out;
  }
  const std::map<uint32_t, Place> old_places = Places(before, options.before_sector_size);
  const std::map<uint32_t, Place> new_places = Places(after, options.after_sector_size);
  const std::vector<Range> records = Merge(options.updated_records);

  // Rule 1: each partition's bytes at its new place.
  for (const auto& [number, was] : old_places) {
    auto now = new_places.find(number);
    if (was.container || now == new_places.end() || now->second.container) continue;
    if (std::find(options.left_behind.begin(), options.left_behind.end(), number) !=
        options.left_behind.end()) {
      continue;
    }
    const uint64_t length = std::min(was.size_bytes, now->second.size_bytes);
    std::vector<Range> skip;  // relative to the partition
    const bool rolled_back = std::find(options.rolled_back.begin(), options.rolled_back.end(),
                                       number) != options.rolled_back.end();
    if (options.used_maps && (was.start_bytes != now->second.start_bytes || rolled_back)) {
      Result<UsedMap> used = ProbeUsedMap(old_disk.fd(), before, was.start_bytes, was.size_bytes);
      if (!used) {
        out.push_back(fmt::format("partition {}: its used map cannot be read: {}", number,
                                  used.error().message));
        continue;
      }
      std::vector<Range> used_ranges;
      for (const UsedRange& u : used->ranges()) {
        used_ranges.push_back({u.offset_bytes, u.offset_bytes + u.length_bytes});
      }
      skip = Minus(0, length, Merge(used_ranges));  // the free bytes
    }
    for (const Range& r : records) {
      if (r.second <= now->second.start_bytes || r.first >= now->second.start_bytes + length) {
        continue;
      }
      skip.push_back({r.first - std::min(r.first, now->second.start_bytes),
                      r.second - now->second.start_bytes});
    }
    for (const Range& r : Minus(0, length, Merge(skip))) {
      std::optional<uint64_t> d =
          FirstDifference(old_disk, was.start_bytes + r.first, new_disk,
                          now->second.start_bytes + r.first, r.second - r.first);
      if (d) {
        const uint64_t at = r.first + *d;
        out.push_back(fmt::format(
            "partition {}: byte {} of it differs (old place byte {}, new place byte {})", number,
            at, was.start_bytes + at, now->second.start_bytes + at));
        break;
      }
    }
    // What a partition gives up (past its new size) held nothing: a partition never shrinks
    // over data (bytes past a filesystem are data too).
    if (now->second.size_bytes < was.size_bytes) {
      std::vector<uint8_t> bytes;
      for (uint64_t at = now->second.size_bytes; at < was.size_bytes;) {
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(kCompareChunk, was.size_bytes - at));
        old_disk.Read(was.start_bytes + at, n, &bytes);
        auto it = std::find_if(bytes.begin(), bytes.end(), [](uint8_t b) { return b != 0; });
        if (it != bytes.end()) {
          out.push_back(fmt::format(
              "partition {}: it shrank from {} to {} bytes over data (byte {} of it was not zero)",
              number, was.size_bytes, now->second.size_bytes, at + (it - bytes.begin())));
          break;
        }
        at += n;
      }
    }
  }

  // Rule 2: everything outside the partitions and the tables is unchanged.
  std::vector<Range> covered;
  for (const auto* places : {&old_places, &new_places}) {
    for (const auto& [number, p] : *places) {
      if (!p.container) covered.push_back({p.start_bytes, p.start_bytes + p.size_bytes});
    }
  }
  for (const Range& r : TableAreaRanges(before, options.before_sector_size)) covered.push_back(r);
  for (const Range& r : TableAreaRanges(after, options.after_sector_size)) covered.push_back(r);
  for (const Range& r : records) covered.push_back(r);
  for (const Range& r : Minus(0, old_disk.size(), Merge(covered))) {
    std::optional<uint64_t> d =
        FirstDifference(old_disk, r.first, new_disk, r.first, r.second - r.first);
    if (d) {
      out.push_back(fmt::format(
          "byte {} changed, outside every partition and table (the region {}-{} holds no "
          "partition before or after)",
          r.first + *d, r.first, r.second - 1));
    }
  }
  return out;
}

}  // namespace partalign::test
