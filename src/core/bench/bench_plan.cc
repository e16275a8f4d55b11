// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr std::array<std::pair<IoPattern, std::string_view>, 6> kPatternNames{{
    {IoPattern::kRandRead, "randread"},
    {IoPattern::kSeqRead, "seqread"},
    {IoPattern::kRandWrite, "randwrite"},
    {IoPattern::kSeqWrite, "seqwrite"},
    {IoPattern::kRandRewrite, "randrewrite"},
    {IoPattern::kSeqRewrite, "seqrewrite"},
}};

// Binary search steps for the time per cell of a round: 2^-64 of the range, far below 1 ns.
constexpr int kSolverSteps = 64;

// Seed stream of the per-round permutations, apart from every cell's stream.
constexpr uint64_t kOrderStream = 0x6f72646572;  // "order"

}  // namespace

std::string_view ToString(IoPattern pattern) {
  for (const auto& [p, name] : kPatternNames) {
    if (p == pattern) return name;
  }
  return "?";
}

std::optional<IoPattern> ParseIoPattern(std::string_view text) {
  for (const auto& [p, name] : kPatternNames) {
    if (name == text) return p;
  }
  return std::nullopt;
}

bool IsWrite(IoPattern pattern) {
  return pattern == IoPattern::kRandWrite || pattern == IoPattern::kSeqWrite;
}

bool IsRewrite(IoPattern pattern) {
  return pattern == IoPattern::kRandRewrite || pattern == IoPattern::kSeqRewrite;
}

AccessOrder OrderOf(IoPattern pattern) {
  return pattern == IoPattern::kSeqRead || pattern == IoPattern::kSeqWrite ||
                 pattern == IoPattern::kSeqRewrite
             ? AccessOrder::kSequential
             : AccessOrder::kRandom;
}

std::string Describe(const BenchCell& cell) {
  return fmt::format("{} bs={} align={} qd={}", ToString(cell.pattern), cell.block_size,
                     cell.offset_align, cell.queue_depth);
}

bool IsHeadline(const BenchCell& cell) {
  return !cell.in_grid ||
         (cell.block_size == kRandomBlock && cell.offset_align == kGridReferenceAlign);
}

GridSpec DefaultGrid() {
  GridSpec grid;
  for (uint64_t size = kGridStep; size <= kGridMax; size += kGridStep) {
    grid.block_sizes.push_back(size);
    grid.offset_aligns.push_back(size);
  }
  return grid;
}

std::vector<BenchCell> DefaultCells(BenchOp op, const GridSpec& grid) {
  const IoPattern random = op == BenchOp::kWrite     ? IoPattern::kRandWrite
                           : op == BenchOp::kRewrite ? IoPattern::kRandRewrite
                                                     : IoPattern::kRandRead;
  const IoPattern sequential = op == BenchOp::kWrite     ? IoPattern::kSeqWrite
                               : op == BenchOp::kRewrite ? IoPattern::kSeqRewrite
                                                         : IoPattern::kSeqRead;
  std::vector<BenchCell> cells;
  for (uint64_t block : grid.block_sizes) {
    for (uint64_t align : grid.offset_aligns) {
      cells.push_back({random, block, align, kGridQueueDepth, /*in_grid=*/true});
    }
  }
  // Random 4 KiB at QD1 is the grid's aligned 4096 x 4096 cell; it is not measured twice.
  cells.push_back({sequential, kSequentialBlock, kSequentialBlock, kSequentialQueueDepth});
  cells.push_back({random, kRandomBlock, kRandomBlock, kDeepQueueDepth});
  return cells;
}

std::vector<BenchCell> CellsForSectorSize(const std::vector<BenchCell>& cells,
                                          uint64_t logical_sector_size,
                                          std::vector<BenchCell>* skipped) {
  std::vector<BenchCell> kept;
  for (const BenchCell& cell : cells) {
    const bool fits =
        cell.block_size % logical_sector_size == 0 && cell.offset_align % logical_sector_size == 0;
    if (fits) {
      kept.push_back(cell);
    } else if (skipped) {
      skipped->push_back(cell);
    }
  }
  return kept;
}

uint64_t CellSeed(uint64_t seed, const BenchCell& cell, uint32_t place) {
  uint64_t key = static_cast<uint64_t>(cell.pattern);
  for (uint64_t part : {cell.block_size, cell.offset_align, uint64_t{cell.queue_depth}}) {
    key = DeriveSeed(key, part);
  }
  // Place 0 keeps the seeds of runs that measure one place.
  if (place != 0) key = DeriveSeed(key, 0x706c616365 + place);  // "place"
  return DeriveSeed(seed, key);
}

std::vector<BenchGroup> GridGroups(const std::vector<BenchCell>& cells) {
  std::vector<BenchGroup> groups;
  std::map<std::tuple<IoPattern, uint64_t, uint32_t>, size_t> rows;
  for (uint32_t i = 0; i < cells.size(); ++i) {
    const BenchCell& c = cells[i];
    if (!c.in_grid) {
      groups.push_back({{i}, 0});
      continue;
    }
    auto [it, added] = rows.try_emplace({c.pattern, c.block_size, c.queue_depth}, groups.size());
    if (added) groups.push_back({});
    groups[it->second].cells.push_back(i);
  }
  return groups;
}

