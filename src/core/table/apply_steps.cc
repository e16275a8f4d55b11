// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/apply_steps.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/layout/ebr_placement.h"

namespace partalign {
namespace {

// A partition as the ordering sees it: where the table puts it at some instant.
struct StepExtent {
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive
  bool holds_data = false;
};

// Partition number -> extent: the table at one instant.
using StepLayout = std::map<uint32_t, StepExtent>;

bool OverlapByEnd(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  return a_start <= b_end && b_start <= a_end;
}

// The pairs of partitions that break the rules every table must keep: primary partitions
// (the extended one included) do not overlap each other, logical partitions do not overlap
// each other or a primary one, and each logical partition lies inside the extended one, after
// its first sector (where the head EBR is).
std::vector<std::pair<uint32_t, uint32_t>> Violations(const StepLayout& layout) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (auto a = layout.begin(); a != layout.end(); ++a) {
    for (auto b = std::next(a); b != layout.end(); ++b) {
      const StepExtent& x = a->second;
      const StepExtent& y = b->second;
      const bool x_ext = x.kind == PartitionKind::kExtended;
      const bool y_ext = y.kind == PartitionKind::kExtended;
      const bool x_log = x.kind == PartitionKind::kLogical;
      const bool y_log = y.kind == PartitionKind::kLogical;
      bool bad;
      if (x_log && y_ext) {
        bad = !(y.start < x.start && x.end <= y.end);
      } else if (y_log && x_ext) {
        bad = !(x.start < y.start && y.end <= x.end);
      } else {
        bad = OverlapByEnd(x.start, x.end, y.start, y.end);
      }
      if (bad) out.emplace_back(a->first, b->first);
    }
  }
  return out;
}

uint64_t SectorsOf(uint64_t bytes, uint64_t sector_size) {
  return (bytes + sector_size - 1) / sector_size;
}

// The partition whose data a move of `action` would overwrite, if any.
std::optional<uint32_t> DataInTheWay(const StepLayout& layout, const PlanAction& action,
                                     uint64_t sector_size) {
  const uint64_t first = action.new_start_sector;
  const uint64_t last = first + SectorsOf(action.bytes_to_move, sector_size) - 1;
  for (const auto& [number, e] : layout) {
    if (number == action.partition || !e.holds_data || e.kind == PartitionKind::kExtended) {
      continue;
    }
    if (OverlapByEnd(first, last, e.start, e.end)) return number;
  }
  return std::nullopt;
}

void MoveTo(StepLayout& layout, uint32_t partition, uint64_t start, uint64_t end) {
  StepExtent& e = layout.at(partition);
  e.start = start;
  e.end = end;
}

// A table-only change still to be written: the places it goes through, in order.
struct PendingChange {
  std::vector<TableEdit> targets;
  size_t next = 0;
  const TableEdit& target() const { return targets[next]; }
  bool done() const { return next == targets.size(); }
};

// The ordering's state while it builds the steps: the table at the current instant, what is
// still to do, and the steps so far.
class StepOrder {
 public:
  // `eager`: each table-only change goes into the first step after which it fits; otherwise
  // only where a move needs it, the rest with the last step (a DOS table whose intermediate
  // tables would raise libfdisk's first LBA, and with it the EBRs, before the moves are done).
  // `down_first`: a logical partition that moves down goes before the other moves (below).
  StepOrder(const PartitionTable& table, bool eager, bool down_first)
      : sector_size_(table.sector_size),
        table_(table),
        dos_(table.label == LabelType::kDos),
        eager_(eager),
        down_first_(down_first) {
    for (const Partition& p : table.partitions) {
      layout_[p.number] = {p.kind, p.start_sector, p.end_sector(), p.contents.MayHoldData()};
    }
    original_ebrs_ = TableEbrSectors(table);
  }

