#include "server/tuner/strategy.h"

#include <cmath>
#include <functional>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/pool.h"
#include "server/tuner/sweep.h"
#include "tests/tuner/drain.h"

namespace cutune::tuner {
namespace {

using ::testing::HasSubstr;

std::optional<double> Unit(const Params&) { return 1.0; }

TEST(StrategyTest, BruteForceIsEveryValidCandidateInOrder) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  auto search = MakeSearch(space, "brute_force", 1, 0);
  ASSERT_TRUE(search.ok());
  const ValidCandidates valid = EnumerateValid(space);
  EXPECT_EQ((*search)->remaining(), static_cast<int64_t>(valid.candidates.size()));
  EXPECT_FALSE((*search)->adaptive());
  EXPECT_EQ(Drain(**search, Unit), valid.candidates);
  EXPECT_EQ((*search)->invalid() + static_cast<int64_t>(valid.candidates.size()),
            static_cast<int64_t>(space.CartesianSize()));
  for (const Params& p : valid.candidates) EXPECT_FALSE(space.Violation(p).has_value());
}

TEST(StrategyTest, RandomIsAReproduciblePermutation) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  auto a = MakeSearch(space, "random", 7, 0);
  auto b = MakeSearch(space, "random", 7, 0);
  auto c = MakeSearch(space, "random", 8, 0);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const std::vector<Params> first = Drain(**a, Unit);
  EXPECT_EQ(first, Drain(**b, Unit));
  EXPECT_NE(first, Drain(**c, Unit));
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  auto expected = EnumerateValid(space).candidates;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
}

TEST(StrategyTest, CandidatesToldBeforehandAreNotProposed) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  for (const char* strategy : {"brute_force", "local"}) {
    auto search =
        MakeSearch(space, valid, strategy, 3, static_cast<int64_t>(valid.candidates.size()));
    ASSERT_TRUE(search.ok());
    (*search)->Tell(valid.candidates[0], 5.0);  // measured by an interrupted sweep
    (*search)->Tell(valid.candidates[1], std::nullopt);
    if (std::string(strategy) == "brute_force") {
      EXPECT_EQ((*search)->remaining(), static_cast<int64_t>(valid.candidates.size()) - 2);
    }
    const std::vector<Params> rest = Drain(**search, Unit);
    EXPECT_EQ(rest.size(), valid.candidates.size() - 2) << strategy;
    EXPECT_THAT(rest, ::testing::Not(::testing::Contains(valid.candidates[0]))) << strategy;
    EXPECT_THAT(rest, ::testing::Not(::testing::Contains(valid.candidates[1]))) << strategy;
  }
}

TEST(StrategyTest, LocalSearchProposesValidCandidatesOnceWithinItsBudget) {
  const kernels::Space& space = kernels::MatmulFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  auto search = MakeSearch(space, valid, "local", 1, 0);
  ASSERT_TRUE(search.ok());
  EXPECT_TRUE((*search)->adaptive());
  // No budget: 15% of the valid candidates, rounded up.
  const auto budget = static_cast<int64_t>(
      std::ceil(kLocalSearchDefaultFraction * static_cast<double>(valid.candidates.size())));
  EXPECT_EQ((*search)->remaining(), budget);
  std::set<std::string> seen;
  const std::vector<Params> proposed = Drain(**search, [](const Params& p) {
    return std::optional<double>(static_cast<double>(p.at("bm") + p.at("bn")));
  });
  EXPECT_EQ(static_cast<int64_t>(proposed.size()), budget);
  for (const Params& p : proposed) {
    EXPECT_EQ(space.Violation(p), std::nullopt);
    EXPECT_TRUE(seen.insert(FormatParams(p)).second) << "proposed twice: " << FormatParams(p);
  }
  EXPECT_EQ((*search)->remaining(), 0);
  // An explicit budget, larger than the space: every candidate once.
  auto all = MakeSearch(space, valid, "local", 1, 1'000'000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Drain(**all, Unit).size(), valid.candidates.size());
}

TEST(StrategyTest, LocalSearchsDefaultShareCountsCandidatesMeasuredBefore) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  auto search = MakeSearch(space, valid, "local", 1, 0);
  ASSERT_TRUE(search.ok());
  const int64_t share = (*search)->remaining();
  (*search)->Tell(valid.candidates[0], 1.0);
  (*search)->Tell(valid.candidates[1], 2.0);
  EXPECT_EQ((*search)->remaining(), share - 2);
  // A resumed sweep that measured more than the share (a brute-force run): nothing left, and
  // never a negative count.
  for (const Params& p : valid.candidates) (*search)->Tell(p, 3.0);
  EXPECT_EQ((*search)->remaining(), 0);
  EXPECT_TRUE((*search)->Next(10).empty());
  // An explicit budget counts only what the search proposes.
  auto budgeted = MakeSearch(space, valid, "local", 1, 5);
  ASSERT_TRUE(budgeted.ok());
  (*budgeted)->Tell(valid.candidates[0], 1.0);
  EXPECT_EQ((*budgeted)->remaining(), 5);
  EXPECT_EQ(Drain(**budgeted, Unit).size(), 5u);
}

TEST(StrategyTest, LocalSearchIsReproducibleAndClimbsToTheOptimum) {
  // A separable objective with its minimum at one valid candidate: a random 30% start, then one-
  // and two-parameter moves from the best must reach it within 15% of the space.
  const kernels::Space& space = kernels::MatmulFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  const Params target = valid.candidates[valid.candidates.size() / 3];
  auto time = [&](const Params& p) {
    double t = 100;
    for (const auto& [name, value] : p) t += std::abs(static_cast<double>(value - target.at(name)));
    return std::optional<double>(t);
  };
  std::vector<Params> runs[2];
  for (int i = 0; i < 2; ++i) {
    auto search = MakeSearch(space, valid, "local", 42, 0);
    ASSERT_TRUE(search.ok());
    runs[i] = Drain(**search, time);
  }
  EXPECT_EQ(runs[0], runs[1]);  // same seed, same answers: same proposals
  EXPECT_THAT(runs[0], ::testing::Contains(target));
  auto other = MakeSearch(space, valid, "local", 43, 0);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(Drain(**other, time), runs[0]);
}

TEST(StrategyTest, UnknownStrategyIsInvalidArgument) {
  auto s = MakeSearch(kernels::TransposeFamily().default_space(), "genetic", 1, 0);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("brute_force, random, local"));
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
  options.candidates = {kernels::TransposeFamily().baseline()};  // a list does not excuse it
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

namespace cutune::tuner {
namespace {

TEST(CheckBudgetTest, OnlyNonNegativeCountsAndFiniteNonNegativeSecondsPass) {
  EXPECT_TRUE(CheckBudget(0, 0).ok());
  EXPECT_TRUE(CheckBudget(100, 2.5).ok());
  EXPECT_THAT(std::string(CheckBudget(-1, 0).message()), HasSubstr("max_evaluations"));
  for (double seconds : {-0.5, std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    absl::Status s = CheckBudget(0, seconds);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << seconds;
    EXPECT_THAT(std::string(s.message()), HasSubstr("max_seconds must be a finite number")) << seconds;
  }
}

}  // namespace
}  // namespace cutune::tuner
