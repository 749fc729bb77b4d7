// Portfolios and the prediction model on fixture data: two configurations, one fast on small
// shapes and one on large ones, and a third that is never best.
#include "server/predict/model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/predict/portfolio.h"

namespace cutune::predict {
namespace {

const Params kSmall = {{"tile", 16}};
const Params kLarge = {{"tile", 128}};
const Params kNever = {{"tile", 64}};

// Time of a configuration at an n x n shape: kSmall wins below 1024, kLarge above.
double Time(const Params& p, int64_t n) {
  const double work = static_cast<double>(n) * static_cast<double>(n) / 1e4;
  if (p == kSmall) return work * (n < 1024 ? 1.0 : 1.5);
  if (p == kLarge) return work * (n < 1024 ? 1.6 : 1.0);
  return work * 1.3;
}

struct Grid {
  std::vector<TunedShape> tuned;
  std::vector<Observation> observations;
};

Grid MakeGrid() {
  Grid g;
  for (int64_t n : {64, 128, 256, 512, 700, 2048, 3000, 4096, 8192, 16384}) {
    const Shape shape = {n, n};
    const Params& winner = n < 1024 ? kSmall : kLarge;
    g.tuned.push_back({shape, winner, Time(winner, n)});
    for (const Params& p : {kSmall, kLarge, kNever}) {
      g.observations.push_back({shape, p, Time(p, n)});
    }
  }
  return g;
}

TEST(PortfolioTest, CoversEveryShapeWithTheFewestWinners) {
  const Grid g = MakeGrid();
  const Portfolio p = BuildPortfolio(g.tuned, g.observations);
  ASSERT_EQ(p.members.size(), 2u) << "kNever is no shape's winner";
  EXPECT_EQ(p.shapes.size(), 10u);
  EXPECT_DOUBLE_EQ(p.Coverage(), 1.0);
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    const double fastest = std::min(p.Time(s, 0), p.Time(s, 1));
    EXPECT_DOUBLE_EQ(fastest, p.best_us[s]);
  }
  EXPECT_EQ(BuildPortfolio(g.tuned, g.observations, 1).members.size(), 1u) << "capped";
}

TEST(PortfolioTest, ANearWinnerMeasuredAtMostShapesIsACandidate) {
  // 4% slower than every shape's winner: one member that serves every shape well.
  const Params kAllRound = {{"tile", 32}};
  Grid g = MakeGrid();
  for (const TunedShape& t : g.tuned) {
    g.observations.push_back({t.shape, kAllRound, t.winner_us * 1.04});
  }
  const Portfolio one = BuildPortfolio(g.tuned, g.observations, 1);
  ASSERT_EQ(one.members.size(), 1u);
  EXPECT_EQ(one.members[0], kAllRound);
  // Measured at fewer than half the shapes, it is not a matrix's configuration.
  Grid sparse = MakeGrid();
  for (size_t s = 0; s < 4; ++s) {
    const TunedShape& t = sparse.tuned[s];
    sparse.observations.push_back({t.shape, kAllRound, t.winner_us * 1.04});
  }
  const CandidateMatrix m = MakeCandidateMatrix(sparse.tuned, sparse.observations);
  EXPECT_EQ(m.candidates.size(), 2u) << "the two winners only";
  // A shape left out: its near-winners of the other shapes stay eligible, its own do not.
  Grid two = MakeGrid();
  two.observations.push_back({two.tuned[0].shape, kAllRound, two.tuned[0].winner_us * 1.04});
  for (size_t s = 1; s < two.tuned.size(); ++s) {
    two.observations.push_back({two.tuned[s].shape, kAllRound, two.tuned[s].winner_us * 2});
  }
  const CandidateMatrix m2 = MakeCandidateMatrix(two.tuned, two.observations);
  ASSERT_EQ(m2.candidates.size(), 3u);
  std::vector<bool> include(m2.shapes.size(), true);
  include[0] = false;
  std::vector<size_t> chosen;
  SelectPortfolio(m2, include, kMaxMembers, &chosen);
  for (size_t c : chosen) EXPECT_NE(m2.candidates[c], kAllRound) << "near-wins only the left-out shape";
}

// A shape served well by one member alone has no answer once that member is missing, which is
// what an untuned shape near it meets (and leave-one-shape-out measures). The selection also
// counts each shape's second-best member: B, 3% behind s0's own winner and a near-winner at s1,
// joins beside A (the winner of s1-s3, a third as fast at s0), so that the portfolio built
// without s0 still serves it.
TEST(PortfolioTest, AShapeServedByOneMemberGetsASecondOneThatServesItNearlyAsWell) {
  const Params kA = {{"tile", 16}}, kB = {{"tile", 32}}, kOwn = {{"tile", 64}};
  const std::vector<Shape> shapes = {{64, 64}, {128, 128}, {256, 256}, {512, 512}};
  // times at s0..s3
  const std::vector<std::pair<Params, std::vector<double>>> times = {
      {kOwn, {1.00, 2.0, 2.0, 2.0}}, {kA, {3.0, 1.0, 1.0, 1.0}}, {kB, {1.03, 1.02, 1.5, 1.5}}};
  std::vector<TunedShape> tuned;
  std::vector<Observation> observations;
  for (size_t s = 0; s < shapes.size(); ++s) {
    tuned.push_back({shapes[s], s == 0 ? kOwn : kA, 1.0});
    for (const auto& [params, t] : times) observations.push_back({shapes[s], params, t[s]});
  }
  const CandidateMatrix m = MakeCandidateMatrix(tuned, observations);
  ASSERT_EQ(m.candidates.size(), 3u);
  auto members = [&](const std::vector<bool>& include) {
    std::vector<size_t> chosen;
    SelectPortfolio(m, include, kMaxMembers, &chosen);
    std::vector<Params> out;
    for (size_t c : chosen) out.push_back(m.candidates[c]);
    return out;
  };
  EXPECT_THAT(members({true, true, true, true}), ::testing::UnorderedElementsAre(kA, kB, kOwn));
  EXPECT_THAT(members({false, true, true, true}), ::testing::UnorderedElementsAre(kA, kB))
      << "s0 held out: B still serves it at 97%, A alone at 33%";
}

// A member's ptxas report (its cost terms' occupancy): its winner's; a near-winner's from a row
// of it, the least shape's whatever the order; none for a member seen only in imported cells.
TEST(PortfolioTest, MembersTakeTheirWinnersReportElseARowsOfThem) {
  const Params kAllRound = {{"tile", 32}};
  Grid g = MakeGrid();
  for (TunedShape& t : g.tuned) t.resources.registers = t.winner == kSmall ? 40 : 0;
  g.observations.push_back({{8192, 8192}, kAllRound, 1.0, {.registers = 90}});
  g.observations.push_back({{64, 64}, kAllRound, 1.0, {.registers = 80}});
  g.observations.push_back({{128, 128}, kAllRound, 1.0});
  const std::vector<ResourceUsage> r =
      MemberResources({kSmall, kAllRound, kLarge, kNever}, g.tuned, g.observations);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].registers, 40);
  EXPECT_EQ(r[1].registers, 80) << "the least shape's row";
  EXPECT_EQ(r[2].registers, 0) << "won shapes without a report, measured without one";
  EXPECT_EQ(r[3].registers, 0);
  std::reverse(g.observations.begin(), g.observations.end());
  EXPECT_EQ(MemberResources({kAllRound}, g.tuned, g.observations)[0].registers, 80);
}

