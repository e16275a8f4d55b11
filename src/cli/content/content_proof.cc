// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/content/content_proof.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "io/device/blkid_probe.h"
#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "partalign/util/units.h"

namespace partalign {

void AddContentOptions(CLI::App* command, ContentOptions* options) {
  command
      ->add_option("--discard", options->discard,
                   "give up the contents of partition N: plan it as empty, whatever it holds "
                   "(repeatable)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  command->add_flag("--no-scan", options->no_scan,
                    "never read a partition in full to prove it empty: a partition without a "
                    "signature is moved whole");
}

Status ProvePartitionsEmpty(Streams io, const std::string& path, PartitionTable* table,
                            const std::vector<uint32_t>& numbers, bool progress) {
  std::optional<Target> target;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  for (Partition& p : table->partitions) {
    if (p.contents.proof != ContentProof::kUnscanned ||
        std::find(numbers.begin(), numbers.end(), p.number) == numbers.end()) {
      continue;
    }
    if (!target) {
      Result<Target> opened = OpenTarget(path);
      if (!opened) return opened.error();
      target = std::move(*opened);
    }
    const uint64_t offset = p.start_sector * table->sector_size;
    const uint64_t length = p.size_sectors * table->sector_size;
    io.err << fmt::format(
        "partalign: reading partition {} in full ({}) to prove it empty: it has no signature "
        "and its first MiB is zeros\n",
        p.number, FormatSize(length));
    ZeroScanProgress show;
    if (progress || terminal) {
      show = [&](uint64_t done, uint64_t total) {
        io.err << fmt::format("{}partalign: partition {}: {} of {} read{}", terminal ? "\r" : "",
                              p.number, FormatSize(done), FormatSize(total), terminal ? "" : "\n")
               << std::flush;
      };
    }
    Result<std::optional<uint64_t>> found =
        FindFirstNonZero(target->fd.get(), path, offset, length, show);
    if (show && terminal) io.err << '\n';
    if (!found) {
      return MakeError(fmt::format("partition {}: {}", p.number, found.error().message));
    }
    if (*found) {
      p.contents.proof = ContentProof::kData;
      p.contents.data_offset_bytes = **found;
      io.err << fmt::format("partalign: partition {}: byte {} is not zero: it holds data\n",
                            p.number, **found);
    } else {
      p.contents.proof = ContentProof::kZeros;
      io.err << fmt::format("partalign: partition {}: read all {}: zeros\n", p.number,
                            FormatSize(length));
    }
  }
  return {};
}

Status CheckNothingOnTheWholeDisk(const std::string& path, uint64_t sector_size) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  Result<std::vector<BlkidSignature>> found =
      ProbeBlkidSignatures(target->fd.get(), path, sector_size);
  if (!found) return found.error();
  for (const BlkidSignature& s : *found) {
    if (s.usage == "partition table") continue;
    return MakeError(fmt::format(
        "'{}' holds {}{} on the whole disk, without a partition table: a fresh table would "
        "overwrite it (remove it first, for example with wipefs, if it is not wanted)",
        path, s.type, s.offset_bytes ? fmt::format(" (at byte {})", *s.offset_bytes) : ""));
  }
  return {};
}

Result<Plan> MakeProvenPlan(Streams io, const std::string& path, PartitionTable* table,
                            const DeviceInfo& device, const Alignment& alignment,
                            const ContentOptions& content) {
  PlanOptions options;
  options.discard = content.discard;
  if (!content.no_scan) {
    // Each round proves at least one partition either way, so this ends; a proof can change
    // which others the plan moves, hence the rounds.
    for (;;) {
      PlanOptions optimistic = options;
      optimistic.unscanned_as_empty = true;
      Result<Plan> first = MakePlan(*table, device, alignment, optimistic);
      if (!first) return first.error();
      std::vector<uint32_t> worth = PartitionsWorthProving(*table, first->actions, options);
      if (worth.empty()) break;
      if (Status s = ProvePartitionsEmpty(io, path, table, worth); !s) return s.error();
    }
  }
  return MakePlan(*table, device, alignment, options);
}

}  // namespace partalign
