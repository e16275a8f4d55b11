// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_stats.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace partalign {

double Quantile(std::vector<double> samples, double fraction) {
  std::sort(samples.begin(), samples.end());
  const double position = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(samples.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, samples.size() - 1);
  return samples[below] +
         (position - static_cast<double>(below)) * (samples[above] - samples[below]);
}

double Median(std::vector<double> samples) { return Quantile(std::move(samples), 0.5); }

double BinomialHalfCdf(size_t n, size_t k) {
  if (k >= n) return 1.0;
  double sum = 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (size_t i = 0; i <= k; ++i) {
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                    log_half_n);
  }
  return std::min(sum, 1.0);
}

Result<Interval> MedianInterval(std::vector<double> samples, double confidence) {
  if (samples.empty()) return MakeError("no samples for a median interval");
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  size_t k = 1;  // 1-based rank of the lower bound
  double level = 1.0 - 2.0 * BinomialHalfCdf(n, 0);
  for (size_t candidate = 2; candidate <= n / 2; ++candidate) {
    const double c = 1.0 - 2.0 * BinomialHalfCdf(n, candidate - 1);
    if (c < confidence) break;
    k = candidate;
    level = c;
  }
  if (n == 1) level = 0;
  return Interval{samples[k - 1], samples[n - k], level};
}

double BonferroniConfidence(double family_confidence, size_t comparisons) {
  if (comparisons <= 1) return family_confidence;
  return 1.0 - (1.0 - family_confidence) / static_cast<double>(comparisons);
}

std::vector<double> MannWhitneyNullCdf(size_t m, size_t n) {
  // [m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). After step i the product is
  // [n + i choose i]_q, a polynomial of degree i * n, so coefficients above i * n can be left
  // out. Doubles hold C(128, 64) ~ 2.4e37 with a relative error of 1e-16 of the total, far
  // below the tail probabilities (> 1e-5) the intervals look at.
  std::vector<double> counts(m * n + 1, 0.0);
  counts[0] = 1.0;
  for (size_t i = 1; i <= m; ++i) {
    const size_t degree = i * n;
    // Multiply by (1 - q^(n+i)).
    for (size_t k = degree; k >= n + i && k <= degree; --k) counts[k] -= counts[k - (n + i)];
    // Divide by (1 - q^i): c[k] += c[k - i], ascending.
    for (size_t k = i; k <= degree; ++k) counts[k] += counts[k - i];
  }
  double total = 0;
  for (double c : counts) total += c;
  std::vector<double> cdf(counts.size());
  double running = 0;
  for (size_t u = 0; u < counts.size(); ++u) {
    running += counts[u];
    cdf[u] = std::min(running / total, 1.0);
  }
  return cdf;
}

Result<Change> CompareSamples(const std::vector<double>& before, const std::vector<double>& after,
                              double confidence) {
  if (before.size() < 2 || after.size() < 2) {
    return MakeError(fmt::format("a comparison needs at least 2 trials on each side ({} and {})",
                                 before.size(), after.size()));
  }
  auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!std::all_of(before.begin(), before.end(), positive) ||
      !std::all_of(after.begin(), after.end(), positive)) {
    return MakeError("a comparison needs positive, finite trial results");
  }
  std::vector<double> differences;
  differences.reserve(before.size() * after.size());
  for (double b : before) {
    for (double a : after) differences.push_back(std::log(a) - std::log(b));
  }
  std::sort(differences.begin(), differences.end());
  const size_t pairs = differences.size();
  const std::vector<double> cdf = MannWhitneyNullCdf(before.size(), after.size());
  // The largest k with P(U <= k - 1) <= alpha / 2: D(k) and D(pairs + 1 - k) bound the shift.
  const double tail = (1.0 - confidence) / 2.0;
  size_t k = 0;
  while (k < pairs / 2 && cdf[k] <= tail) ++k;
  if (k == 0) {
    return MakeError(fmt::format(
        "{} and {} trials are too few for a {:.2f}% interval; give the benchmark more time",
        before.size(), after.size(), confidence * 100));
  }
  Change change;
  change.confidence = confidence;
  change.change = std::expm1(Median(differences));
  change.low = std::expm1(differences[k - 1]);
  change.high = std::expm1(differences[pairs - k]);
  change.significant = change.low > 0.0 || change.high < 0.0;
  return change;
}

Result<Change> ComparePaired(const std::vector<double>& reference,
                             const std::vector<double>& subject, double confidence) {
  if (reference.size() != subject.size()) {
    return MakeError(
        fmt::format("a paired comparison needs as many windows on each side ({} and {})",
                    reference.size(), subject.size()));
  }
  auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!std::all_of(reference.begin(), reference.end(), positive) ||
      !std::all_of(subject.begin(), subject.end(), positive)) {
    return MakeError("a comparison needs positive, finite trial results");
  }
  const size_t n = reference.size();
  std::vector<double> d(n);
  for (size_t w = 0; w < n; ++w) d[w] = std::log(subject[w]) - std::log(reference[w]);
  Result<Interval> interval = MedianInterval(d, confidence);
  if (!interval || interval->level < confidence) {
    return MakeError(
        fmt::format("{} windows are too few for a {:.2f}% interval; give the benchmark more time",
                    n, confidence * 100));
  }
  Change change;
  change.confidence = confidence;
  change.pairs = n;
  change.change = std::expm1(Median(d));
  change.low = std::expm1(interval->low);
  change.high = std::expm1(interval->high);
  change.significant = change.low > 0.0 || change.high < 0.0;
  return change;
}

}  // namespace partalign
