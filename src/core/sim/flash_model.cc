// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/sim/flash_model.h"

#include <algorithm>

namespace partalign {

Status CheckFlashParams(const FlashParams& params) {
  if (params.page_bytes == 0 || params.units == 0) {
    return MakeError("the flash page size and the number of dies must be greater than 0");
  }
  if (params.stripe_bytes == 0 || params.stripe_bytes % params.page_bytes != 0) {
    return MakeError("the stripe must be a multiple of the flash page size");
  }
  return {};
}

FlashWork WorkOf(FlashOp op, uint64_t offset, uint64_t length, const FlashParams& params) {
  FlashWork work;
  if (length == 0) return work;
  const uint64_t first = offset / params.page_bytes;
  const uint64_t last = (offset + length - 1) / params.page_bytes;
  work.pages = last - first + 1;
  if (op == FlashOp::kRead) {
    work.page_reads = work.pages;
    return work;
  }
  work.page_programs = work.pages;
  // Only the first and the last page can be covered in part.
  const bool head_partial = offset % params.page_bytes != 0;
  const bool tail_partial = (offset + length) % params.page_bytes != 0;
  work.partial_pages = first == last ? (head_partial || tail_partial ? 1 : 0)
                                     : uint64_t{head_partial} + uint64_t{tail_partial};
  work.page_reads = work.partial_pages;
  return work;
}

FlashTimeline::FlashTimeline(const FlashParams& params)
    : params_(params), free_at_ns_(std::max<uint32_t>(params.units, 1), 0) {}

uint64_t FlashTimeline::Schedule(FlashOp op, uint64_t offset, uint64_t length, uint64_t now_ns) {
  const FlashWork work = WorkOf(op, offset, length, params_);
  totals_.pages += work.pages;
  totals_.page_reads += work.page_reads;
  totals_.page_programs += work.page_programs;
  totals_.partial_pages += work.partial_pages;
  if (work.pages == 0) return now_ns;
  const uint64_t first = offset / params_.page_bytes;
  const uint64_t last = (offset + length - 1) / params_.page_bytes;
  uint64_t done = now_ns;
  for (uint64_t page = first; page <= last; ++page) {
    uint64_t cost = params_.read_ns;
    if (op == FlashOp::kWrite) {
      const uint64_t page_start = page * params_.page_bytes;
      const bool whole = offset <= page_start && page_start + params_.page_bytes <= offset + length;
      cost = params_.program_ns + (whole ? 0 : params_.read_ns);
    }
    const uint64_t stripe = page * params_.page_bytes / params_.stripe_bytes;
    uint64_t& free_at = free_at_ns_[stripe % free_at_ns_.size()];
    free_at = std::max(free_at, now_ns) + cost;
    done = std::max(done, free_at);
  }
  return done;
}

}  // namespace partalign
