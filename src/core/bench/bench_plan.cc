#include "partalign/bench/bench_plan.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr std::array<std::pair<IoPattern, std::string_view>, 4> kPatternNames{{
    {IoPattern::kRandRead, "randread"},
    {IoPattern::kSeqRead, "seqread"},
    {IoPattern::kRandWrite, "randwrite"},
    {IoPattern::kSeqWrite, "seqwrite"},
}};

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

AccessOrder OrderOf(IoPattern pattern) {
  return pattern == IoPattern::kSeqRead || pattern == IoPattern::kSeqWrite
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

std::vector<BenchCell> DefaultCells(bool write, const GridSpec& grid) {
  const IoPattern random = write ? IoPattern::kRandWrite : IoPattern::kRandRead;
  const IoPattern sequential = write ? IoPattern::kSeqWrite : IoPattern::kSeqRead;
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

uint64_t CellSeed(uint64_t seed, const BenchCell& cell) {
  uint64_t key = static_cast<uint64_t>(cell.pattern);
  for (uint64_t part : {cell.block_size, cell.offset_align, uint64_t{cell.queue_depth}}) {
    key = DeriveSeed(key, part);
  }
  return DeriveSeed(seed, key);
}

Result<BenchPlan> PlanBench(const std::vector<BenchCell>& cells, const PlanOptions& options) {
  if (cells.empty()) return MakeError("nothing to measure: no cell fits this target");
  if (options.trial_budget_ns == 0 || options.preferred_trial_ns == 0) {
    return MakeError("the benchmark needs a time budget greater than 0");
  }
  BenchPlan plan;
  plan.cells = cells;
  plan.seed = options.seed;
  plan.trial_budget_ns = options.trial_budget_ns;
  const uint64_t per_cell = options.trial_budget_ns / cells.size();
  plan.rounds = static_cast<uint32_t>(
      std::clamp<uint64_t>(per_cell / options.preferred_trial_ns, kMinRounds, kMaxRounds));
  plan.trial_ns = per_cell / plan.rounds;
  if (plan.trial_ns == 0) return MakeError("the time budget is too small for this many cells");

  Xoshiro256 rng(DeriveSeed(options.seed, kOrderStream));
  plan.order.resize(plan.rounds);
  for (std::vector<uint32_t>& round : plan.order) {
    round.resize(cells.size());
    std::iota(round.begin(), round.end(), 0u);
    // Fisher-Yates with the seeded generator: the same seed gives the same schedule.
    for (size_t i = round.size(); i > 1; --i) std::swap(round[i - 1], round[rng.Below(i)]);
  }
  return plan;
}

}  // namespace partalign
