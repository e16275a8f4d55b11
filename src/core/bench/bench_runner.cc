// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_runner.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace partalign {
namespace {

// Seed stream of the windows' submission orders, apart from the cells' and the rounds'.
constexpr uint64_t kWindowOrderStream = 0x77696e646f77;  // "window"

// A window's planned length after scaling: never below kMinTrialNs, unless it was planned
// shorter, and never above the plan.
uint64_t Scaled(uint64_t window_ns, double scale) {
  const auto scaled = static_cast<uint64_t>(static_cast<double>(window_ns) * scale);
  return std::clamp(scaled, std::min(window_ns, kMinTrialNs), window_ns);
}

// The runner shortens windows to this share of their plan at most, once kMinRounds are done.
constexpr double kMinWindowScale = 0.5;

// WindowRate leaves out a tenth of a cell's I/Os, rounded up (at least one stall), once it has
// this many; fewer are taken whole.
constexpr size_t kTrimDivisor = 10;
constexpr size_t kMinTrimmed = 4;

// A window of a group that cannot share a queue (see TakesTurns) is cut into slots, each
// cell alone in its slot: blocks of one slot per cell in a fresh random order, as many blocks as
// give each slot at least kMinSlotNs, at most kMaxSlotBlocks.
constexpr uint64_t kMinSlotNs = 2'000'000;
constexpr uint64_t kMaxSlotBlocks = 4;

}  // namespace

std::string_view WindowRateKindName(WindowRateKind kind) {
  switch (kind) {
    case WindowRateKind::kCount:
      return "count";
    case WindowRateKind::kMedianLatency:
      return "median_latency";
    case WindowRateKind::kMeanLatency:
      return "mean_latency";
  }
  return "count";
}

std::optional<WindowRateKind> ParseWindowRateKind(std::string_view name) {
  for (WindowRateKind kind :
       {WindowRateKind::kCount, WindowRateKind::kMedianLatency, WindowRateKind::kMeanLatency}) {
    if (name == WindowRateKindName(kind)) return kind;
  }
  return std::nullopt;
}

bool TakesTurns(const BenchPlan& plan, const BenchGroup& group) {
  if (group.cells.size() < 2) return false;
  const BenchCell& cell = plan.cells[group.cells.front()];
  return cell.queue_depth > 1 || OrderOf(cell.pattern) == AccessOrder::kSequential;
}

double WindowRate(std::vector<uint64_t>& latencies_ns, uint32_t queue_depth) {
  const size_t n = latencies_ns.size();
  const size_t kept = n < kMinTrimmed ? n : n - (n + kTrimDivisor - 1) / kTrimDivisor;
  if (kept == 0) return 0;
  std::nth_element(latencies_ns.begin(), latencies_ns.begin() + (kept - 1), latencies_ns.end());
  double sum = 0;
  for (size_t i = 0; i < kept; ++i) sum += static_cast<double>(latencies_ns[i]);
  return sum > 0 ? static_cast<double>(queue_depth) * static_cast<double>(kept) * 1e9 / sum : 0;
}

double MedianRate(std::vector<uint64_t>& latencies_ns) {
  const size_t n = latencies_ns.size();
  if (n == 0) return 0;
  const auto upper = latencies_ns.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(latencies_ns.begin(), upper, latencies_ns.end());
  double median = static_cast<double>(*upper);
  if (n % 2 == 0) {
    median = (median + static_cast<double>(*std::max_element(latencies_ns.begin(), upper))) / 2;
  }
  return median > 0 ? 1e9 / median : 0;
}

