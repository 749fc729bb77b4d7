// The "quick" strategy: its starting set first, then a deterministic descent to a local optimum.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/tuner/replay.h"
#include "server/tuner/strategy.h"
#include "tests/tuner/drain.h"

namespace cutune::tuner {
namespace {

TEST(QuickSearchTest, MeasuresTheStartingSetFirstThenDescendsToALocalOptimum) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  // A bowl: the time grows with the distance (in value positions) from one target candidate.
  const Params target = valid.candidates[valid.candidates.size() / 2];
  auto time = [&](const Params& p) -> std::optional<double> {
    double t = 100;
    for (const kernels::Parameter& parameter : space.parameters()) {
      const auto& v = parameter.values;
      const auto a = std::find(v.begin(), v.end(), p.at(parameter.name)) - v.begin();
      const auto b = std::find(v.begin(), v.end(), target.at(parameter.name)) - v.begin();
      t += 10.0 * static_cast<double>(std::abs(a - b));
    }
    return t;
  };
  const std::vector<Params> start = {valid.candidates.front(), valid.candidates.back()};
  auto search = MakeSearch(space, valid, "quick", 1, 0, start);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_TRUE((*search)->adaptive());
  const std::vector<Params> proposed = Drain(**search, time);
  ASSERT_GE(proposed.size(), 2u);
  EXPECT_EQ(proposed[0], start[0]);
  EXPECT_EQ(proposed[1], start[1]);
  double best = 1e9;
  for (const Params& p : proposed) best = std::min(best, *time(p));
  EXPECT_EQ(best, 100) << "the descent reaches the bowl's bottom";
  EXPECT_LT(proposed.size(), valid.candidates.size() / 2) << "a descent, not a sweep";
  // Deterministic: the seed is not used.
  auto again = MakeSearch(space, valid, "quick", 99, 0, start);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Drain(**again, time), proposed);
}

TEST(QuickSearchTest, WaitsForTheStartingSetBeforeDescending) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  const std::vector<Params> start = {valid.candidates[3], valid.candidates[7]};
  auto search = MakeSearch(space, valid, "quick", 1, 0, start);
  ASSERT_TRUE(search.ok());
  EXPECT_EQ((*search)->Next(10), start) << "nothing else until both are heard";
  EXPECT_TRUE((*search)->Next(10).empty());
  (*search)->Tell(start[0], 50.0);
  EXPECT_TRUE((*search)->Next(10).empty());
  (*search)->Tell(start[1], 40.0);
  const std::vector<Params> next = (*search)->Next(1);
  ASSERT_EQ(next.size(), 1u);
  int differ = 0;
  for (const auto& [name, value] : next.front()) differ += start[1].at(name) != value;
  EXPECT_EQ(differ, 1) << "the first step is one parameter away from the faster member";
}

TEST(QuickSearchTest, SkipsMembersOutsideTheSpaceAndKeepsTheBudget) {
  const kernels::Space& space = kernels::TransposeFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  Params outside = valid.candidates[0];
  outside.begin()->second = 12345;
  auto search = MakeSearch(space, valid, "quick", 1, 5, {outside, valid.candidates[1]});
  ASSERT_TRUE(search.ok());
  const std::vector<Params> proposed = Drain(**search, [](const Params&) { return 1.0; });
  ASSERT_EQ(proposed.size(), 5u);
  EXPECT_EQ(proposed[0], valid.candidates[1]);
}

// A portfolio member recorded before a parameter was added (an older table's) lacks it: it starts
// the search as the candidate with the parameter's absent value. (The stream-K grid of session 10
// started from nothing but the default configuration without this.)
TEST(QuickSearchTest, StartsFromMembersRecordedBeforeAParameterWasAdded) {
  const kernels::Space space({{"a", {1, 2, 3}, ""}, {"late", {0, 1}, "", /*absent=*/0}}, {});
  const ValidCandidates valid = EnumerateValid(space);
  auto search = MakeSearch(space, valid, "quick", 1, 0, {{{"a", 3}}});
  ASSERT_TRUE(search.ok());
  const std::vector<Params> proposed = Drain(**search, [](const Params&) { return 1.0; });
  ASSERT_FALSE(proposed.empty());
  EXPECT_EQ(proposed[0], (Params{{"a", 3}, {"late", 0}}));
}

// On the H200's recorded full matmul sweeps: quick, started from only the other four
// recordings' five fastest configurations (a grid's portfolio is far richer), lands within 2% of
// each recording's best with under a tenth of its evaluations, with the sweep's proposal window.
// (1024^3 is the hard one: its eight fastest candidates lie within 2.7% of each other.)
TEST(QuickSearchTest, FindsTheRecordedH200MatmulWinnersFromTheOtherShapesBest) {
  const kernels::Space& space = kernels::MatmulFamily().default_space();
  const ValidCandidates valid = EnumerateValid(space);
  const std::vector<std::string> shapes = {"1024x1024x1024", "2048x2048x2048", "4096x4096x4096",
                                           "4097x1023x777", "8192x64x8192"};
  std::map<std::string, RecordedSweep> recorded;
  std::map<std::string, std::vector<Params>> fastest;
  for (const std::string& shape : shapes) {
    auto sweep = LoadRecordedSweep(
        std::string(CUTUNE_BENCH_DATA_DIR) + "/h200/matmul-" + shape + ".csv", &space);
    ASSERT_TRUE(sweep.ok()) << sweep.status();
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [key, t] : sweep->times) {
      if (t) ranked.push_back({*t, key});
    }
    std::sort(ranked.begin(), ranked.end());
    for (size_t i = 0; i < 5 && i < ranked.size(); ++i) {
      fastest[shape].push_back(*ParseParams(ranked[i].second));
    }
    recorded[shape] = *std::move(sweep);
  }
  for (const std::string& shape : shapes) {
    std::vector<Params> start;
    for (const std::string& other : shapes) {
      if (other == shape) continue;
      for (const Params& p : fastest[other]) {
        if (std::find(start.begin(), start.end(), p) == start.end()) start.push_back(p);
      }
    }
    // The recordings are of space v6: the replay covers the candidates they hold.
    const ValidCandidates held = RecordedSubset(valid, recorded[shape]);
    auto run = Replay(space, held, recorded[shape], "quick", 1, 0, 32, start);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_TRUE(run->best_us.has_value());
    const double gap = *run->best_us / *recorded[shape].best_us - 1;
    std::printf("quick on %s: %lld evaluations (of %zu), %.2f%% from the best\n", shape.c_str(),
                static_cast<long long>(run->evaluations), held.candidates.size(), 100 * gap);
    EXPECT_LE(gap, 0.02) << shape;
    EXPECT_LE(run->evaluations, static_cast<int64_t>(held.candidates.size() / 10)) << shape;
  }
}

}  // namespace
}  // namespace cutune::tuner
