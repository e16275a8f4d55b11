// SPDX-License-Identifier: GPL-3.0-or-later
// The statistics on synthetic samples: known quantiles, interval coverage, the false positive
// rate on identical distributions and the power to detect a 10% shift. Every simulation is
// seeded, so the outcome is the same on every run; the bounds leave room for the simulation's
// own sampling error (a few standard errors of a binomial proportion).
#include "partalign/bench/bench_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "partalign/bench/bench_random.h"

namespace partalign {
namespace {

// Per-trial IOPS the way a benchmark sees them: log-normal around `median`.
std::vector<double> Trials(Xoshiro256& rng, size_t n, double median, double sigma) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(median * std::exp(sigma * rng.NextNormal()));
  return v;
}

TEST(QuantileTest, InterpolatesLikeRType7) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.9), 4.6);
  EXPECT_EQ(Quantile({7}, 0.3), 7);
}

TEST(BinomialHalfCdfTest, KnownValues) {
  EXPECT_DOUBLE_EQ(BinomialHalfCdf(6, 0), 1.0 / 64);
  EXPECT_NEAR(BinomialHalfCdf(10, 1), 11.0 / 1024, 1e-15);
  EXPECT_NEAR(BinomialHalfCdf(20, 5), 21700.0 / 1048576, 1e-12);
  EXPECT_EQ(BinomialHalfCdf(5, 5), 1.0);
}