  // Sorts the plan's actions into moves (lowest on the disk first) and table-only changes.
  Status Collect(const Plan& plan) {
    for (const PlanAction& a : plan.actions) {
      if (a.kind != ActionKind::kMoveData && a.kind != ActionKind::kTableOnly) continue;
      auto it = layout_.find(a.partition);
      if (it == layout_.end()) {
        return MakeError(fmt::format("partition {} of the plan is not in the table", a.partition));
      }
      if (a.kind == ActionKind::kMoveData) {
        if (a.bytes_to_move == 0 || a.old_start_sector == a.new_start_sector) {
          return MakeError(fmt::format(
              "partition {}: a move-data action must move bytes to another start", a.partition));
        }
        it->second.holds_data = true;
        moves_[a.partition] = &a;
        by_start_.push_back(&a);
        continue;
      }
      // A partition whose contents the user gave up may be written over by another move.
      if (a.empty == Emptiness::kDiscarded) it->second.holds_data = false;
      table_only_[a.partition] = TableOnlyChange(it->second, a);
    }
    if (moves_.empty()) return MakeError("the plan moves no data");
    std::sort(by_start_.begin(), by_start_.end(), [](const PlanAction* a, const PlanAction* b) {
      return a->old_start_sector < b->old_start_sector;
    });
    // A logical partition that moves down writes over the sectors before it, where libfdisk
    // puts its EBR whenever it writes the table: it goes before any table is written, while
    // the table's own EBR may lie further down (the planner plans at most one).
    if (down_first_) {
      std::stable_partition(by_start_.begin(), by_start_.end(), [&](const PlanAction* a) {
        return layout_.at(a->partition).kind == PartitionKind::kLogical &&
               a->new_start_sector < a->old_start_sector;
      });
    }
    return {};
  }

  // One step per move: each time the lowest move that may go now; fails naming what blocks
  // every remaining move when none may.
  Status PlaceMoves() {
    PlaceFreeTableOnly();
    while (!moves_.empty()) {
      std::vector<std::string> blocked;
      const PlanAction* next = nullptr;
      for (const PlanAction* m : by_start_) {
        if (!moves_.count(m->partition)) continue;
        if (std::optional<std::string> obstacle = TryMove(*m)) {
          blocked.push_back(std::move(*obstacle));
          continue;
        }
        next = m;
        break;
      }
      if (!next) {
        return MakeError(fmt::format(
            "no order of the data moves keeps every partition's data and the table valid at "
            "every step ({}); the moves need each other's place",
            fmt::join(blocked, "; ")));
      }
    }
    return {};
  }

  // Table-only changes that only fit together: they go with the last step.
  Status AttachLeftovers() {
    if (table_only_.empty()) return {};
    StepLayout trial = layout_;
    std::map<uint32_t, TableEdit> last;
    for (const TableEdit& e : steps_.back().edits) last[e.partition] = e;
    std::vector<uint32_t> left;
    for (auto& [n, change] : table_only_) {
      const TableEdit& t = change.targets.back();
      MoveTo(trial, n, t.start_sector, t.end_sector);
      last[n] = t;
      left.push_back(n);
    }
    if (!Violations(trial).empty()) {
      return MakeError(
          fmt::format("the table changes of partition(s) {} do not fit the table "
                      "after the data moves",
                      fmt::join(left, ", ")));
    }
    steps_.back().edits.clear();
    for (const auto& [n, e] : last) steps_.back().edits.push_back(e);
    return {};
  }

  std::vector<ApplyStep> TakeSteps() { return std::move(steps_); }

 private:
  // The places a table-only change goes through: a DOS extended partition whose start and end
  // both change first takes the union of its old and new extent, so that it holds its logical
  // partitions wherever they are while they move.
  static PendingChange TableOnlyChange(const StepExtent& old, const PlanAction& a) {
    PendingChange change;
    const uint64_t low = std::min(old.start, a.new_start_sector);
    const uint64_t high = std::max(old.end, a.new_end_sector);
    if (old.kind == PartitionKind::kExtended &&
        (low != a.new_start_sector || high != a.new_end_sector) &&
        (low != old.start || high != old.end)) {
      change.targets.push_back({a.partition, low, high});
    }
    change.targets.push_back({a.partition, a.new_start_sector, a.new_end_sector});
    return change;
  }

