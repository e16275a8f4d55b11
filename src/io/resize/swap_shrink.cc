// SPDX-License-Identifier: GPL-3.0-or-later
// Linux swap holds nothing that outlives the running system but its header page (docs/resize.md,
// as GParted's linux_swap.cc does it): a smaller swap area is a new one made by mkswap with the
// old UUID (so that /etc/fstab's UUID= still finds it), label and page size. A swap area that
// holds a hibernation image has no swap header (the image's signature replaces it) and never
// reaches here: ReadUsedMap refuses it.
#include <fmt/format.h>

#include "io/resize/shrink_tools.h"
#include "partalign/resize/swap_header.h"
#include "partalign/used/used_map.h"

namespace partalign {

Status RecreateSwap(ShrinkJob& job) {
  Result<std::vector<uint8_t>> head = job.copy.Read(0, kUsedHeadBytes);
  if (!head) return head.error();
  const std::optional<SwapHeader> old = ParseSwapHeader(*head);
  if (!old) {
    return MakeError(fmt::format("{}: no swap header (version 1) was found; nothing was written",
                                 job.request.name));
  }
  if (old->big_endian) {
    return MakeError(
        fmt::format("{}: the swap area was made on a big-endian machine; mkswap here would make a "
                    "little-endian one; nothing was written",
                    job.request.name));
  }
  // mkswap takes the area's size in KiB after the device.
  std::vector<std::string> argv = {"mkswap", "--pagesize", std::to_string(old->page_bytes),
                                   "--uuid", FormatUuid(old->uuid)};
  if (!old->label.empty()) {
    argv.push_back("--label");
    argv.push_back(old->label);
  }
  argv.push_back(job.copy.path());
  argv.push_back(std::to_string(job.request.new_length_bytes / 1024));
  if (Status cut = job.copy.Truncate(job.request.new_length_bytes); !cut) return cut;
  if (Status s = RunToolStep(job, argv, "re-created"); !s) return s;
  head = job.copy.Read(0, kUsedHeadBytes);
  if (!head) return head.error();
  const std::optional<SwapHeader> made = ParseSwapHeader(*head);
  const uint64_t pages = job.request.new_length_bytes / old->page_bytes;
  if (!made || made->uuid != old->uuid || made->label != old->label ||
      made->page_bytes != old->page_bytes || pages == 0 || made->last_page != pages - 1) {
    return MakeError(fmt::format(
        "{}: mkswap made a swap area that is not the old one made smaller (UUID, label, page "
        "size or size differ); nothing was written",
        job.request.name));
  }
  job.steps.push_back(fmt::format("swap header checked: UUID {}, {} pages of {} bytes",
                                  FormatUuid(made->uuid), pages, made->page_bytes));
  return {};
}

}  // namespace partalign
