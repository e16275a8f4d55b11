// SPDX-License-Identifier: GPL-3.0-or-later
// Statistics of the benchmark: the median of a cell's trials with a distribution-free 95%
// interval, and the comparison of two cells as a percent change with a distribution-free
// interval, corrected for multiple comparisons (Bonferroni): paired when the two cells were
// measured in the same windows (the median of the per-window log ratios with its
// order-statistic interval), unpaired otherwise (Hodges-Lehmann with the exact Mann-Whitney
// interval, on the log scale). Rank methods, because windows on a shared machine have heavy
// tails: one that lost the CPU for a few milliseconds must not decide a comparison. The method,
// its assumptions and why it was chosen are in docs/bench.md.
#pragma once

#include <cstddef>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The confidence level of every interval partalign reports (per cell, and per family of
/// comparisons).
inline constexpr double kConfidence = 0.95;

/// The `fraction` quantile of `samples` with linear interpolation between order statistics
/// (Hyndman and Fan type 7, R's default). `samples` must not be empty.
double Quantile(std::vector<double> samples, double fraction);
double Median(std::vector<double> samples);

struct Interval {
  double low = 0;
  double high = 0;
  /// The confidence actually achieved (order-statistic intervals reach the requested level or
  /// more; with fewer than 6 samples no 95% interval exists and this is lower).
  double level = 0;
};

/// Distribution-free interval for the median: [x(k), x(n+1-k)] with the largest k for which
/// the binomial coverage 1 - 2 P(Bin(n, 1/2) <= k - 1) is at least `confidence` (Hollander and
/// Wolfe, Nonparametric Statistical Methods, ch. 3). Assumes only independent trials from one
/// continuous distribution. With n < 6 it is [min, max] at the level it has.
Result<Interval> MedianInterval(std::vector<double> samples, double confidence = kConfidence);

/// P(Bin(n, 1/2) <= k).
double BinomialHalfCdf(size_t n, size_t k);

/// The per-comparison confidence that keeps the family-wise level `family_confidence` over
/// `comparisons` intervals (Bonferroni: 1 - (1 - family) / m; exact for any dependence).
double BonferroniConfidence(double family_confidence, size_t comparisons);

/// "after" relative to "before": after/before - 1 (0.12 = 12% more).
struct Change {
  double change = 0;
  double low = 0;
  double high = 0;
  double confidence = 0;
  /// The interval excludes 0: a difference at this confidence. False means "no significant
  /// difference", which is a result, not a failure.
  bool significant = false;
  /// Paired: from per-window ratios of two cells measured in the same windows; the number of
  /// pairs. 0: unpaired (two runs, or cells measured apart).
  size_t pairs = 0;
};

/// P(U <= u) for u = 0 .. m*n, U the Mann-Whitney count of pairs (x_i < y_j) of two samples of
/// sizes m and n from one continuous distribution: the coefficients of the Gaussian binomial
/// [m + n choose m]_q divided by C(m + n, m).
std::vector<double> MannWhitneyNullCdf(size_t m, size_t n);

/// The change from `before` to `after` as the Hodges-Lehmann estimate of the shift between
/// log(before) and log(after) (the median of all pairwise differences), exponentiated: a ratio,
/// minus 1. Its interval is the distribution-free one from the Mann-Whitney distribution
/// (Hollander and Wolfe, ch. 4): [D(k), D(mn+1-k)] of the sorted pairwise differences, with
/// coverage at least `confidence` when the two distributions differ by a factor. Fails when
/// there are too few trials to reach `confidence` at all, or a value is not positive.
Result<Change> CompareSamples(const std::vector<double>& before, const std::vector<double>& after,
                              double confidence);

/// Two cells measured in the same windows: `reference[w]` and `subject[w]` are their rates in
/// window w. The change is the median of the per-window log ratios log(subject_w /
/// reference_w), exponentiated, minus 1; its interval is the distribution-free one for that
/// median (MedianInterval: order statistics, the sign test's interval). It assumes only that
/// the windows are independent; with the I/Os of both cells in a random order inside each
/// window and as many of each, the median log ratio is 0 when the cells do not differ, whatever
/// the machine does. A window in which one side lost the CPU for milliseconds is one outlier
/// among the windows: it moves the interval by one rank, however far off it is (a signed-rank
/// interval, which averages pairs of windows, was several times wider on this shared machine).
/// Fails when the samples differ in length, there are too few windows for `confidence`, or a
/// value is not positive.
Result<Change> ComparePaired(const std::vector<double>& reference,
                             const std::vector<double>& subject, double confidence);

}  // namespace partalign