TEST(MedianIntervalTest, PicksTheWidestRankThatStillReaches95Percent) {
  // n = 6: only [min, max] reaches 95% (96.9%). n = 11: [x(2), x(10)] (98.8%); [x(3), x(9)]
  // would be 93.5%.
  Interval six = *MedianInterval({6, 1, 5, 2, 4, 3});
  EXPECT_EQ(six.low, 1);
  EXPECT_EQ(six.high, 6);
  EXPECT_NEAR(six.level, 1 - 2.0 / 64, 1e-12);
  Interval eleven = *MedianInterval({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_EQ(eleven.low, 2);
  EXPECT_EQ(eleven.high, 10);
  EXPECT_NEAR(eleven.level, 1 - 2.0 * 12 / 2048, 1e-12);
  EXPECT_LT(MedianInterval({1, 2, 3}).value().level, 0.95);  // too few for 95%
  EXPECT_FALSE(MedianInterval({}));
}

TEST(MedianIntervalTest, CoverageOfTheTrueMedianMatchesItsLevel) {
  Xoshiro256 rng(101);
  constexpr int kExperiments = 4000;
  for (size_t n : {6u, 11u, 24u}) {
    int covered = 0;
    double level = 0;
    for (int e = 0; e < kExperiments; ++e) {
      Interval ci = *MedianInterval(Trials(rng, n, 1000.0, 0.1));
      covered += ci.low <= 1000.0 && 1000.0 <= ci.high;
      level = ci.level;
    }
    const double coverage = static_cast<double>(covered) / kExperiments;
    EXPECT_GE(level, 0.95) << n;
    // Exact for continuous data: coverage equals the level up to simulation error (sd ~0.003).
    EXPECT_NEAR(coverage, level, 0.012) << "n=" << n;
  }
}

TEST(CompareSamplesTest, IntervalCoversTheTrueRatio) {
  Xoshiro256 rng(202);
  constexpr int kExperiments = 4000;
  int covered = 0;
  for (int e = 0; e < kExperiments; ++e) {
    // Unequal sizes; the after distribution is the before one times 1.1.
    Change c = *CompareSamples(Trials(rng, 8, 1000, 0.05), Trials(rng, 12, 1100, 0.05), 0.95);
    covered += c.low <= 0.1 && 0.1 <= c.high;
  }
  // At least 95% (exact for continuous data), a little more because U is discrete.
  const double coverage = static_cast<double>(covered) / kExperiments;
  EXPECT_GE(coverage, 0.95 - 0.008);
  EXPECT_LE(coverage, 0.97);
}

TEST(CompareSamplesTest, FalsePositiveRateOnIdenticalDistributionsIsAtMostFivePercent) {
  Xoshiro256 rng(303);
  constexpr int kExperiments = 4000;
  int significant = 0;
  for (int e = 0; e < kExperiments; ++e) {
    significant +=
        CompareSamples(Trials(rng, 12, 1000, 0.05), Trials(rng, 12, 1000, 0.05), 0.95)->significant;
  }
  const double rate = static_cast<double>(significant) / kExperiments;
  EXPECT_LE(rate, 0.05 + 0.007);  // 5% nominal, plus two simulation standard errors
  EXPECT_GE(rate, 0.03);          // and not an interval so wide that it never says anything
}

TEST(CompareSamplesTest, BonferroniFamilyOf56HasFewerThanFivePercentFalseAlarms) {
  // A uniform grid: 56 comparisons of identical cells per simulated run. The family-wise rate
  // (runs with any significant pair) must stay below 5%.
  Xoshiro256 rng(404);
  constexpr int kRuns = 400;
  constexpr size_t kFamily = 56;
  const double confidence = BonferroniConfidence(kConfidence, kFamily);
  int runs_with_alarm = 0;
  for (int run = 0; run < kRuns; ++run) {
    const std::vector<double> reference = Trials(rng, 12, 1000, 0.05);
    bool alarm = false;
    for (size_t i = 0; i < kFamily; ++i) {
      alarm |= CompareSamples(reference, Trials(rng, 12, 1000, 0.05), confidence)->significant;
    }
    runs_with_alarm += alarm;
  }
  EXPECT_LT(static_cast<double>(runs_with_alarm) / kRuns, 0.05);
}

TEST(CompareSamplesTest, DetectsATenPercentShift) {
  Xoshiro256 rng(505);
  constexpr int kExperiments = 2000;
  int detected = 0;
  int wrong_sign = 0;
  for (int e = 0; e < kExperiments; ++e) {
    Change c = *CompareSamples(Trials(rng, 10, 1000, 0.05), Trials(rng, 10, 900, 0.05), 0.95);
    detected += c.significant && c.change < 0;
    wrong_sign += c.significant && c.change > 0;
  }
  EXPECT_GE(static_cast<double>(detected) / kExperiments, 0.95);
  EXPECT_EQ(wrong_sign, 0);
}

TEST(CompareSamplesTest, PointEstimateIsTheMedianPairwiseRatio) {
  const std::vector<double> hundred(8, 100);
  Change c = *CompareSamples(hundred, std::vector<double>(8, 110), 0.95);
  EXPECT_NEAR(c.change, 0.10, 1e-12);
  EXPECT_NEAR(c.low, 0.10, 1e-12);  // constant samples: the interval is the point
  EXPECT_TRUE(c.significant);
  EXPECT_FALSE(CompareSamples(hundred, hundred, 0.95)->significant);
  // Pairwise ratios of {1, 2, 4} against {2, 4, 8, 16}: the median of the 12 is 2.83 (between
  // 2 and 4), i.e. +183%.
  Change spread = *CompareSamples({1, 2, 4}, {2, 4, 8, 16}, 0.80);
  EXPECT_NEAR(spread.change, std::sqrt(8.0) - 1, 1e-12);
  EXPECT_LT(spread.low, spread.change);
  EXPECT_GT(spread.high, spread.change);
}

TEST(CompareSamplesTest, OneWildTrialDoesNotHideAnEffect) {
  // A trial that lost the CPU for a while: 30 times slower. With the 12 trials of a default
  // run, the rank interval still finds a 20% effect at the level of the 56-comparison family
  // (a mean on any scale would be dragged by the wild trial).
  std::vector<double> before{1000, 1010, 990, 1005, 995, 1002, 998, 1003, 997, 1001, 999, 33};
  std::vector<double> after{800, 810, 790, 805, 795, 802, 798, 801, 799, 803, 797, 800};
  Change c = *CompareSamples(before, after, BonferroniConfidence(kConfidence, 56));
  EXPECT_TRUE(c.significant);
  EXPECT_NEAR(c.change, -0.2, 0.01);
}

TEST(MannWhitneyNullCdfTest, MatchesEnumeration) {
  // m = n = 2: U takes 0, 1, 2, 2, 3, 4 over the 6 equally likely arrangements.
  std::vector<double> cdf = MannWhitneyNullCdf(2, 2);
  ASSERT_EQ(cdf.size(), 5u);
  EXPECT_NEAR(cdf[0], 1.0 / 6, 1e-15);
  EXPECT_NEAR(cdf[1], 2.0 / 6, 1e-15);
  EXPECT_NEAR(cdf[2], 4.0 / 6, 1e-15);
  EXPECT_NEAR(cdf[4], 1.0, 1e-15);
  // Tails are 1 / C(m + n, m), and the distribution is symmetric.
  std::vector<double> big = MannWhitneyNullCdf(8, 8);
  EXPECT_NEAR(big[0], 1.0 / 12870, 1e-18);
  EXPECT_NEAR(big[1], 2.0 / 12870, 1e-18);
  EXPECT_NEAR(big[31], 1 - big[32], 1e-12);
  std::vector<double> wide = MannWhitneyNullCdf(64, 64);
  EXPECT_GT(wide[0], 0.0);
  EXPECT_LT(wide[0], 1e-30);
  EXPECT_NEAR(wide[2047], 1 - wide[2048], 1e-9);
}

TEST(CompareSamplesTest, RejectsTooFewOrNonPositiveSamples) {
  EXPECT_FALSE(CompareSamples({1}, {1, 2}, 0.95));
  // 3 and 3 trials: the smallest tail, 1 / C(6, 3) = 5%, cannot give a 95% interval.
  Result<Change> few = CompareSamples({1, 2, 3}, {1, 2, 3}, 0.95);
  ASSERT_FALSE(few);
  EXPECT_EQ(few.error().message,
            "3 and 3 trials are too few for a 95.00% interval; give the benchmark more time");
  EXPECT_FALSE(CompareSamples({1, 2}, {0, 2}, 0.95));
  EXPECT_FALSE(CompareSamples({1, -2}, {1, 2}, 0.95));
}

// Pairs of per-window rates: each window has a machine factor both sides share (what pairing
// removes), and each side its own noise; `ratio` is subject / reference.
void PairedTrials(Xoshiro256& rng, size_t n, double ratio, double window_sigma, double sigma,
                  std::vector<double>* reference, std::vector<double>* subject) {
  reference->clear();
  subject->clear();
  for (size_t w = 0; w < n; ++w) {
    const double machine = 1000 * std::exp(window_sigma * rng.NextNormal());
    reference->push_back(machine * std::exp(sigma * rng.NextNormal()));
    subject->push_back(machine * ratio * std::exp(sigma * rng.NextNormal()));
  }
}

TEST(ComparePairedTest, IntervalCoversTheTrueRatioAndIgnoresWindowNoise) {
  Xoshiro256 rng(606);
  constexpr int kExperiments = 2000;
  int covered = 0;
  double width = 0;
  std::vector<double> reference, subject;
  for (int e = 0; e < kExperiments; ++e) {
    // The machine varies by 50% from window to window; each side by 5% on its own.
    PairedTrials(rng, 64, 1.1, 0.5, 0.05, &reference, &subject);
    Change c = *ComparePaired(reference, subject, 0.95);
    covered += c.low <= 0.1 && 0.1 <= c.high;
    width += (c.high - c.low) / kExperiments;
    EXPECT_EQ(c.pairs, 64u);
  }
  const double coverage = static_cast<double>(covered) / kExperiments;
  EXPECT_GE(coverage, 0.95 - 0.01);
  EXPECT_LE(coverage, 0.98);  // order statistics reach 95% or a little more
  // About 2 x 1.96 x 1.25 x 0.05 x sqrt(2 / 64) x 1.1 = 4.8% (the median's interval is 1.25
  // times as wide as the mean's on normal data): the 50% window noise is gone.
  EXPECT_LT(width, 0.06);
  EXPECT_GT(width, 0.035);
}

TEST(ComparePairedTest, FalsePositiveRateOnASkewedNullIsAtMostFivePercent) {
  // Without a difference, a window's log ratio is symmetric about 0 whatever the noise looks
  // like (both sides draw from the same distribution): here heavy-tailed and skewed, a stall
  // of 10x in 5% of the I/O sums.
  Xoshiro256 rng(707);
  constexpr int kExperiments = 4000;
  int significant = 0;
  std::vector<double> reference(40), subject(40);
  for (int e = 0; e < kExperiments; ++e) {
    for (size_t w = 0; w < 40; ++w) {
      const double machine = std::exp(0.5 * rng.NextNormal());
      reference[w] =
          machine * (rng.NextDouble() < 0.05 ? 0.1 : 1) * std::exp(0.1 * rng.NextNormal());
      subject[w] = machine * (rng.NextDouble() < 0.05 ? 0.1 : 1) * std::exp(0.1 * rng.NextNormal());
    }
    significant += ComparePaired(reference, subject, 0.95)->significant;
  }
  const double rate = static_cast<double>(significant) / kExperiments;
  EXPECT_LE(rate, 0.05 + 0.007);
  EXPECT_GE(rate, 0.03);
}

TEST(ComparePairedTest, BonferroniFamilyOf56HasAtMostFivePercentFalseAlarms) {
  // 56 independent comparisons at 1 - 0.05/56 each: 4.9% of the runs raise an alarm. The bound
  // allows two standard errors of the simulation (0.9% with 600 runs).
  Xoshiro256 rng(808);
  constexpr int kRuns = 600;
  const double confidence = BonferroniConfidence(kConfidence, 56);
  int runs_with_alarm = 0;
  std::vector<double> reference, subject;
  for (int run = 0; run < kRuns; ++run) {
    bool alarm = false;
    for (int i = 0; i < 56; ++i) {
      PairedTrials(rng, 32, 1.0, 0.3, 0.08, &reference, &subject);
      alarm |= ComparePaired(reference, subject, confidence)->significant;
    }
    runs_with_alarm += alarm;
  }
  const double rate = static_cast<double>(runs_with_alarm) / kRuns;
  EXPECT_LE(rate, 0.05 + 0.018);
  EXPECT_GE(rate, 0.02);  // not so conservative that it could never say anything
}

TEST(ComparePairedTest, DetectsAFivePercentEffectWithSixtyFourWindows) {
  // The smallest effect of the 10% detection target (half the I/Os of a cell misaligned), at
  // the family level of the default grid.
  Xoshiro256 rng(909);
  const double confidence = BonferroniConfidence(kConfidence, 56);
  int detected = 0;
  std::vector<double> reference, subject;
  for (int e = 0; e < 1000; ++e) {
    PairedTrials(rng, 64, 0.95, 0.3, 0.03, &reference, &subject);
    Change c = *ComparePaired(reference, subject, confidence);
    detected += c.significant && c.change < 0;
  }
  EXPECT_GE(detected, 950);
}

TEST(ComparePairedTest, WindowsWhereOneSideStalledDoNotWidenTheInterval) {
  // A quarter of the windows have a stall of one side (20x slower, either side): the median
  // of the per-window ratios and its order-statistic interval barely notice.
  Xoshiro256 rng(1010);
  std::vector<double> reference, subject;
  PairedTrials(rng, 64, 1.05, 0.3, 0.02, &reference, &subject);
  Change clean = *ComparePaired(reference, subject, BonferroniConfidence(kConfidence, 56));
  for (size_t w = 0; w < 64; w += 4) ((w / 4) % 2 ? reference : subject)[w] /= 20;
  Change stalled = *ComparePaired(reference, subject, BonferroniConfidence(kConfidence, 56));
  EXPECT_TRUE(stalled.significant);
  EXPECT_NEAR(stalled.change, 0.05, 0.01);
  EXPECT_LT(stalled.high - stalled.low, 2 * (clean.high - clean.low));
  EXPECT_LT(stalled.high - stalled.low, 0.05);
}

TEST(ComparePairedTest, RejectsUnequalTooFewOrNonPositiveSamples) {
  EXPECT_FALSE(ComparePaired({1, 2, 3}, {1, 2}, 0.95));
  EXPECT_FALSE(ComparePaired({1, 2}, {1, -2}, 0.95));
  // 5 pairs: [min, max] covers the median with 1 - 2^-4 = 93.75%, short of 95%.
  Result<Change> few = ComparePaired({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, 0.95);
  ASSERT_FALSE(few);
  EXPECT_EQ(few.error().message,
            "5 windows are too few for a 95.00% interval; give the benchmark more time");
  // Constant ratios: the interval is the point.
  Change exact = *ComparePaired(std::vector<double>(8, 100), std::vector<double>(8, 90), 0.95);
  EXPECT_NEAR(exact.change, -0.1, 1e-12);
  EXPECT_NEAR(exact.low, -0.1, 1e-12);
  EXPECT_TRUE(exact.significant);
}

TEST(BonferroniTest, SplitsTheErrorRateEvenly) {
  EXPECT_DOUBLE_EQ(BonferroniConfidence(0.95, 1), 0.95);
  EXPECT_DOUBLE_EQ(BonferroniConfidence(0.95, 50), 0.999);
}

}  // namespace
}  // namespace partalign