  // Takes the next place of table-only change `n` in `into`, to be written by the next step.
  void Take(StepLayout& into, uint32_t n) {
    PendingChange& change = table_only_.at(n);
    const TableEdit& t = change.target();
    MoveTo(into, n, t.start_sector, t.end_sector);
    edits_[n] = t;
    ++change.next;
  }

  void ForgetDone() {
    for (auto it = table_only_.begin(); it != table_only_.end();) {
      it = it->second.done() ? table_only_.erase(it) : std::next(it);
    }
  }

  // Every table-only change that fits the table as it is, one after the other. On a DOS table
  // the result must also leave every EBR outside the partitions (libfdisk's first LBA, and with
  // it the EBRs, follows where the extended and the first logical partition are); when all of
  // them together do not, each is taken only when it does on its own.
  void PlaceFreeTableOnly() {
    if (!eager_) return;
    const StepLayout saved_layout = layout_;
    const std::map<uint32_t, PendingChange> saved_changes = table_only_;
    const std::map<uint32_t, TableEdit> saved_edits = edits_;
    PlaceFitting(/*check_ebrs=*/false);
    if (dos_ && EbrProblem(layout_)) {
      layout_ = saved_layout;
      table_only_ = saved_changes;
      edits_ = saved_edits;
      PlaceFitting(/*check_ebrs=*/true);
    }
    ForgetDone();
  }