// The model's fits see a near-winner member's report (from its rows): before, only winners had
// one, and a near-winner's cost terms priced it at no known occupancy.
TEST(ModelTest, ANearWinnerMembersFitSeesItsRowsReport) {
  const Params kAllRound = {{"tile", 32}};
  Grid g = MakeGrid();
  for (const TunedShape& t : g.tuned) {
    g.observations.push_back({t.shape, kAllRound, t.winner_us * 1.04, {.registers = 72}});
  }
  auto seen = std::make_shared<std::vector<int>>();
  FitFn fit = [seen, kAllRound](const Params& p, const Shape&, const ResourceUsage& r) {
    if (p == kAllRound) seen->push_back(r.registers);
    return LaunchFit{};
  };
  const Model model = Model::Train(g.tuned, g.observations, fit);
  ASSERT_NE(std::find(model.portfolio().members.begin(), model.portfolio().members.end(),
                      kAllRound),
            model.portfolio().members.end());
  ASSERT_FALSE(seen->empty());
  for (int registers : *seen) EXPECT_EQ(registers, 72);
}

TEST(PortfolioTest, UnmeasuredCellsAreZeroAndNearestWinnersComeFirst) {
  Grid g = MakeGrid();
  g.observations.clear();  // only the winners' own times
  const Portfolio p = BuildPortfolio(g.tuned, g.observations);
  EXPECT_LT(p.Coverage(), 1.0);
  const std::vector<Params> near = NearestWinners(g.tuned, {100, 100});
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], kSmall);
  EXPECT_EQ(NearestWinners(g.tuned, {10000, 10000})[0], kLarge);
}

