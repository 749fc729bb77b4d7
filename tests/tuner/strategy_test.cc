#include "server/tuner/strategy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/pool.h"
#include "server/tuner/sweep.h"

namespace cutune::tuner {
namespace {

using ::testing::HasSubstr;

TEST(StrategyTest, BruteForceIsEveryValidCandidateInOrder) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  auto selection = SelectCandidates(space, "brute_force", 1);
  ASSERT_TRUE(selection.ok());
  int64_t valid = 0;
  space.ForEachValid([&](uint64_t, const Params&) { ++valid; });
  EXPECT_EQ(static_cast<int64_t>(selection->candidates.size()), valid);
  EXPECT_EQ(selection->invalid + valid, static_cast<int64_t>(space.CartesianSize()));
  for (const Params& p : selection->candidates) EXPECT_FALSE(space.Violation(p).has_value());
}

TEST(StrategyTest, RandomIsAReproduciblePermutation) {
  const kernels::Space& space = kernels::MatmulFamily().default_space();
  auto a = SelectCandidates(space, "random", 7);
  auto b = SelectCandidates(space, "random", 7);
  auto c = SelectCandidates(space, "random", 8);
  auto all = SelectCandidates(space, "brute_force", 7);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && all.ok());
  EXPECT_EQ(a->candidates, b->candidates);
  EXPECT_NE(a->candidates, c->candidates);
  auto sorted = a->candidates;
  std::sort(sorted.begin(), sorted.end());
  auto expected = all->candidates;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
}

TEST(StrategyTest, UnknownStrategyIsInvalidArgument) {
  auto s = SelectCandidates(kernels::TransposeFamily().default_space(), "genetic", 1);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("brute_force"));
}

TEST(SweepTest, BadOptionsFailBeforeAnyWork) {
  compiler::CachingCompiler compiler;
  compiler::CompilePool pool(compiler, 1);
  worker::WorkerProcess worker({.executable = "/nonexistent"});
  Sweeper sweeper(pool, worker);
  SweepOptions options;
  EXPECT_EQ(sweeper.Run(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options.family = &kernels::TransposeFamily();
  options.shape = {0, 5};
  EXPECT_EQ(sweeper.Run(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options.shape = {64, 64};
  options.strategy = "psychic";
  EXPECT_EQ(sweeper.Run(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options.strategy = "brute_force";
  options.candidates = {{{"tile", 64}}};
  EXPECT_EQ(sweeper.Run(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SweepTest, NoWorkerIsAPreconditionNotACrash) {
  compiler::CachingCompiler compiler;
  compiler::CompilePool pool(compiler, 1);
  worker::WorkerProcess worker({.executable = "/nonexistent/cutune-worker"});
  Sweeper sweeper(pool, worker);
  SweepOptions options;
  options.family = &kernels::TransposeFamily();
  options.shape = {64, 64};
  auto result = sweeper.Run(options, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DeriveFiguresTest, BandwidthThroughputAndPercent) {
  Measurement m;
  m.timing.median_us = 1000;
  DeriveFigures(kernels::MatmulFamily(), {1024, 1024, 1024}, 500, m);
  EXPECT_NEAR(m.tflops, 2.0 * 1024 * 1024 * 1024 / 1e-3 / 1e12, 1e-9);
  EXPECT_NEAR(m.percent_of_reference, 50, 1e-9);
  EXPECT_NEAR(m.gbps, 3.0 * 1024 * 1024 * 4 / 1e-3 / 1e9, 1e-9);
}

}  // namespace
}  // namespace cutune::tuner