  void PlaceFitting(bool check_ebrs) {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto& [n, change] : table_only_) {
        if (change.done()) continue;
        StepLayout trial = layout_;
        MoveTo(trial, n, change.target().start_sector, change.target().end_sector);
        if (Violations(trial).empty() && (!check_ebrs || !EbrProblem(trial))) {
          Take(layout_, n);
          progress = true;
        }
      }
    }
  }

  // Makes move `m` the next step if it may go now; else says what blocks it and changes
  // nothing. The table after the move must be valid: table-only partitions in the way change
  // with it (they hold no data where they change); anything else in the way blocks it. On a
  // DOS table the EBRs count too: the step's table may not put one inside a partition, and the
  // move may not write over an EBR the table on the disk uses while it runs; a table-only step
  // first moves such an EBR out of the way when it can (the table-only changes that fit now,
  // or libfdisk's own rewrite of a table another tool wrote).
  std::optional<std::string> TryMove(const PlanAction& m) {
    if (std::optional<uint32_t> data = DataInTheWay(layout_, m, sector_size_)) {
      return fmt::format("partition {} would overwrite the data of partition {}", m.partition,
                         *data);
    }
    // Everything TryMove changes, to put back when the move may not go after all.
    const StepLayout saved_layout = layout_;
    const std::map<uint32_t, PendingChange> saved_changes = table_only_;
    const std::map<uint32_t, TableEdit> saved_edits = edits_;
    const std::map<uint32_t, const PlanAction*> saved_moves = moves_;
    const size_t saved_steps = steps_.size();
    const StepLayout saved_on_disk = on_disk_;
    const bool saved_rewritten = rewritten_;
    auto blocked = [&](std::string why) {
      layout_ = saved_layout;
      table_only_ = saved_changes;
      edits_ = saved_edits;
      moves_ = saved_moves;
      steps_.resize(saved_steps);
      on_disk_ = saved_on_disk;
      rewritten_ = saved_rewritten;
      return std::optional<std::string>(std::move(why));
    };
    StepLayout trial = layout_;
    MoveTo(trial, m.partition, m.new_start_sector, m.new_end_sector);
    for (std::vector<std::pair<uint32_t, uint32_t>> v = Violations(trial); !v.empty();
         v = Violations(trial)) {
      std::set<uint32_t> movable;
      for (const auto& [a, b] : v) {
        for (uint32_t n : {a, b}) {
          auto it = table_only_.find(n);
          if (it != table_only_.end() && !it->second.done()) movable.insert(n);
        }
      }
      if (movable.empty()) {
        return blocked(
            fmt::format("moving partition {}: partition {} does not fit next to partition {} yet",
                        m.partition, v.front().first, v.front().second));
      }
      for (uint32_t n : movable) Take(trial, n);
    }
    if (dos_) {
      if (std::optional<std::string> hit = EbrInDestination(m, EbrsInUse())) {
        // A table-only step first: the table the disk would hold then (the changes that fit
        // already) must put the EBR out of the way, and be one libfdisk can write.
        const bool rewrites = !saved_edits.empty() || !rewritten_;
        if (!rewrites || EbrProblem(layout_) || EbrInDestination(m, EbrsOf(layout_))) {
          return blocked(*hit);
        }
        ApplyStep first{kTableOnlyStep, {}};
        for (const auto& [n, e] : saved_edits) first.edits.push_back(e);
        steps_.push_back(std::move(first));
        for (const auto& [n, e] : saved_edits) edits_.erase(n);
        on_disk_ = layout_;
        rewritten_ = true;
      }
    }
    layout_ = std::move(trial);
    edits_[m.partition] = {m.partition, m.new_start_sector, m.new_end_sector};
    moves_.erase(m.partition);
    ForgetDone();
    PlaceFreeTableOnly();
    // The table the step writes, with the table-only changes that fit after the move.
    if (dos_) {
      if (std::optional<std::string> ebr = EbrProblem(layout_)) {
        return blocked(fmt::format("moving partition {}: {}", m.partition, *ebr));
      }
    }
    ApplyStep step{m.partition, {}};
    for (const auto& [n, e] : edits_) step.edits.push_back(e);
    steps_.push_back(std::move(step));
    edits_.clear();
    on_disk_ = layout_;
    rewritten_ = true;
    return std::nullopt;
  }

  // The EBR sector of each logical partition of the table the disk holds now: the table's own
  // (another tool may have put them anywhere before their partitions), or, once a step has
  // written the table, where libfdisk put them.
  std::map<uint32_t, uint64_t> EbrsInUse() const {
    return rewritten_ ? EbrsOf(on_disk_) : original_ebrs_;
  }

  // Where libfdisk puts the EBRs of the table `layout` describes (ebr_placement.h).
  std::map<uint32_t, uint64_t> EbrsOf(const StepLayout& layout) const {
    PartitionTable t = table_;
    for (Partition& p : t.partitions) {
      const StepExtent& e = layout.at(p.number);
      p.start_sector = e.start;
      p.size_sectors = e.end - e.start + 1;
    }
    return PredictEbrSectors(t, table_.first_usable_lba);
  }

  // The EBRs of the table `layout` describes that would land inside a partition (libfdisk
  // cannot write such a table, and the EBR would overwrite the partition's bytes).
  std::optional<std::string> EbrProblem(const StepLayout& layout) const {
    for (const auto& [n, sector] : EbrsOf(layout)) {
      for (const auto& [q, e] : layout) {
        if (e.kind == PartitionKind::kExtended || sector < e.start || sector > e.end) continue;
        return fmt::format("the EBR of partition {} would be at sector {}, inside partition {}", n,
                           sector, q);
      }
    }
    return std::nullopt;
  }

  // The first EBR of `ebrs` that move `m` writes over, in words.
  std::optional<std::string> EbrInDestination(const PlanAction& m,
                                              const std::map<uint32_t, uint64_t>& ebrs) const {
    const uint64_t first = m.new_start_sector;
    const uint64_t last = first + SectorsOf(m.bytes_to_move, sector_size_) - 1;
    for (const auto& [n, sector] : ebrs) {
      if (sector < first || sector > last) continue;
      return fmt::format(
          "moving partition {} to sectors {}-{} would overwrite sector {}, the EBR of partition "
          "{}, which the table on the disk uses until the step's new table is written",
          m.partition, first, last, sector, n);
    }
    return std::nullopt;
  }

  const uint64_t sector_size_;
  const PartitionTable& table_;
  const bool dos_;
  const bool eager_;
  const bool down_first_;
  std::map<uint32_t, uint64_t> original_ebrs_;    // the EBRs of the table as read
  StepLayout on_disk_;                            // the table the last step wrote
  bool rewritten_ = false;                        // a step has written the table
  StepLayout layout_;                             // the table at the current instant
  std::map<uint32_t, const PlanAction*> moves_;   // still to be done, by partition number
  std::vector<const PlanAction*> by_start_;       // every move, lowest on the disk first
  std::map<uint32_t, PendingChange> table_only_;  // still to be placed
  std::map<uint32_t, TableEdit> edits_;           // fit now, not yet written by a step
  std::vector<ApplyStep> steps_;
};

}  // namespace