TEST(ModelTest, PicksTheMemberOfTheNeighbouringShapes) {
  const Grid g = MakeGrid();
  const Model model = Model::Train(g.tuned, g.observations, nullptr);
  auto small = model.Predict({300, 300});
  auto large = model.Predict({6000, 6000});
  ASSERT_TRUE(small && large);
  EXPECT_EQ(small->params, kSmall);
  EXPECT_EQ(large->params, kLarge);
  EXPECT_GE(small->expected_slowdown, 1.0);
  EXPECT_NEAR(large->expected_slowdown, 1.0, 0.05);
  EXPECT_EQ(model.Ranked({6000, 6000}).front(), kLarge);
  // The time is scaled from the measuring neighbours by the work; the nearest one is reported.
  EXPECT_GT(large->predicted_time_us, Time(kLarge, 4096));
  EXPECT_LT(large->predicted_time_us, Time(kLarge, 8192));
  EXPECT_FALSE(large->measured_shape.empty());
}

TEST(ModelTest, LeaveOneShapeOutIsAtLeastAsGoodAsTheNearestShape) {
  const Grid g = MakeGrid();
  const Model model = Model::Train(g.tuned, g.observations, nullptr);
  const Evaluation& e = model.evaluation();
  ASSERT_EQ(e.shapes.size(), 10u);
  for (size_t i = 0; i < e.shapes.size(); ++i) {
    EXPECT_GT(e.nearest_ratio[i], 0.0) << "every winner is measured everywhere here";
    EXPECT_GE(e.model_ratio[i], e.nearest_ratio[i] - 1e-9) << FormatShape(e.shapes[i]);
    EXPECT_GT(e.model_ratio[i], 0.6) << FormatShape(e.shapes[i]);
    EXPECT_LE(e.model_ratio[i], 1.0 + 1e-9);
    EXPECT_GE(e.actual_slowdown[i], 1.0 - 1e-9);
  }
  EXPECT_GE(model.calibration(), 1.0);
}

TEST(ModelTest, TheFitHookCorrectsForTilesThatDoNotFit) {
  // The 128-wide tile wins by 1% where shapes are multiples of 128, the 100-wide one elsewhere;
  // at 1000 the wide tile covers 1024 (2.4% wasted), which only the fit hook knows.
  const Params a = {{"tile", 100}}, b = {{"tile", 128}};
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  for (int64_t n : {500, 600, 700, 768, 896, 1024, 1280}) {
    tuned.push_back({{n, n}, n % 128 == 0 ? b : a, 100});
    seen.push_back({{n, n}, a, n % 128 == 0 ? 101.0 : 100.0});
    seen.push_back({{n, n}, b, n % 128 == 0 ? 100.0 : 101.0});
  }
  auto fit = [](const Params& p, const Shape& s, const ResourceUsage&) {
    const int64_t t = p.at("tile");
    const double covered = static_cast<double>(((s[0] + t - 1) / t) * t);
    return LaunchFit{static_cast<double>(s[0]) / covered, {}};
  };
  const Model with = Model::Train(tuned, seen, fit);
  auto pick = with.Predict({1000, 1000});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, a);
}

