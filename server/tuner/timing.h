// How long one candidate is timed and what its samples come to: the stopping rule and the
// summary (median, minimum, relative spread). Pure functions on plain numbers, so that the worker,
// which takes the samples, and the sweep, which re-measures finalists, share them and a test
// checks them without a GPU.
#pragma once

#include <span>
#include <vector>

#include "server/core/types.h"

namespace cutune::tuner {

// When to stop taking samples of one candidate (the worker protocol's TimingPolicy, less what is
// not about stopping).
struct StoppingRule {
  int min_samples = 10;
  int max_samples = 200;
  double target_rel_spread = 0.01;
  double max_ms = 100;  // 0: no time limit
};

// Past the time limit a candidate still gets this many samples: a median of fewer is one launch's
// luck.
inline constexpr int kMinSamplesAtTimeLimit = 3;

// Whether `samples` (microseconds, as taken), taken within `elapsed_ms`, are enough: their relative
// spread is at most the target and there are min_samples (at least 1), or there are max_samples
// (at least min_samples), or max_ms has passed and there are kMinSamplesAtTimeLimit. One sample has
// no spread to measure: it counts as 100%.
bool EnoughSamples(const StoppingRule& rule, std::span<const double> samples, double elapsed_ms);

// The middle value, or the mean of the two middle ones; 0 for no values.
double Median(std::vector<double> values);

// Sample standard deviation (n - 1) over the mean; 0 for fewer than two values.
double RelSpread(std::span<const double> values);

// Count, median, minimum and relative spread of `samples`; all zero for none.
TimingStats Summarize(std::vector<double> samples);

}  // namespace cutune::tuner