Result<std::vector<ApplyStep>> OrderApplySteps(const Plan& plan, const PartitionTable& table) {
  auto order = [&](bool eager, bool down_first) -> Result<std::vector<ApplyStep>> {
    StepOrder o(table, eager, down_first);
    if (Status s = o.Collect(plan); !s) return s.error();
    if (Status s = o.PlaceMoves(); !s) return s.error();
    if (Status s = o.AttachLeftovers(); !s) return s.error();
    return o.TakeSteps();
  };
  Result<std::vector<ApplyStep>> first = order(/*eager=*/true, /*down_first=*/true);
  if (first || table.label != LabelType::kDos) return first;
  // A DOS table's EBRs follow the table each step writes: the same greedy order with the
  // table-only changes held back to where a move needs them, and without putting a downward
  // move first, may find an order the first one does not.
  for (auto [eager, down_first] : {std::pair{true, false}, {false, true}, {false, false}}) {
    Result<std::vector<ApplyStep>> other = order(eager, down_first);
    if (other) return other;
  }
  return first;
}

Plan StepPlan(const Plan& plan, const ApplyStep& step, const PartitionTable& before) {
  Plan out = plan;
  out.actions.clear();
  for (const PlanAction& original : plan.actions) {
    PlanAction a = original;
    const Partition* p = before.Find(a.partition);
    if (p) {
      a.old_start_sector = a.new_start_sector = p->start_sector;
      a.old_end_sector = a.new_end_sector = p->end_sector();
    }
    auto edit = std::find_if(step.edits.begin(), step.edits.end(),
                             [&](const TableEdit& e) { return e.partition == a.partition; });
    if (edit == step.edits.end()) {
      a.kind = ActionKind::kNone;
      a.bytes_to_move = 0;
    } else {
      a.new_start_sector = edit->start_sector;
      a.new_end_sector = edit->end_sector;
      if (a.partition != step.move_partition) {
        a.kind = ActionKind::kTableOnly;
        a.bytes_to_move = 0;
      }
    }
    out.actions.push_back(std::move(a));
  }
  return out;
}

std::vector<std::string> MoveOverwritesTable(const TableTransition& transition, uint32_t partition,
                                             const MoveGeometry& move) {
  std::vector<std::string> out;
  const uint64_t ss = transition.sector_size;
  const uint64_t dest_end = move.dest_bytes + move.length_bytes;
  for (const TableRange& r : transition.ranges) {
    if (!r.old_index) continue;  // only the new table has it: written after the move
    if (r.offset_bytes < dest_end && move.dest_bytes < r.offset_bytes + r.length_bytes) {
      out.push_back(fmt::format(
          "moving partition {} to sectors {}-{} would overwrite sector {}, the {}, which the "
          "table on the disk uses until the step's new table is written",
          partition, move.dest_bytes / ss, (dest_end + ss - 1) / ss - 1, r.offset_bytes / ss,
          AreaName(transition.label, r)));
    }
  }
  return out;
}

MoveGeometry MoveOf(const PlanAction& action, uint64_t sector_size) {
  MoveGeometry g;
  g.source_bytes = action.old_start_sector * sector_size;
  g.dest_bytes = action.new_start_sector * sector_size;
  g.length_bytes = action.bytes_to_move;
  return g;
}

std::string_view Direction(const PlanAction& action) {
  return action.new_start_sector > action.old_start_sector ? "up" : "down";
}

}  // namespace partalign