TEST(ModelTest, MembersWhoseEstimatesAllClipToNoSlowdownAreOrderedByThem) {
  // At the shapes near 40x40 B wins and A is 1.5x slower; the fit says both fit 40x40 e^2 times
  // better than the median member does, so every neighbour's estimate of both clips to 0 (no
  // slowdown). The tie goes to B, the one the neighbours measured faster, not to the member
  // that comes first.
  const Params a = {{"tile", 8}}, b = {{"tile", 16}}, c = {{"tile", 32}}, d = {{"tile", 64}};
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  auto add = [&](int64_t n, const Params& winner, double ta, double tb, double tc, double td) {
    tuned.push_back({{n, n}, winner, std::min({ta, tb, tc, td})});
    seen.push_back({{n, n}, a, ta});
    seen.push_back({{n, n}, b, tb});
    seen.push_back({{n, n}, c, tc});
    seen.push_back({{n, n}, d, td});
  };
  for (int64_t n : {100, 150, 200, 300, 400, 500}) add(n, b, 150, 100, 200, 300);
  add(5000, a, 100, 150, 200, 300);
  add(8000, c, 300, 200, 100, 150);
  add(10000, d, 300, 200, 150, 100);
  auto fit = [&](const Params& p, const Shape& s, const ResourceUsage&) {
    const bool small_tile = p == a || p == b;
    return LaunchFit{small_tile && s[0] > 50 ? std::exp(-2.0) : 1.0, {}};
  };
  const Model model = Model::Train(tuned, seen, fit);
  ASSERT_EQ(model.portfolio().members.size(), 4u);
  auto pick = model.Predict({40, 40});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, b);
  EXPECT_EQ(model.Ranked({40, 40}).front(), b);
  EXPECT_DOUBLE_EQ(pick->raw_slowdown, 1.0) << "the estimate reported stays clipped";
}

TEST(ModelTest, PredictedTimesKeepTheLaunchLatency) {
  // Each launch costs 4 us before any work (kernel launch and the tail of one wave), as on the
  // H200 grid, where transpose 64x64 takes 3.8 us and 1x1 was once predicted at 0.00004 us.
  const Params only = {{"tile", 32}};
  auto time = [](int64_t n) { return 4.0 + static_cast<double>(n) * static_cast<double>(n) / 1e4; };
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  for (int64_t n : {64, 128, 256, 512, 1024, 2048, 4096}) {
    tuned.push_back({{n, n}, only, time(n)});
    seen.push_back({{n, n}, only, time(n)});
  }
  const Model model = Model::Train(tuned, seen, nullptr);
  for (int64_t n : {1, 7, 32, 100, 3000, 6000}) {
    auto pick = model.Predict({n, n});
    ASSERT_TRUE(pick);
    EXPECT_NEAR(pick->predicted_time_us / time(n), 1.0, 0.05) << n << "x" << n;
  }
  // Held out, each tuned shape's time is predicted from the others within 5% as well.
  for (double r : model.evaluation().time_ratio) EXPECT_NEAR(r, 1.0, 0.05);
  EXPECT_EQ(model.evaluation().time_ratio.size(), tuned.size());
}

TEST(FitNonNegativeTest, RecoversATimeAndDropsANegativeTerm) {
  // t = 3 + 2 x1 exactly; x2 would fit the noise with a negative coefficient.
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  for (double x1 : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    const double x2 = x1 * x1;
    x.push_back({1.0, 1000 * x1, x2});  // columns of very different sizes
    y.push_back(3 + 2 * x1 - 0.01 * x2);
    w.push_back(1.0);
  }
  const std::vector<double> c = FitNonNegative(x, y, w);
  ASSERT_EQ(c.size(), 3u);
  for (double v : c) EXPECT_GE(v, 0.0);
  EXPECT_EQ(c[2], 0.0) << "dropped";
  x.clear();
  y.clear();
  for (double x1 : {1.0, 2.0, 4.0, 8.0}) {
    x.push_back({1.0, x1, 0.0});  // an all-zero column stays out
    y.push_back(3 + 2 * x1);
  }
  const std::vector<double> exact = FitNonNegative(x, y, std::vector<double>(4, 1.0));
  ASSERT_EQ(exact.size(), 3u);
  EXPECT_NEAR(exact[0], 3.0, 1e-9);
  EXPECT_NEAR(exact[1], 2.0, 1e-9);
  EXPECT_EQ(exact[2], 0.0);
  EXPECT_TRUE(FitNonNegative({}, {}, {}).empty());
}