Result<BenchMeasurements> RunBench(const BenchPlan& plan, const std::vector<BenchRange>& ranges,
                                   BenchEngine& engine, const BenchProgressFn& progress) {
  BenchMeasurements result;
  std::vector<OffsetGenerator> offsets;
  offsets.reserve(plan.cells.size());
  result.cells.resize(plan.cells.size());
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    const BenchCell& cell = plan.cells[i];
    const uint32_t place = plan.places.at(i);
    if (place >= ranges.size()) {
      return MakeError(fmt::format("{}: no range for place {}", Describe(cell), place));
    }
    const BenchRange& range = ranges[place];
    OffsetSpec spec{OrderOf(cell.pattern), range.start,       range.bytes,
                    cell.block_size,       cell.offset_align, range.origin};
    Result<OffsetGenerator> generator =
        OffsetGenerator::Make(spec, CellSeed(plan.seed, cell, place));
    if (!generator)
      return MakeError(fmt::format("{}: {}", Describe(cell), generator.error().message));
    offsets.push_back(*generator);
    result.cells[i].cell = cell;
    result.cells[i].place = place;
    result.cells[i].group = plan.group_of.at(i);
    result.cells[i].trial_iops.reserve(plan.rounds);
  }

  uint64_t round_ns = 0;
  for (const BenchGroup& g : plan.groups) round_ns += g.window_ns;
  const uint64_t groups = plan.groups.size();
  Xoshiro256 order_rng(DeriveSeed(plan.seed, kWindowOrderStream));
  std::vector<uint8_t> order;
  std::vector<TrialStream> streams;
  std::array<TrialStream, 1> one_stream{};
  // One latency buffer per cell slot of a window, allocated once.
  std::vector<std::vector<uint64_t>> samples(kMaxGroupCells);
  for (std::vector<uint64_t>& v : samples) v.reserve(kMaxWindowSamples);
  double scale = 1.0;
  for (uint32_t round = 0; round < plan.rounds; ++round) {
    if (round > 0) {
      // What each window took beyond its planned length so far, and the scale of the windows
      // that lets the remaining rounds fit what is left of the budget. Windows shrink to half
      // their planned length at most (to nothing, if need be, for the first kMinRounds): below
      // that, time lost to every window's start and drain is better spent on fewer, fuller
      // windows, and the run stops before a round that would not fit.
      const uint64_t windows_done = uint64_t{round} * groups;
      const uint64_t overhead = result.wall_ns > result.planned_ns
                                    ? (result.wall_ns - result.planned_ns) / windows_done
                                    : 0;
      const uint64_t left =
          plan.trial_budget_ns > result.wall_ns ? plan.trial_budget_ns - result.wall_ns : 0;
      const uint32_t rounds_to_fit = round < kMinRounds ? kMinRounds - round : plan.rounds - round;
      const double fit =
          static_cast<double>(left) / rounds_to_fit - static_cast<double>(overhead * groups);
      scale = std::clamp(fit / static_cast<double>(round_ns),
                         round < kMinRounds ? 0.0 : kMinWindowScale, 1.0);
      uint64_t next_round = overhead * groups;
      for (const BenchGroup& g : plan.groups) next_round += Scaled(g.window_ns, scale);
      // Stop between rounds, never inside one, so every cell has the same number of trials.
      if (round >= kMinRounds && result.wall_ns + next_round > plan.trial_budget_ns) break;
    }
    for (uint32_t g : plan.order[round]) {
      const BenchGroup& group = plan.groups[g];
      const uint64_t window_ns = Scaled(group.window_ns, scale);
      const bool alone = group.cells.size() == 1;
      streams.clear();
      for (size_t k = 0; k < group.cells.size(); ++k) {
        const uint32_t index = group.cells[k];
        CellMeasurement& m = result.cells[index];
        samples[k].clear();
        streams.push_back({m.cell.pattern, m.cell.block_size, &offsets[index], &m.latency,
                           alone ? nullptr : &samples[k]});
      }
      const uint32_t depth = plan.cells[group.cells.front()].queue_depth;
      if (TakesTurns(plan, group)) {
        const uint64_t cells = group.cells.size();
        const uint64_t blocks =
            std::clamp<uint64_t>(window_ns / (cells * kMinSlotNs), 1, kMaxSlotBlocks);
        const uint64_t slot_ns = window_ns / (cells * blocks);
        WindowOrder(group, static_cast<uint32_t>(blocks), order_rng, order);
        for (uint8_t k : order) {
          const TrialStream one = streams[k];
          one_stream[0] = {one.pattern, one.block_size, one.offsets, one.latency, one.samples};
          Result<TrialResult> trial = engine.RunTrial({one_stream, depth, slot_ns, {}});
          if (!trial) return trial.error();
          const StreamResult& s = trial->streams[0];
          CellMeasurement& m = result.cells[group.cells[k]];
          m.ios += s.ios;
          m.bytes += s.bytes;
          m.measured_ns += trial->measured_ns;
          result.wall_ns += trial->wall_ns;
        }
        for (size_t k = 0; k < cells; ++k) {
          CellMeasurement& m = result.cells[group.cells[k]];
          m.rate_kind = WindowRateKind::kMeanLatency;
          const double rate = WindowRate(samples[k], depth);
          if (rate <= 0) {
            return MakeError(
                fmt::format("{}: the engine completed no I/O in a trial", Describe(m.cell)));
          }
          m.trial_iops.push_back(rate);
        }
        result.planned_ns += window_ns;
        continue;
      }
      if (alone) {
        order.clear();
      } else {
        WindowOrder(group, kOrderBlocks, order_rng, order);
      }
      Result<TrialResult> trial = engine.RunTrial({streams, depth, window_ns, order});
      if (!trial) return trial.error();
      for (size_t k = 0; k < group.cells.size(); ++k) {
        CellMeasurement& m = result.cells[group.cells[k]];
        const StreamResult& s = trial->streams[k];
        m.rate_kind = alone ? WindowRateKind::kCount : WindowRateKind::kMedianLatency;
        const double shared_rate = alone ? 0 : MedianRate(samples[k]);
        const bool measured = alone ? s.ios > 0 && trial->measured_ns > 0 : shared_rate > 0;
        if (!measured) {
          return MakeError(
              fmt::format("{}: the engine completed no I/O in a trial", Describe(m.cell)));
        }
        if (alone) {
          m.trial_iops.push_back(static_cast<double>(s.ios) * 1e9 /
                                 static_cast<double>(trial->measured_ns));
          m.measured_ns += trial->measured_ns;
        } else {
          m.trial_iops.push_back(shared_rate);
          m.measured_ns += s.latency_ns / depth;
        }
        m.ios += s.ios;
        m.bytes += s.bytes;
      }
      result.wall_ns += trial->wall_ns;
      result.planned_ns += window_ns;
    }
    result.rounds = round + 1;
    if (progress) progress({result.rounds, plan.rounds, result.wall_ns, plan.trial_budget_ns});
  }
  return result;
}

std::string BenchProgressText(const BenchProgress& p) {
  const uint64_t left_ns = p.budget_ns > p.spent_ns ? p.budget_ns - p.spent_ns : 0;
  return fmt::format("round {} of {}, about {:.1f} s left", p.rounds_done, p.rounds,
                     static_cast<double>(left_ns) / 1e9);
}

}  // namespace partalign
