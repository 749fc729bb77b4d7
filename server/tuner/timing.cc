#include "server/tuner/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cutune::tuner {

bool EnoughSamples(const StoppingRule& rule, std::span<const double> samples, double elapsed_ms) {
  const int n = static_cast<int>(samples.size());
  const int min_samples = std::max(1, rule.min_samples);
  const int max_samples = std::max(min_samples, rule.max_samples);
  const double spread = n > 1 ? RelSpread(samples) : 1.0;
  const bool behind = rule.abandon_above_us > 0 && n > 0 &&
                      *std::min_element(samples.begin(), samples.end()) > rule.abandon_above_us;
  return (n >= min_samples && spread <= rule.target_rel_spread) || n >= max_samples ||
         (rule.max_ms > 0 && elapsed_ms >= rule.max_ms && n >= kMinSamplesAtTimeLimit) || behind;
}

double AbandonAbove(double factor, double fastest_us) {
  if (!(factor > 0) || !(fastest_us > 0)) return 0;
  const double threshold = factor * fastest_us;
  return threshold >= kAbandonLeastUs ? threshold : 0;
}

double Median(std::vector<double> values) {
  const size_t n = values.size();
  if (n == 0) return 0;
  std::sort(values.begin(), values.end());
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double RelSpread(std::span<const double> values) {
  const size_t n = values.size();
  if (n < 2) return 0;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  double squares = 0;
  for (double x : values) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(n - 1)) / mean;
}

TimingStats Summarize(std::vector<double> samples) {
  TimingStats stats;
  if (samples.empty()) return stats;
  stats.samples = static_cast<int>(samples.size());
  stats.rel_spread = RelSpread(samples);
  stats.min_us = *std::min_element(samples.begin(), samples.end());
  stats.median_us = Median(std::move(samples));
  return stats;
}

}  // namespace cutune::tuner