// Member `waves` runs whole waves of 1000 columns, 10% faster than `linear` per wave, so it wins
// at every tuned shape (at or just below a multiple of 1000). Just past a wave's end it runs a
// whole wave more: its neighbours' slowdowns cannot know, its cost terms do.
TEST(ModelTest, TheCostModelSeesAWaveTheNeighboursDoNot) {
  const Params linear = {{"tile", 1}}, waves = {{"tile", 1000}};
  auto term = [](const Params& p, int64_t n) {
    return p.at("tile") == 1 ? static_cast<double>(n) : 1000.0 * static_cast<double>((n + 999) / 1000);
  };
  auto time = [&](const Params& p, int64_t n) {
    return 1 + (p.at("tile") == 1 ? 0.01 : 0.009) * term(p, n);
  };
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  for (int64_t n : {950, 1000, 1950, 2000, 2950, 3000, 4000}) {
    tuned.push_back({{n, 64}, waves, time(waves, n)});
    seen.push_back({{n, 64}, linear, time(linear, n)});
    seen.push_back({{n, 64}, waves, time(waves, n)});
  }
  // `linear` is a winner too (at a shape of its own), so that it is a member.
  tuned.push_back({{2100, 64}, linear, time(linear, 2100)});
  seen.push_back({{2100, 64}, waves, time(waves, 2100)});
  auto fit = [&](const Params& p, const Shape& s, const ResourceUsage&) {
    return LaunchFit{1.0, {term(p, s[0])}};
  };
  const Model model = Model::Train(tuned, seen, fit);
  ASSERT_EQ(model.portfolio().members.size(), 2u);
  auto pick = model.Predict({2010, 64});  // waves: 28 us, linear: 21.1 us
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, linear);
  // Below the least tuned work the cost model is not extrapolated: the neighbours decide.
  pick = model.Predict({500, 64});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, waves);
  // Without cost terms the neighbours decide everywhere, and pick the wrong one past the wave.
  auto no_terms = [](const Params&, const Shape&, const ResourceUsage&) { return LaunchFit{}; };
  pick = Model::Train(tuned, seen, no_terms).Predict({2010, 64});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, waves);
}

// `lean` costs 10 us a launch however little it does, and 1e-5 us per unit of work past that;
// its cost term is the work, and its fit sees only shapes past the flat part (the fit hook has no
// terms below 300 x 300, as a split-K tile's terms go to nothing at K = 16 on the H100 grid). The
// fit puts it at 1.6 us at 400 x 400, under any launch of it; `steady` (6 us + 1.2e-5 a unit)
// takes 7.9 us there. The cost model alone (no neighbour correction) must not pick `lean`.
TEST(ModelTest, ACostModelNeverPredictsAMemberFasterThanItsLaunchLatency) {
  const Params lean = {{"tile", 128}}, steady = {{"tile", 32}};
  auto work = [](int64_t n) { return static_cast<double>(n) * static_cast<double>(n); };
  auto time = [&](const Params& p, int64_t n) {
    return p == lean ? (n < 300 ? 10.0 : std::max(10.0, 1e-5 * work(n))) : 6 + 1.2e-5 * work(n);
  };
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  for (int64_t n : {128, 256, 1024, 2048, 4096, 8192}) {
    const Params& winner = time(lean, n) < time(steady, n) ? lean : steady;
    tuned.push_back({{n, n}, winner, time(winner, n)});
    for (const Params& p : {lean, steady}) seen.push_back({{n, n}, p, time(p, n)});
  }
  auto fit = [&](const Params& p, const Shape& s, const ResourceUsage&) {
    return p == lean && s[0] < 300 ? LaunchFit{} : LaunchFit{1.0, {work(s[0])}};
  };
  ModelOptions cost_alone;
  cost_alone.residual_weight = cost_alone.underestimate_weight = 0;
  const Model model = Model::Train(tuned, seen, fit, cost_alone);
  ASSERT_EQ(model.portfolio().members.size(), 2u);
  auto pick = model.Predict({400, 400});  // lean: 10 us, steady: 7.9 us
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, steady);
  EXPECT_NEAR(pick->predicted_time_us, time(steady, 400), 0.1);
  // Past the flat part the fit holds, and lean is picked.
  pick = model.Predict({3000, 3000});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, lean);
}