namespace {

// The window of `group` when every cell gets `per_cell` ns: at least `min_window`.
double Window(const BenchGroup& group, double per_cell, double min_window) {
  return std::max(per_cell * static_cast<double>(group.cells.size()), min_window);
}

// Total window time of one round.
double RoundTime(const std::vector<BenchGroup>& groups, double per_cell, double min_window) {
  double total = 0;
  for (const BenchGroup& g : groups) total += Window(g, per_cell, min_window);
  return total;
}

Status CheckGroups(const std::vector<BenchCell>& cells, const std::vector<BenchGroup>& groups) {
  std::vector<int> seen(cells.size(), 0);
  for (const BenchGroup& g : groups) {
    if (g.cells.empty() || g.cells.size() > kMaxGroupCells) {
      return MakeError(fmt::format("a group of the benchmark needs 1 to {} cells", kMaxGroupCells));
    }
    for (uint32_t i : g.cells) {
      if (i >= cells.size() || seen[i]++) {
        return MakeError("the benchmark's groups must hold every cell once");
      }
      if (cells[i].queue_depth != cells[g.cells.front()].queue_depth) {
        return MakeError(fmt::format("{} and {} cannot share windows: their queue depths differ",
                                     Describe(cells[g.cells.front()]), Describe(cells[i])));
      }
    }
  }
  if (std::find(seen.begin(), seen.end(), 0) != seen.end()) {
    return MakeError("the benchmark's groups must hold every cell once");
  }
  return {};
}

}  // namespace

Result<BenchPlan> PlanBench(const std::vector<BenchCell>& cells, const BenchPlanOptions& options) {
  if (cells.empty()) return MakeError("nothing to measure: no cell fits this target");
  if (options.trial_budget_ns == 0) {
    return MakeError("the benchmark needs a time budget greater than 0");
  }
  BenchPlan plan;
  plan.cells = cells;
  plan.seed = options.seed;
  plan.trial_budget_ns = options.trial_budget_ns;
  plan.places = options.places.empty() ? std::vector<uint32_t>(cells.size(), 0) : options.places;
  if (plan.places.size() != cells.size()) {
    return MakeError("the benchmark needs one place per cell");
  }
  plan.groups = options.groups.empty() ? GridGroups(cells) : options.groups;
  if (Status s = CheckGroups(cells, plan.groups); !s) return s.error();

  // The most rounds (up to the preferred number, at least kMinRounds) at which every window
  // still gets its minimum length; then the time per cell that fills the budget.
  const double budget = static_cast<double>(options.trial_budget_ns);
  const double min_window = static_cast<double>(options.min_window_ns);
  plan.rounds = std::clamp(options.preferred_rounds, kMinRounds, kMaxRounds);
  while (plan.rounds > kMinRounds && RoundTime(plan.groups, 0, min_window) * plan.rounds > budget) {
    --plan.rounds;
  }
  const double per_round = budget / plan.rounds;
  double scale = 1.0;  // below 1 when even kMinRounds minimum windows do not fit
  double per_cell = 0;
  if (RoundTime(plan.groups, 0, min_window) >= per_round) {
    scale = per_round / RoundTime(plan.groups, 0, min_window);
  } else {
    double low = 0;
    double high = per_round;
    for (int step = 0; step < kSolverSteps; ++step) {
      const double mid = (low + high) / 2;
      (RoundTime(plan.groups, mid, min_window) > per_round ? high : low) = mid;
    }
    per_cell = low;
  }
  for (BenchGroup& g : plan.groups) {
    g.window_ns = static_cast<uint64_t>(Window(g, per_cell, min_window) * scale);
    if (g.window_ns == 0) return MakeError("the time budget is too small for this many cells");
  }
  plan.group_of.assign(cells.size(), 0);
  for (uint32_t g = 0; g < plan.groups.size(); ++g) {
    for (uint32_t i : plan.groups[g].cells) plan.group_of[i] = g;
  }

  Xoshiro256 rng(DeriveSeed(options.seed, kOrderStream));
  plan.order.resize(plan.rounds);
  for (std::vector<uint32_t>& round : plan.order) {
    round.resize(plan.groups.size());
    std::iota(round.begin(), round.end(), 0u);
    // Fisher-Yates with the seeded generator: the same seed gives the same schedule.
    for (size_t i = round.size(); i > 1; --i) std::swap(round[i - 1], round[rng.Below(i)]);
  }
  return plan;
}

void WindowOrder(const BenchGroup& group, uint32_t blocks, Xoshiro256& rng,
                 std::vector<uint8_t>& order) {
  order.clear();
  for (uint32_t b = 0; b < blocks; ++b) {
    const size_t begin = order.size();
    for (size_t slot = 0; slot < group.cells.size(); ++slot) {
      order.push_back(static_cast<uint8_t>(slot));
    }
    for (size_t i = order.size() - begin; i > 1; --i) {
      std::swap(order[begin + i - 1], order[begin + rng.Below(i)]);
    }
  }
}

}  // namespace partalign
