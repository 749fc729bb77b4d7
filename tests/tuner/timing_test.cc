// The stopping rule and the summary of a candidate's samples (server/tuner/timing.h), on made-up
// samples: what the worker does with the GPU's timings, without a GPU.
#include "server/tuner/timing.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::tuner {
namespace {

using ::testing::DoubleNear;

// Samples alternating between two values: a spread far above any target.
std::vector<double> Noisy(int n) {
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(i % 2 ? 100.0 : 1.0);
  return samples;
}

StoppingRule Rule(int min_samples, int max_samples, double target, double max_ms) {
  return {.min_samples = min_samples,
          .max_samples = max_samples,
          .target_rel_spread = target,
          .max_ms = max_ms};
}

TEST(EnoughSamplesTest, StopsOnceTheSpreadIsWithinTheTargetAfterMinSamples) {
  const StoppingRule rule = Rule(10, 200, 0.01, 0);
  std::vector<double> samples;
  for (int i = 0; i < 9; ++i) {
    samples.push_back(10.0);
    EXPECT_FALSE(EnoughSamples(rule, samples, 0)) << samples.size() << " samples";
  }
  samples.push_back(10.0);
  EXPECT_TRUE(EnoughSamples(rule, samples, 0));
}

TEST(EnoughSamplesTest, ASpreadAboveTheTargetKeepsSampling) {
  const StoppingRule rule = Rule(3, 200, 0.01, 0);
  // Relative spread of {10, 10.2, 10, 10.2, ...} is about 1.05%.
  std::vector<double> samples = {10.0, 10.2, 10.0, 10.2, 10.0, 10.2};
  EXPECT_GT(RelSpread(samples), 0.01);
  EXPECT_FALSE(EnoughSamples(rule, samples, 0));
  EXPECT_TRUE(EnoughSamples(Rule(3, 200, 0.011, 0), samples, 0));
}

TEST(EnoughSamplesTest, StopsAtMaxSamplesWhateverTheSpread) {
  const StoppingRule rule = Rule(10, 20, 0.01, 0);
  EXPECT_FALSE(EnoughSamples(rule, Noisy(19), 0));
  EXPECT_TRUE(EnoughSamples(rule, Noisy(20), 0));
}

TEST(EnoughSamplesTest, MaxSamplesBelowMinSamplesMeansMinSamples) {
  const StoppingRule rule = Rule(5, 2, 0.01, 0);
  EXPECT_FALSE(EnoughSamples(rule, Noisy(4), 0));
  EXPECT_TRUE(EnoughSamples(rule, Noisy(5), 0));
}

TEST(EnoughSamplesTest, MinSamplesBelowOneMeansOne) {
  const StoppingRule rule = Rule(0, 200, 0.01, 0);
  EXPECT_FALSE(EnoughSamples(rule, {}, 0));
  EXPECT_TRUE(EnoughSamples(rule, std::vector<double>{7.0, 7.0}, 0));
}

TEST(EnoughSamplesTest, OneSampleCountsAsAHundredPercentSpread) {
  const std::vector<double> one = {7.0};
  EXPECT_FALSE(EnoughSamples(Rule(1, 200, 0.99, 0), one, 0));
  EXPECT_TRUE(EnoughSamples(Rule(1, 200, 1.0, 0), one, 0));
}

TEST(EnoughSamplesTest, TheTimeLimitStopsOnlyAfterThreeSamples) {
  const StoppingRule rule = Rule(10, 200, 0.01, 100);
  EXPECT_FALSE(EnoughSamples(rule, Noisy(kMinSamplesAtTimeLimit), 99.9));
  EXPECT_FALSE(EnoughSamples(rule, Noisy(kMinSamplesAtTimeLimit - 1), 1000));
  EXPECT_TRUE(EnoughSamples(rule, Noisy(kMinSamplesAtTimeLimit), 100));
}

TEST(EnoughSamplesTest, NoTimeLimitWhenMaxMsIsZero) {
  EXPECT_FALSE(EnoughSamples(Rule(10, 200, 0.01, 0), Noisy(5), 1e9));
}

TEST(EnoughSamplesTest, AFastestSampleAboveTheAbandonTimeStopsAtOnce) {
  StoppingRule rule = Rule(3, 50, 0.02, 50);
  rule.abandon_above_us = 1250;
  // One sample behind by more than the threshold: enough, though one sample has no spread.
  EXPECT_TRUE(EnoughSamples(rule, std::vector<double>{1300.0}, 0));
  // At or under it, the candidate is timed as any other.
  EXPECT_FALSE(EnoughSamples(rule, std::vector<double>{1250.0}, 0));
  EXPECT_FALSE(EnoughSamples(rule, std::vector<double>{1300.0, 1200.0}, 0));
  EXPECT_FALSE(EnoughSamples(rule, {}, 0));
  // 0: never.
  rule.abandon_above_us = 0;
  EXPECT_FALSE(EnoughSamples(rule, std::vector<double>{1e9}, 0));
}

TEST(AbandonAboveTest, TheFastestTimesTheFactorWhereThatIsLongEnough) {
  EXPECT_DOUBLE_EQ(AbandonAbove(1.25, 2800), 3500);
  EXPECT_DOUBLE_EQ(AbandonAbove(1.25, kAbandonLeastUs / 1.25), kAbandonLeastUs);
  // Under the floor one sample is too noisy to judge by, and timing costs little anyway.
  EXPECT_EQ(AbandonAbove(1.25, 0.99 * kAbandonLeastUs / 1.25), 0);
  EXPECT_EQ(AbandonAbove(1.25, 0), 0);  // no fastest time yet
  EXPECT_EQ(AbandonAbove(0, 2800), 0);  // a strategy that times every candidate in full
}

TEST(MedianTest, MiddleValueOrMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(Median({5.0}), 5.0);
  EXPECT_EQ(Median({}), 0.0);
}

TEST(RelSpreadTest, SampleStandardDeviationOverTheMean) {
  EXPECT_THAT(RelSpread(std::vector<double>{1.0, 2.0, 3.0}), DoubleNear(0.5, 1e-15));
  EXPECT_EQ(RelSpread(std::vector<double>{4.0, 4.0, 4.0}), 0.0);
  EXPECT_EQ(RelSpread(std::vector<double>{4.0}), 0.0);
  EXPECT_EQ(RelSpread({}), 0.0);
}

TEST(SummarizeTest, CountMedianMinimumAndSpread) {
  const std::vector<double> samples = {3.0, 1.0, 2.0, 10.0};
  const TimingStats stats = Summarize(samples);
  EXPECT_EQ(stats.samples, 4);
  EXPECT_EQ(stats.median_us, 2.5);
  EXPECT_EQ(stats.min_us, 1.0);
  EXPECT_EQ(stats.rel_spread, RelSpread(samples));
}

TEST(SummarizeTest, OneSampleHasNoSpread) {
  const TimingStats stats = Summarize({6.5});
  EXPECT_EQ(stats.samples, 1);
  EXPECT_EQ(stats.median_us, 6.5);
  EXPECT_EQ(stats.min_us, 6.5);
  EXPECT_EQ(stats.rel_spread, 0.0);
}

TEST(SummarizeTest, NoSamplesAreAllZero) {
  const TimingStats stats = Summarize({});
  EXPECT_EQ(stats.samples, 0);
  EXPECT_EQ(stats.median_us, 0.0);
  EXPECT_EQ(stats.min_us, 0.0);
  EXPECT_EQ(stats.rel_spread, 0.0);
}

}  // namespace
}  // namespace cutune::tuner