// `a` is 20% faster than `b` everywhere, but the matrix never measured it at 1024 and 4096, where
// `b` won. At 3000 x 3000 the cost model picks `a`; its expected slowdown comes from the
// neighbours where it was measured (as fast as their winners), not from a 4x guess for the two
// where it was not (the H100 grid's matrix: 2.4x reported for 3000x500x700 so).
TEST(ModelTest, APicksExpectedSlowdownComesFromTheNeighboursThatMeasuredIt) {
  const Params a = {{"tile", 64}}, b = {{"tile", 32}};
  auto work = [](int64_t n) { return static_cast<double>(n) * static_cast<double>(n); };
  auto time = [&](const Params& p, int64_t n) { return (p == a ? 1e-5 : 1.2e-5) * work(n); };
  std::vector<TunedShape> tuned;
  std::vector<Observation> seen;
  for (int64_t n : {512, 1024, 2048, 4096, 8192, 16384}) {
    const bool measured = n != 1024 && n != 4096;
    const Params& winner = measured ? a : b;
    tuned.push_back({{n, n}, winner, time(winner, n)});
    seen.push_back({{n, n}, b, time(b, n)});
    if (measured) seen.push_back({{n, n}, a, time(a, n)});
  }
  auto fit = [&](const Params&, const Shape& s, const ResourceUsage&) {
    return LaunchFit{1.0, {work(s[0])}};
  };
  const Model model = Model::Train(tuned, seen, fit);
  ASSERT_EQ(model.portfolio().members.size(), 2u);
  auto pick = model.Predict({3000, 3000});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->params, a);
  EXPECT_NEAR(pick->raw_slowdown, 1.0, 0.05);  // 1.86 with the guess
  EXPECT_LT(pick->expected_slowdown, 1.2);     // calibrated by leave-one-shape-out: 1.11
}

// Another rule's answers timed by the device's own measurements: the fastest observation of
// the answered configuration at each tuned shape, shapes without an answer or a measurement of
// it left out.
TEST(JudgeTest, AnswersAreTimedByTheDevicesOwnFastestObservation) {
  Grid g = MakeGrid();
  g.observations.push_back({{2048, 2048}, kNever, Time(kNever, 2048) * 2});  // slower: not used
  const Judgement all_never =
      JudgeAnswers(g.tuned, g.observations, [](const Shape&) { return kNever; });
  ASSERT_EQ(all_never.shapes.size(), 10u);
  for (size_t i = 0; i < all_never.shapes.size(); ++i) {
    const int64_t n = all_never.shapes[i][0];
    const Params& winner = n < 1024 ? kSmall : kLarge;
    EXPECT_DOUBLE_EQ(all_never.ratio[i], Time(winner, n) / Time(kNever, n)) << n;
  }
  const Judgement some = JudgeAnswers(g.tuned, g.observations, [](const Shape& s) {
    if (s[0] == 64) return std::optional<Params>();                // no answer
    if (s[0] == 128) return std::optional<Params>({{"tile", 8}});  // never measured here
    return std::optional<Params>(s[0] < 1024 ? kSmall : kLarge);
  });
  EXPECT_EQ(some.shapes.size(), 8u);
  for (double r : some.ratio) EXPECT_DOUBLE_EQ(r, 1.0);
}

TEST(JudgeTest, ComparedOnTheShapesBothWereJudgedAt) {
  Evaluation own;
  own.shapes = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}};
  own.model_ratio = {0.5, 1.0, 1.0, 1.0, 0.25};
  Judgement other;
  other.shapes = {{4, 4}, {3, 3}, {2, 2}, {1, 1}, {6, 6}};
  other.ratio = {1.0, 1.0, 1.02, 1.0, 0.1};  // over 1: a re-measured winner, a tie
  const Comparison c = CompareOnOwnShapes(own, other);
  EXPECT_EQ(c.shapes, 4u) << "5x5 and 6x6 were judged for one rule only";
  EXPECT_NEAR(c.own, std::pow(0.5, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(c.other, 1.0);
  EXPECT_TRUE(c.OtherIsBetter());
  EXPECT_FALSE((Comparison{3, 0.5, 1.0}).OtherIsBetter()) << "too few shapes to judge";
  EXPECT_FALSE((Comparison{4, 0.9, 0.9}).OtherIsBetter()) << "a tie goes to the own model";
  EXPECT_FALSE((Comparison{4, 0.9, 0.9 * 1.019}).OtherIsBetter()) << "so does noise";
  EXPECT_TRUE((Comparison{4, 0.9, 0.9 * 1.021}).OtherIsBetter());
  EXPECT_EQ(CompareOnOwnShapes(own, {}).shapes, 0u);
}

TEST(ModelTest, NothingToPredictFrom) {
  const Model empty = Model::Train({}, {}, nullptr);
  EXPECT_FALSE(empty.Predict({64, 64}));
  const Grid g = MakeGrid();
  const Model model = Model::Train(g.tuned, g.observations, nullptr);
  EXPECT_FALSE(model.Predict({64, 64, 64})) << "another rank";
  EXPECT_FALSE(model.Predict({0, 64})) << "not a shape";
}

}  // namespace
}  // namespace cutune::predict
