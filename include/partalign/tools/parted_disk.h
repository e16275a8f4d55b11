// SPDX-License-Identifier: GPL-3.0-or-later
// libparted's partition list on one disk as a run of `mkpart` commands grows it (`parted -s -a
// MODE DEV mklabel LABEL mkpart ... mkpart ...`): where each partition lands, whether parted
// warns, and why it refuses. Each command is modelled step by step as parted/parted.c
// do_mkpart() runs it: the typed positions become ranges (parted_model.h), snap to the edges of
// the neighbouring regions (snap_to_boundaries), are intersected with the device alignment, the
// free space around the partition (_partition_get_overlap_constraint, disk.c) and the label's
// rules (gpt_partition_align; msdos _align_no_geom with the EBR room before logical partitions,
// _log_meta_overlap_constraint), solved nearest the target (ped_constraint_solve_nearest), and
// retried without alignment - with the warning - when no aligned place exists. Restated from
// parted's source (alignment-heuristics.md §2, docs/explain.md); no upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/tools/parted_model.h"
#include "partalign/topology/device.h"

namespace partalign {

/// PED_PARTITION_NORMAL, _EXTENDED, _LOGICAL: what `mkpart TYPE` takes on msdos (GPT partitions
/// are all kPrimary).
enum class PartedPartType { kPrimary, kExtended, kLogical };

/// "primary", "extended", "logical".
std::string_view ToString(PartedPartType type);

/// A partition parted holds, in sectors (ends inclusive).
struct PartedPartition {
  int number = 0;
  PartedPartType type = PartedPartType::kPrimary;
  int64_t start_sector = 0;
  int64_t end_sector = 0;
  bool operator==(const PartedPartition&) const = default;
};

/// What one `mkpart` does.
struct MkpartOutcome {
  bool created = false;
  int number = 0;
  int64_t start_sector = 0;
  int64_t end_sector = 0;
  /// The warning parted prints in script mode, without the "Warning: " prefix.
  std::optional<std::string> warning;
  /// Why parted refuses, when !created (parted -s exits 1 and runs no later command).
  std::string error;
  /// How the place was chosen, one sentence per step, each naming the values it used.
  std::vector<std::string> reasons;
};

/// A disk with a fresh label (`mklabel`) to which `mkpart` adds partitions. A value: copying
/// it copies the partition list.
class PartedDisk {
 public:
  PartedDisk(const PartedModel& model, LabelType label);

  /// `mkpart TYPE START END` with `-a MODE`. On success the partition is kept (parted commits
  /// after every command); on failure the disk is unchanged.
  MkpartOutcome Mkpart(PartedMode mode, PartedPartType type, std::string_view start,
                       std::string_view end);

  /// In the order of their starts.
  const std::vector<PartedPartition>& partitions() const { return parts_; }
  const PartedModel& model() const { return model_; }
  LabelType label() const { return label_; }

 private:
  PartedModel model_;
  LabelType label_;
  std::vector<PartedPartition> parts_;
};

/// What `parted -s -a MODE DEV mklabel LABEL mkpart primary START END` does on a fresh label.
MkpartOutcome PredictMkpart(const PartedModel& model, PartedMode mode, LabelType label,
                            std::string_view start, std::string_view end);

}  // namespace partalign
