// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/content/content_proof.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "io/device/blkid_probe.h"
#include "io/device/in_use.h"
#include "io/device/target.h"
#include "io/device/zero_scan.h"
#include "io/table/fdisk_table.h"
#include "partalign/util/units.h"

namespace partalign {

void AddContentOptions(CLI::App* command, ContentOptions* options) {
  command
      ->add_option("--discard", options->discard,
                   "give up the contents of partition N: plan it as empty, whatever it holds "
                   "(repeatable)")
      ->delimiter(',')
      ->allow_extra_args(false)  // one N per --discard: the TARGET after it is not an N
      ->check(CLI::PositiveNumber);
  command->add_flag("--no-scan", options->no_scan,
                    "never read a partition in full to prove it empty: a partition without a "
                    "signature is moved whole");
}

namespace {

// Reads [offset, offset + length) of `path` (opened once, in `*target`) up to the first byte
// that is not zero, with progress on a terminal (or always, with `progress`): that byte's
// offset from `offset`, or nullopt for zeros. Errors name partition `number`.
Result<std::optional<uint64_t>> ReadForZeros(Streams io, const std::string& path,
                                             std::optional<Target>* target, uint32_t number,
                                             uint64_t offset, uint64_t length, bool progress) {
  if (!*target) {
    Result<Target> opened = OpenTarget(path);
    if (!opened) return opened.error();
    *target = std::move(*opened);
  }
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  ZeroScanProgress show;
  if (progress || terminal) {
    show = [&](uint64_t done, uint64_t total) {
      io.err << fmt::format("{}partalign: partition {}: {} of {} read{}", terminal ? "\r" : "",
                            number, FormatSize(done), FormatSize(total), terminal ? "" : "\n")
             << std::flush;
    };
  }
  Result<std::optional<uint64_t>> found =
      FindFirstNonZero((*target)->fd.get(), path, offset, length, show);
  if (show && terminal) io.err << '\n';
  if (!found) return MakeError(fmt::format("partition {}: {}", number, found.error().message));
  return found;
}

}  // namespace

Status ProvePartitionsEmpty(Streams io, const std::string& path, PartitionTable* table,
                            const std::vector<uint32_t>& numbers, bool progress) {
  std::optional<Target> target;
  for (Partition& p : table->partitions) {
    if (p.contents.proof != ContentProof::kUnscanned ||
        std::find(numbers.begin(), numbers.end(), p.number) == numbers.end()) {
      continue;
    }
    const uint64_t offset = p.start_sector * table->sector_size;
    const uint64_t length = p.size_sectors * table->sector_size;
    io.err << fmt::format(
        "partalign: reading partition {} in full ({}) to prove it empty: it has no signature "
        "and its first MiB is zeros\n",
        p.number, FormatSize(length));
    Result<std::optional<uint64_t>> found =
        ReadForZeros(io, path, &target, p.number, offset, length, progress);
    if (!found) return found.error();
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

Status ProveTailsZero(Streams io, const std::string& path, PartitionTable* table,
                      const std::vector<TailProof>& tails, bool progress) {
  std::optional<Target> target;
  const uint64_t ss = table->sector_size;
  for (const TailProof& tail : tails) {
    auto p = std::find_if(table->partitions.begin(), table->partitions.end(),
                          [&](const Partition& q) { return q.number == tail.partition; });
    if (p == table->partitions.end() || tail.from_bytes >= p->size_sectors * ss) continue;
    const uint64_t length = p->size_sectors * ss - tail.from_bytes;
    io.err << fmt::format(
        "partalign: reading the last {} of partition {} ({}), which the plan gives up, to prove "
        "them zero: bytes past a filesystem are data until read\n",
        length / ss == 1 ? "sector" : fmt::format("{} sectors", length / ss), p->number,
        FormatSize(length));
    Result<std::optional<uint64_t>> found = ReadForZeros(
        io, path, &target, p->number, p->start_sector * ss + tail.from_bytes, length, progress);
    if (!found) return found.error();
    if (*found) {
      p->contents.tail_data_bytes = tail.from_bytes + **found;
      io.err << fmt::format("partalign: partition {}: byte {} is not zero: it keeps every sector\n",
                            p->number, *p->contents.tail_data_bytes);
    } else {
      p->contents.zeros_from_bytes =
          std::min(p->contents.zeros_from_bytes.value_or(tail.from_bytes), tail.from_bytes);
      io.err << fmt::format("partalign: partition {}: read {} past byte {}: zeros\n", p->number,
                            FormatSize(length), tail.from_bytes);
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
                            const ContentOptions& content,
                            const std::vector<PlannedShrink>& shrinks, bool* contents_probed) {
  PlanOptions options;
  options.discard = content.discard;
  // A partition the running system uses keeps its place: apply writes around it, never moves
  // it (docs/audit-plan.md, "In use"); unless the plan is for the next boot, which moves it
  // before anything mounts it (docs/at-boot.md).
  if (!content.at_next_boot) {
    Result<std::vector<DiskUser>> users = FindDiskUsers(path);
    if (!users) return users.error();
    for (const DiskUser& u : *users) {
      if (u.partition != 0) options.in_use.push_back(u.partition);
    }
  }
  options.shrinks = shrinks;
  if (contents_probed && !*contents_probed) {
    // Every partition planned as holding data of unknown size: when even that plan keeps an
    // aligned table as it is, no contents change it (PlanIgnoresContents), and none are read.
    if (Result<Plan> plan = MakePlan(*table, device, alignment, options);
        plan && PlanIgnoresContents(*table, alignment, plan->actions)) {
      plan->at_next_boot = content.at_next_boot;
      return plan;
    }
    if (Status s = ProbeTableContents(path, table); !s) return s.error();
    *contents_probed = true;
  }
  PlanProofs proofs;
  if (!content.no_scan) {
    proofs.partitions = [&](PartitionTable* t, const std::vector<uint32_t>& numbers) {
      return ProvePartitionsEmpty(io, path, t, numbers);
    };
    proofs.tails = [&](PartitionTable* t, const std::vector<TailProof>& tails) {
      return ProveTailsZero(io, path, t, tails);
    };
  }
  Result<Plan> plan = partalign::MakeProvenPlan(table, device, alignment, options, proofs);
  if (plan) plan->at_next_boot = content.at_next_boot;
  return plan;
}

}  // namespace partalign
