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
  // Give up once the fastest sample is above this many microseconds (0: never): quick's brief
  // timing of a candidate already well behind the fastest so far (AbandonAbove).
  double abandon_above_us = 0;
};

// Past the time limit a candidate still gets this many samples: a median of fewer is one launch's
// luck.
inline constexpr int kMinSamplesAtTimeLimit = 3;

// Whether `samples` (microseconds, as taken), taken within `elapsed_ms`, are enough: their relative
// spread is at most the target and there are min_samples (at least 1), or there are max_samples
// (at least min_samples), or max_ms has passed and there are kMinSamplesAtTimeLimit, or even the
// fastest is above abandon_above_us. One sample has no spread to measure: it counts as 100%.
bool EnoughSamples(const StoppingRule& rule, std::span<const double> samples, double elapsed_ms);

// A candidate's brief timing may stop at its first sample where that sample is above the fastest
// time so far times `factor` (StoppingRule::abandon_above_us): such a candidate cannot be the
// winner, and its one sample says how far behind it is. Only where the threshold is at least
// kAbandonLeastUs: one sample of a kernel that long is within about a percent of its median, and
// such launches are what a quick sweep's timing costs (4096^3 on an H100: 32 of 100 candidates
// more than 25% behind the fastest so far when they came). 0 (never) without a fastest time, for
// a factor of 0 or under the floor.
inline constexpr double kAbandonLeastUs = 100;
double AbandonAbove(double factor, double fastest_us);

// The middle value, or the mean of the two middle ones; 0 for no values.
double Median(std::vector<double> values);

// Sample standard deviation (n - 1) over the mean; 0 for fewer than two values.
double RelSpread(std::span<const double> values);

// Count, median, minimum and relative spread of `samples`; all zero for none.
TimingStats Summarize(std::vector<double> samples);

}  // namespace cutune::tuner
