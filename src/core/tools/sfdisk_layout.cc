// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/sfdisk_layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/gpt_free_space.h"

namespace partalign {
namespace {

// DOS tables address sectors with 32 bits (get_disk_ranges() caps the last sector at UINT_MAX).
constexpr uint64_t kSfdiskDosLastSector = 0xFFFFFFFFull;
constexpr size_t kSfdiskDosPrimaries = 4;

const ToolVersion kAlignedLastSince{2, 38, 0, 2};         // 921c7da55: the last GPT partition's end
const ToolVersion kSfdiskSmallSegmentSince{2, 38, 0, 2};  // a64e99118: no default in a tiny segment

// A partition slot as libfdisk's DOS label keeps it: absolute start and end, and for logical
// partitions the EBR offset (pe->offset), which find_first/last_free count as used.
struct DosEntry {
  bool used = false;
  bool extended = false;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t ebr = 0;  ///< logical partitions: the EBR sector; 0 for primaries
};

// The GPT part: gpt_add_partition() with a default start.
class GptRun {
 public:
  explicit GptRun(const LibfdiskLabel& l)
      : l_(l), c_(l.cxt), space_(l.first_usable_lba, l.last_usable_lba) {}

  Status Add(const SfdiskLine& line, SfdiskLayout* out);

 private:
  const LibfdiskLabel& l_;
  const LibfdiskContext& c_;
  GptFreeSpace space_;
  int count_ = 0;
};

Status GptRun::Add(const SfdiskLine& line, SfdiskLayout* out) {
  const uint64_t g = c_.grain_bytes / c_.sector_size;
  const int number = count_ + 1;
  uint64_t dflt_f = space_.FirstInLargest();
  if (dflt_f == 0) return MakeError("No free sectors available.");
  uint64_t dflt_l = space_.LastFree(dflt_f);
  if (c_.version >= kSfdiskSmallSegmentSince && dflt_l - dflt_f + 1 < g) {
    return MakeError("No enough free sectors available.");
  }
  const uint64_t user_f = FdiskAlignLbaInRange(c_, dflt_f, dflt_f, dflt_l);
  const uint64_t max_l = space_.LastFree(user_f);
  dflt_l = max_l;
  if (c_.version >= kAlignedLastSince && max_l == l_.last_usable_lba) {
    // "Make sure the last partition has aligned size by default."
    dflt_l = FdiskAlignLbaInRange(c_, max_l, user_f, max_l) - 1;
  }
  uint64_t user_l = dflt_l;
  const bool alignment_required = c_.grain_bytes != c_.sector_size;
  if (line.size_sectors) {
    user_l = user_f + *line.size_sectors - 1;
    if (user_l != dflt_l && !line.size_explicit && alignment_required && user_l - user_f > g) {
      user_l = FdiskAlignLbaInRange(c_, user_l, user_f, dflt_l);
      if (user_l > user_f) user_l -= 1;
    }
  }
  if (user_f > user_l) return MakeError(fmt::format("Could not create partition {}", number));
  if (user_l > l_.last_usable_lba) {
    return MakeError(fmt::format("The last usable GPT sector is {}, but {} is requested.",
                                 l_.last_usable_lba, user_l));
  }
  out->reasons.push_back(fmt::format(
      "partition {}: the largest free area starts at {}; aligned within {}..{}: start {}, end {}{}",
      number, dflt_f, dflt_f, max_l, user_f, user_l,
      line.size_sectors ? (line.size_explicit ? " (a size in sectors is taken as it is)"
                                              : " (a size with a unit gets an aligned end)")
                        : " (the rest, ending on the last aligned sector)"));
  space_.Use(user_f, user_l);
  ++count_;
  out->partitions.push_back({number, SfdiskPartKind::kPrimary, user_f, user_l});
  return {};
}

// The DOS part: dos_add_partition() for script lines (no partition number, no start) and
// add_partition().
class DosRun {
 public:
  explicit DosRun(const LibfdiskLabel& l) : c_(l.cxt), last_(l.last_usable_lba) {}

  Status Add(const SfdiskLine& line, SfdiskLayout* out);

 private:
  std::vector<const DosEntry*> From(bool logical) const;
  uint64_t Start(const DosEntry& e) const { return e.ebr != 0 ? e.start - c_.first_lba : e.start; }
  Result<uint64_t> FirstFreeInRange(bool logical, uint64_t begin, uint64_t end) const;
  Result<uint64_t> LastFreeInRange(bool logical, uint64_t begin, uint64_t end) const;
  Result<uint64_t> LastFree(bool logical, uint64_t begin, uint64_t stop) const;
  std::pair<uint64_t, uint64_t> Ranges(bool logical) const;
  Status AddPartition(size_t n, const SfdiskLine& line, SfdiskLayout* out);

