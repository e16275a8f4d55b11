// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/alignment.h"

#include <fmt/format.h>

#include "partalign/topology/topology_check.h"
#include "partalign/util/units.h"

namespace partalign {

uint64_t Alignment::Up(uint64_t value) const {
  if (value <= offset_bytes) return offset_bytes;
  return offset_bytes + AlignUp(value - offset_bytes, grain_bytes);
}

uint64_t Alignment::Down(uint64_t value) const {
  if (value <= offset_bytes) return offset_bytes;
  return offset_bytes + AlignDown(value - offset_bytes, grain_bytes);
}

bool IsSaneOptimalIo(const Topology& t) {
  const uint64_t opt = t.optimal_io_size;
  if (opt == 0 || opt == kBogusBridgeOptimalIo || opt > kMaxSaneOptimalIo) return false;
  if (t.physical_sector_size != 0 && opt % t.physical_sector_size != 0) return false;
  if (t.minimum_io_size != 0 && opt % t.minimum_io_size != 0) return false;
  return opt % t.logical_sector_size == 0;
}

namespace {

// What a partition start must be a multiple of on this topology (nullopt: not in 64 bits).
std::optional<uint64_t> RequiredUnit(const Topology& t) {
  std::optional<uint64_t> required =
      CheckedLcm(t.logical_sector_size, std::max(t.physical_sector_size, uint64_t{1}));
  if (required && t.minimum_io_size != 0) required = CheckedLcm(*required, t.minimum_io_size);
  if (required && IsSaneOptimalIo(t)) required = CheckedLcm(*required, t.optimal_io_size);
  return required;
}

}  // namespace

Status CheckGrainFits(const Topology& t, std::optional<uint64_t> user_grain_bytes) {
  const uint64_t grain =
      user_grain_bytes && *user_grain_bytes != 0 ? *user_grain_bytes : kDefaultGrainBytes;
  std::optional<uint64_t> required = RequiredUnit(t);
  if (required && CheckedLcm(grain, *required)) return {};
  return MakeError(fmt::format(
      "{} {} with physical sector {} and minimum I/O {} needs a grain larger than 2^64 bytes",
      user_grain_bytes ? "--grain" : "the default grain", grain, t.physical_sector_size,
      t.minimum_io_size));
}

AlignmentRecommendation RecommendAlignment(const Topology& t,
                                           std::optional<uint64_t> user_grain_bytes) {
  AlignmentRecommendation r;
  uint64_t grain = kDefaultGrainBytes;
  if (user_grain_bytes && *user_grain_bytes != 0) {
    grain = *user_grain_bytes;
    r.reasons.push_back(fmt::format("start from the requested grain {}", FormatSize(grain)));
  } else {
    r.reasons.push_back(
        "start from 1 MiB, the grain every current partitioner defaults to and a multiple of "
        "every common sector, page, erase-block and stripe size");
  }
  // The topology's own requirement: the units a partition start must be a multiple of.
  // Callers refuse topologies and grains for which it does not fit (CheckGrainFits); were one
  // to reach here, the largest power of two stands in, so that nothing divides by 0.
  const uint64_t required = RequiredUnit(t).value_or(uint64_t{1} << 63);
  if (t.optimal_io_size == kBogusBridgeOptimalIo) {
    r.reasons.push_back(fmt::format(
        "ignore optimal I/O {}: it is 0xFFFF x 512, a USB bridge's placeholder, not a stripe",
        t.optimal_io_size));
  } else if (t.optimal_io_size != 0 && !IsSaneOptimalIo(t)) {
    r.reasons.push_back(fmt::format(
        "ignore optimal I/O {}: not a multiple of the physical sector {} and minimum I/O {}, or "
        "larger than {}",
        t.optimal_io_size, t.physical_sector_size, t.minimum_io_size,
        FormatSize(kMaxSaneOptimalIo)));
  }
  if (grain % required != 0) {
    uint64_t raised = CheckedLcm(grain, required).value_or(required);
    r.reasons.push_back(fmt::format(
        "raise the grain from {} to {}, the least common multiple with {} (physical sector {}, "
        "minimum I/O {}, optimal I/O {})",
        FormatSize(grain), FormatSize(raised), FormatSize(required), t.physical_sector_size,
        t.minimum_io_size, IsSaneOptimalIo(t) ? t.optimal_io_size : 0));
    grain = raised;
  } else {
    r.reasons.push_back(fmt::format(
        "{} is already a multiple of physical sector {}, minimum I/O {} and usable optimal I/O {}",
        FormatSize(grain), t.physical_sector_size, t.minimum_io_size,
        IsSaneOptimalIo(t) ? t.optimal_io_size : 0));
  }
  r.alignment.grain_bytes = grain;
  r.alignment.offset_bytes = t.alignment_offset % grain;
  if (t.alignment_offset != 0) {
    r.reasons.push_back(fmt::format(
        "shift every start by the alignment offset {} bytes ({} sectors), where the drive's "
        "physical sectors begin",
        t.alignment_offset, t.alignment_offset / t.logical_sector_size));
  }
  return r;
}

}  // namespace partalign