  const LibfdiskContext& c_;
  uint64_t last_;
  DosEntry primary_[kSfdiskDosPrimaries];
  std::vector<DosEntry> logical_;
  const DosEntry* ext_ = nullptr;
};

// The entries find_*_free() look at: from index 4 (logical) or 0 (all).
std::vector<const DosEntry*> DosRun::From(bool logical) const {
  std::vector<const DosEntry*> v;
  if (!logical) {
    for (const DosEntry& e : primary_) v.push_back(&e);
  }
  for (const DosEntry& e : logical_) v.push_back(&e);
  return v;
}

// get_disk_ranges().
std::pair<uint64_t, uint64_t> DosRun::Ranges(bool logical) const {
  if (logical) return {ext_->start + c_.first_lba, ext_->end};
  return {c_.first_lba, std::min(c_.total_sectors - 1, std::min(last_, kSfdiskDosLastSector))};
}

// find_first_free_sector_in_range(): the first sector at or after `begin` outside every
// partition (and, for logical partitions, one first LBA after each for the next EBR).
Result<uint64_t> DosRun::FirstFreeInRange(bool logical, uint64_t begin, uint64_t end) const {
  uint64_t first = begin;
  bool moved;
  do {
    moved = false;
    for (const DosEntry* e : From(logical)) {
      if (!e->used) continue;
      if (first < Start(*e)) continue;
      if (first <= e->end) {
        first = e->end + 1 + (logical ? c_.first_lba : 0);
        moved = true;
        if (first > end) return MakeError("No free sectors available.");
      }
    }
  } while (moved);
  return first;
}

// find_last_free_sector_in_range().
Result<uint64_t> DosRun::LastFreeInRange(bool logical, uint64_t begin, uint64_t end) const {
  uint64_t last = end;
  bool moved;
  do {
    moved = false;
    for (const DosEntry* e : From(logical)) {
      if (!e->used) continue;
      if (last >= Start(*e) && last <= e->end) {
        if (Start(*e) == 0) return MakeError("No free sectors available.");
        last = Start(*e) - 1;
        moved = true;
        if (last < begin) return MakeError("No free sectors available.");
      }
    }
  } while (moved);
  return last;
}

// find_last_free(): the last sector of the free space `begin` lies in.
Result<uint64_t> DosRun::LastFree(bool logical, uint64_t begin, uint64_t stop) const {
  uint64_t last = stop;
  for (const DosEntry* e : From(logical)) {
    if (!e->used) continue;
    uint64_t s = Start(*e);
    if ((s >= begin && s <= last) || (e->end >= begin && e->end <= last)) last = s - 1;
    if (last < begin) return MakeError("No free sectors available.");
  }
  if (last == begin) last = stop;
  return last;
}

Status DosRun::AddPartition(size_t n, const SfdiskLine& line, SfdiskLayout* out) {
  const bool logical = n >= kSfdiskDosPrimaries;
  auto [start, stop] = Ranges(logical);
  Result<uint64_t> lim = LastFreeInRange(logical, start, stop);
  if (!lim) return lim.error();
  uint64_t limit = *lim;
  const bool alignment_required = c_.grain_bytes != c_.sector_size;
  const uint64_t g = c_.grain_bytes / c_.sector_size;
  bool read = false;
  uint64_t temp;
  // The start: the first free sector, aligned; if the free space there is smaller than the
  // size, the next free space (first fit).
  do {
    temp = start;
    Result<uint64_t> first = FirstFreeInRange(logical, start, Ranges(logical).second);
    if (!first) return first.error();
    uint64_t dflt = *first;
    start = dflt;
    uint64_t aligned;
    uint64_t before;
    do {
      before = dflt;
      aligned = FdiskAlignLbaInRange(c_, dflt, dflt, limit);
      if (Result<uint64_t> f = FirstFreeInRange(logical, aligned, Ranges(logical).second)) {
        dflt = *f;
      }
      // An alignment that falls back inside the partition before it gives the same default
      // again: stop instead of spinning (found by layout_preview_property_test on a 1.6 MB
      // disk with an alignment offset; what libfdisk itself does there is not checked).
    } while (dflt != aligned && dflt > aligned && dflt < limit && dflt != before);
    if (dflt >= limit) dflt = start;
    if (start > limit) break;
    if (start >= temp + 1 && read) {
      temp = start;
      read = false;
    }
    if (!read && start == temp) {
      start = dflt;
      read = true;
    }
    if (line.size_sectors) {
      Result<uint64_t> last = LastFree(logical, start, limit);
      if (last && *last - start + 1 < *line.size_sectors) {
        start = *last + 1;
        continue;
      }
      if (!last) return last.error();
    }
  } while (start != temp || !read);

  DosEntry e;
  e.used = true;
  e.extended = line.extended;
  if (n == kSfdiskDosPrimaries) {
    e.ebr = ext_->start;
  } else if (n > kSfdiskDosPrimaries) {
    e.ebr = start - c_.first_lba;
    if (e.ebr == ext_->start) {
      ++e.ebr;
      if (c_.first_lba == 1) ++start;
    }
  }
  Result<uint64_t> free_end = LastFree(logical, start, limit);
  if (!free_end) return free_end.error();
  limit = *free_end;
  bool isrel = false;
  if (start == limit || !line.size_sectors) {
    stop = limit;
  } else {
    stop = start + *line.size_sectors;
    isrel = !line.size_explicit;
    if ((!isrel || !alignment_required) && stop > start) stop -= 1;
  }
  if (stop > limit) stop = limit;
  if (isrel && stop - start < g) isrel = false;  // tiny partitions keep their end
  if (stop < limit && isrel && alignment_required) {
    stop = FdiskAlignLbaInRange(c_, stop, start, limit);
    if (stop > start) stop -= 1;
    if (stop > limit) stop = limit;
  }
  e.start = start;
  e.end = stop;
  const int number = static_cast<int>(n) + 1;
  SfdiskPartKind kind = logical      ? SfdiskPartKind::kLogical
                        : e.extended ? SfdiskPartKind::kExtended
                                     : SfdiskPartKind::kPrimary;
  out->reasons.push_back(fmt::format(
      "partition {}{}: the first free sector{} aligned within the free space: start {}, end {}{}",
      number,
      kind == SfdiskPartKind::kLogical    ? " (logical)"
      : kind == SfdiskPartKind::kExtended ? " (extended)"
                                          : "",
      logical ? fmt::format(" {} sectors (one first LBA, room for the EBR) after the previous one",
                            c_.first_lba)
              : "",
      e.start, e.end,
      !line.size_sectors ? " (the rest of the free space)"
      : isrel            ? " (a size with a unit gets an aligned end)"
                         : " (end as given)"));
  if (logical) {
    logical_.push_back(e);
  } else {
    primary_[n] = e;
    if (e.extended) ext_ = &primary_[n];
  }
  out->partitions.push_back({number, kind, e.start, e.end});
  return {};
}

Status DosRun::Add(const SfdiskLine& line, SfdiskLayout* out) {
  // dos_add_partition(), "dialog driven" for scripts: a primary while one is free and there is
  // room after the last one, else a logical partition inside the extended one.
  const uint64_t g = c_.grain_bytes > c_.sector_size ? c_.grain_bytes / c_.sector_size : 1;
  uint64_t first = c_.first_lba;
  bool free_sectors = false;
  size_t free_primary = 0;
  for (const DosEntry& e : primary_) {
    if (e.used) {
      if (first + g <= e.start) free_sectors = true;
      first = e.end + 1;
    } else {
      ++free_primary;
    }
  }
  if (first + g - 1 <= c_.total_sectors - 1) free_sectors = true;
  if (free_primary == 0 || !free_sectors) {
    if (ext_ == nullptr) {
      return MakeError(free_primary != 0
                           ? "All space for primary partitions is in use."
                           : "To create more partitions, first replace a primary with an "
                             "extended partition.");
    }
    if (line.extended) return MakeError("Extended partition already exists.");
    return AddPartition(kSfdiskDosPrimaries + logical_.size(), line, out);
  }
  if (line.extended && ext_ != nullptr) return MakeError("Extended partition already exists.");
  size_t n = 0;
  while (primary_[n].used) ++n;
  return AddPartition(n, line, out);
}

}  // namespace

SfdiskLayout PredictSfdiskLayout(const LibfdiskLabel& label, const std::vector<SfdiskLine>& lines) {
  SfdiskLayout out;
  GptRun gpt(label);
  DosRun dos(label);
  for (size_t i = 0; i < lines.size(); ++i) {
    Status s = label.label == LabelType::kGpt ? gpt.Add(lines[i], &out) : dos.Add(lines[i], &out);
    if (!s) {
      out.error = fmt::format("line {}: {}", i + 1, s.error().message);
      out.reasons.push_back(out.error + ": sfdisk writes nothing");
      out.partitions.clear();
      return out;
    }
  }
  // gpt_write_disklabel() refuses entries that overlap (check_overlap_partitions): sfdisk shows
  // the new situation, then exits 1 and writes nothing. Seen on tiny disks with an alignment
  // offset, where an aligned-up start falls back into the partition before it (docs/explain.md).
  if (label.label == LabelType::kGpt) {
    for (size_t i = 0; i < out.partitions.size(); ++i) {
      for (size_t j = i + 1; j < out.partitions.size(); ++j) {
        const SfdiskPartition& a = out.partitions[i];
        const SfdiskPartition& b = out.partitions[j];
        if (b.start_sector <= a.end_sector && a.start_sector <= b.end_sector) {
          out.error = fmt::format(
              "partitions {} ({}-{}) and {} ({}-{}) overlap: writing the GPT fails, nothing is "
              "written",
              a.number, a.start_sector, a.end_sector, b.number, b.start_sector, b.end_sector);
          out.reasons.push_back(out.error);
          out.partitions.clear();
          return out;
        }
      }
    }
  }
  for (const SfdiskPartition& p : out.partitions) {
    if (!FdiskLbaIsPhyAligned(label.cxt, p.start_sector)) {
      out.warnings.push_back(FdiskPhysBoundaryWarning(p.number));
    }
  }
  return out;
}

}  // namespace partalign
