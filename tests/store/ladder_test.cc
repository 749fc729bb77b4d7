// The lookup ladder as a pure function, rung by rung (exact, predicted, same architecture where
// another model measured or predicted the shape, nearest shape on the own model, same
// architecture's nearest shape, family default), then the order inside a rung (distance, current
// source hash, fewer stale fields, speed, model name). No store: each test builds the winners it
// needs.
#include "server/store/ladder.h"

#include <cmath>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const DeviceModel kH200{"NVIDIA H200", 9, 0, 132, int64_t{150} << 30};
const DeviceModel kH100{"NVIDIA H100 80GB HBM3", 9, 0, 132, int64_t{80} << 30};
const DeviceModel kGh200{"NVIDIA GH200 480GB", 9, 0, 132, int64_t{96} << 30};
const DeviceModel kA100{"NVIDIA A100-SXM4-80GB", 8, 0, 108, int64_t{80} << 30};
const Provenance kNow{13000, "13.0", "hash-now", 1, ""};

Winner W(const DeviceModel& device, Shape shape, int tile, double time_us,
         Provenance provenance = kNow) {
  Winner w;
  w.device = device;
  w.family = "transpose";
  w.shape = std::move(shape);
  w.provenance = std::move(provenance);
  w.measurement.params = {{"tile", tile}};
  w.measurement.timing = {20, time_us, time_us, 0.01};
  w.measured_at_ms = 1700000000000;
  return w;
}

LookupQuery Query(const DeviceModel& device, Shape shape) {
  LookupQuery q;
  q.device_model = device.name;
  q.cc_major = device.cc_major;
  q.cc_minor = device.cc_minor;
  q.family = "transpose";
  q.shape = std::move(shape);
  q.current = kNow;
  q.family_default = {{"tile", 32}, {"pad", 1}};
  return q;
}

LookupResult Ask(const LookupQuery& query, std::vector<Winner> winners) {
  WinnerIndex index(std::move(winners));
  return Ladder(query, {index});
}

int Tile(const LookupResult& r) { return static_cast<int>(r.winner.params.at("tile")); }

// --- rungs -------------------------------------------------------------------------------------

TEST(LadderTest, NothingTunedAnswersTheFamilyDefault) {
  LookupResult none = Ask(Query(kH200, {4096, 4096}), {});
  EXPECT_EQ(none.rung, LookupRung::kFamilyDefault);
  EXPECT_EQ(none.winner.params, (Params{{"pad", 1}, {"tile", 32}}));
  EXPECT_TRUE(none.tuned_shape.empty());
  EXPECT_TRUE(none.device_model.empty());
  EXPECT_EQ(none.distance, 0);
  EXPECT_THAT(none.stale, IsEmpty());
}

TEST(LadderTest, OtherFamiliesDtypesAndArchitecturesDoNotAnswer) {
  Winner matmul = W(kH200, {4096, 4096}, 64, 10.0);
  matmul.family = "matmul";
  LookupResult r = Ask(Query(kH200, {4096, 4096}), {matmul, W(kA100, {4096, 4096}, 16, 10.0)});
  EXPECT_EQ(r.rung, LookupRung::kFamilyDefault);
}

TEST(LadderTest, ExactIsTheOwnModelsWinnerForTheShape) {
  LookupResult r = Ask(Query(kH200, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 64, 40.0), W(kH200, {8192, 8192}, 128, 150.0),
                        W(kH100, {4096, 4096}, 16, 30.0)});
  EXPECT_EQ(r.rung, LookupRung::kExact);
  EXPECT_EQ(Tile(r), 64);
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(r.device_model, "NVIDIA H200");
  EXPECT_THAT(r.tuned_shape, ElementsAre(4096, 4096));
  EXPECT_DOUBLE_EQ(r.winner.timing.median_us, 40.0);
  EXPECT_EQ(r.measured_at_ms, 1700000000000);
  EXPECT_THAT(r.stale, IsEmpty());
}

// PREDICTED: with a model that has a matrix, an untuned shape gets the member the model picks,
// its figures from the nearest tuned shape where that member was measured; an exact winner
// still comes first, and a model without a matrix leaves the answer to NEAREST_SHAPE.
struct PredictedFixture {
  std::vector<Winner> winners;
  std::vector<predict::TunedShape> tuned;
  std::vector<predict::Observation> seen;
  PredictedFixture() {
    // tile 16 wins the small squares, tile 64 the large; both measured everywhere.
    for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) {
      const int tile = n < 2048 ? 16 : 64;
      const double work = static_cast<double>(n * n) / 1e5;
      winners.push_back(W(kH200, {n, n}, tile, work));
      tuned.push_back({{n, n}, {{"tile", tile}}, work});
      seen.push_back({{n, n}, {{"tile", 16}}, work * (tile == 16 ? 1.0 : 1.4)});
      seen.push_back({{n, n}, {{"tile", 64}}, work * (tile == 64 ? 1.0 : 1.4)});
    }
  }
  LookupResult Ask(const LookupQuery& q, bool with_matrix) const {
    WinnerIndex index(winners);
    ModelMap models;
    models[{"NVIDIA H200", "transpose", DType::kF32}] = std::make_shared<const predict::Model>(
        predict::Model::Train(tuned, with_matrix ? seen : std::vector<predict::Observation>{},
                              nullptr));
    return Ladder(q, {index, &models});
  }
};

TEST(LadderTest, PredictedAnswersAnUntunedShapeFromTheMatrix) {
  const PredictedFixture f;
  const LookupResult big = f.Ask(Query(kH200, {6000, 6000}), true);
  EXPECT_EQ(big.rung, LookupRung::kPredicted);
  EXPECT_EQ(Tile(big), 64);
  EXPECT_GE(big.expected_slowdown, 1.0);
  EXPECT_GT(big.predicted_time_us, 0);
  EXPECT_THAT(big.tuned_shape, ElementsAre(8192, 8192)) << "the nearest shape measuring it";
  EXPECT_GT(big.winner.timing.median_us, 0) << "its time there";
  EXPECT_THAT(big.stale, IsEmpty());
  EXPECT_EQ(Tile(f.Ask(Query(kH200, {700, 700}), true)), 16);
}

TEST(LadderTest, PredictedComesAfterExactAndNeedsAMatrix) {
  const PredictedFixture f;
  EXPECT_EQ(f.Ask(Query(kH200, {4096, 4096}), true).rung, LookupRung::kExact);
  EXPECT_EQ(f.Ask(Query(kH200, {6000, 6000}), false).rung, LookupRung::kNearestShape);
  EXPECT_EQ(f.Ask(Query(kH100, {6000, 6000}), true).rung, LookupRung::kSameArchitecture)
      << "a model answers for its own device model only";
}

// SAME_ARCHITECTURE: a device model with no tuning of its own is answered by another model of
// its compute capability the way that model answers itself: the member its prediction model
// picks, with that model's figures; without a matrix, that model's nearest shape.
TEST(LadderTest, SameArchitectureAnswersWithTheOtherModelsPrediction) {
  const PredictedFixture f;
  for (const Shape& shape : {Shape{6000, 6000}, Shape{700, 700}}) {
    const LookupResult own = f.Ask(Query(kH200, shape), true);
    const LookupResult other = f.Ask(Query(kH100, shape), true);
    ASSERT_EQ(own.rung, LookupRung::kPredicted);
    EXPECT_EQ(other.rung, LookupRung::kSameArchitecture);
    EXPECT_EQ(other.device_model, "NVIDIA H200");
    EXPECT_EQ(other.winner.params, own.winner.params) << FormatShape(shape);
    EXPECT_EQ(other.tuned_shape, own.tuned_shape);
    EXPECT_DOUBLE_EQ(other.predicted_time_us, own.predicted_time_us);
    EXPECT_DOUBLE_EQ(other.expected_slowdown, own.expected_slowdown);
  }
  // A shape the other model tuned is answered with its winner there, as it answers itself.
  const LookupResult tuned = f.Ask(Query(kH100, {1024, 1024}), true);
  EXPECT_EQ(tuned.rung, LookupRung::kSameArchitecture);
  EXPECT_THAT(tuned.tuned_shape, ElementsAre(1024, 1024));
  EXPECT_EQ(tuned.distance, 0);
  EXPECT_EQ(Tile(tuned), 16);
  EXPECT_EQ(tuned.expected_slowdown, 0) << "measured there, not predicted";
  // Without a matrix the nearest shape is all there is (3000x3000: 4096x4096's winner).
  const LookupResult nearest = f.Ask(Query(kH100, {3000, 3000}), false);
  EXPECT_EQ(nearest.rung, LookupRung::kSameArchitecture);
  EXPECT_THAT(nearest.tuned_shape, ElementsAre(4096, 4096));
  EXPECT_EQ(nearest.expected_slowdown, 0);
  EXPECT_EQ(f.Ask(Query(kA100, {6000, 6000}), true).rung, LookupRung::kFamilyDefault);
}

TEST(LadderTest, ExactAnswersEvenWhenStaleBeforeAFreshNearerShape) {
  // The rung comes first: a stale exact match beats a fresh winner of another shape.
  LookupResult r = Ask(Query(kH200, {2048, 2048}),
                       {W(kH200, {2048, 2048}, 16, 10.0, {13000, "13.0", "hash-old", 1, ""}),
                        W(kH200, {2048, 4096}, 32, 12.0)});
  EXPECT_EQ(r.rung, LookupRung::kExact);
  EXPECT_EQ(Tile(r), 16);
  EXPECT_THAT(r.stale, ElementsAre(HasSubstr("kernel source hash differs")));
}

TEST(LadderTest, NearestShapeIsTheOwnModelsClosestShapeInLog2) {
  const std::vector<Winner> winners = {W(kH200, {4096, 4096}, 64, 40.0),
                                       W(kH200, {16384, 16384}, 128, 600.0)};
  // 8192x2048 is |log2 2| + |log2 1/2| = 2 from 4096x4096 and 1 + 3 = 4 from 16384x16384.
  LookupResult near = Ask(Query(kH200, {8192, 2048}), winners);
  EXPECT_EQ(near.rung, LookupRung::kNearestShape);
  EXPECT_DOUBLE_EQ(near.distance, 2.0);
  EXPECT_THAT(near.tuned_shape, ElementsAre(4096, 4096));
  EXPECT_EQ(Tile(near), 64);

  LookupResult far = Ask(Query(kH200, {12000, 16384}), winners);
  EXPECT_EQ(far.rung, LookupRung::kNearestShape);
  EXPECT_THAT(far.tuned_shape, ElementsAre(16384, 16384));
  EXPECT_NEAR(far.distance, std::log2(16384.0 / 12000.0), 1e-12);
}

TEST(LadderTest, ShapesOfAnotherRankNeverAnswer) {
  LookupResult r = Ask(Query(kH200, {64, 64, 64}), {W(kH200, {64, 64}, 8, 1.0)});
  EXPECT_EQ(r.rung, LookupRung::kFamilyDefault);
}

// What another model of the architecture measured at the shape, or its prediction model picks,
// ranks above the own model's nearest tuned shape, which is a guess from another shape (on an
// H100: 98.5% / 89.2% median / worst against 80.9% / 30.8%; unseen-shapes.md section 19). The
// other model's nearest shape ranks below it.
TEST(LadderTest, AnotherModelsExactShapeBeatsTheOwnModelsNearestShape) {
  LookupResult r = Ask(Query(kH100, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 64, 40.0), W(kH100, {8192, 8192}, 16, 170.0)});
  EXPECT_EQ(r.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(r.device_model, "NVIDIA H200");
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(Tile(r), 64);
}

TEST(LadderTest, AnotherModelsPredictionBeatsTheOwnModelsNearestShape) {
  PredictedFixture f;
  f.winners.push_back(W(kH100, {8192, 8192}, 128, 170.0));
  const LookupResult predicted = f.Ask(Query(kH100, {700, 700}), true);
  EXPECT_EQ(predicted.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(predicted.device_model, "NVIDIA H200");
  EXPECT_EQ(Tile(predicted), 16);
  EXPECT_GE(predicted.expected_slowdown, 1.0);
  // Without the other model's matrix its nearest shape is a guess too, and the own one's wins.
  const LookupResult nearest = f.Ask(Query(kH100, {700, 700}), false);
  EXPECT_EQ(nearest.rung, LookupRung::kNearestShape);
  EXPECT_EQ(nearest.device_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(Tile(nearest), 128);
}

// An own prediction model gives way to another of the same architecture where the other's
// answers measured better on the device's own tuned shapes than the own model did held out.
// The H100 here tuned four squares the H200 did not, whose winners alternate (tile 16, 64, 16,
// 64), so its own model, holding each out, follows the neighbours and picks the other tile every
// time; the H200's model (tile 16 below 2048, 64 from there) picks right at three of the four.
struct DeferralFixture : PredictedFixture {
  std::map<ModelKey, std::vector<predict::TunedShape>> tuned_by;
  std::map<ModelKey, std::vector<predict::Observation>> seen_by;
  ModelMap models;
  const ModelKey h100{kH100.name, "transpose", DType::kF32};
  const ModelKey h200{kH200.name, "transpose", DType::kF32};
  explicit DeferralFixture(bool alternate) {
    tuned_by[h200] = tuned;
    seen_by[h200] = seen;
    for (int64_t n : alternate ? std::vector<int64_t>{300, 600, 1200, 5000}
                               : std::vector<int64_t>{300, 600, 5000, 10000}) {
      const int tile = alternate ? (n == 600 || n == 5000 ? 64 : 16) : (n < 2048 ? 16 : 64);
      const double work = static_cast<double>(n * n) / 1e5;
      winners.push_back(W(kH100, {n, n}, tile, work));
      tuned_by[h100].push_back({{n, n}, {{"tile", tile}}, work});
      seen_by[h100].push_back({{n, n}, {{"tile", 16}}, work * (tile == 16 ? 1.0 : 1.4)});
      seen_by[h100].push_back({{n, n}, {{"tile", 64}}, work * (tile == 64 ? 1.0 : 1.4)});
    }
    for (const auto& [key, shapes] : tuned_by) {
      models[key] = std::make_shared<const predict::Model>(
          predict::Model::Train(shapes, seen_by[key], nullptr));
    }
  }
  std::vector<ModelComparison> Compare() const {
    return CompareServingModels(models, tuned_by, seen_by, {kA100, kH100, kH200});
  }
  LookupResult Ask(const LookupQuery& q, const Deferrals& deferrals) const {
    WinnerIndex index(winners);
    return Ladder(q, {index, &models, &deferrals});
  }
};

TEST(LadderTest, AnOwnModelGivesWayToAnotherThatServedItsShapesBetter) {
  const DeferralFixture f(/*alternate=*/true);
  const std::vector<ModelComparison> comparisons = f.Compare();
  ASSERT_EQ(comparisons.size(), 2u) << "each model against the other";
  const ModelComparison& c = comparisons[0].own == f.h100 ? comparisons[0] : comparisons[1];
  EXPECT_EQ(c.other, kH200.name);
  EXPECT_EQ(c.comparison.shapes, 4u);
  EXPECT_NEAR(c.comparison.own, 1 / 1.4, 1e-9) << "held out, the own model is wrong everywhere";
  EXPECT_NEAR(c.comparison.other, std::pow(1 / 1.4, 0.25), 1e-9) << "wrong only at 600";
  const Deferrals deferrals = ChooseDeferrals(comparisons);
  EXPECT_THAT(deferrals, ElementsAre(std::pair(f.h100, kH200.name)));

  const LookupResult own = f.Ask(Query(kH100, {6000, 6000}), Deferrals{});
  EXPECT_EQ(own.rung, LookupRung::kPredicted) << "without deferrals the own model answers";
  const LookupResult other = f.Ask(Query(kH100, {6000, 6000}), deferrals);
  EXPECT_EQ(other.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(other.device_model, kH200.name);
  EXPECT_EQ(Tile(other), 64);
  EXPECT_EQ(f.Ask(Query(kH100, {600, 600}), deferrals).rung, LookupRung::kExact)
      << "its own winners still come first";
}

TEST(LadderTest, AnOwnModelThatServesItsShapesAsWellKeepsAnswering) {
  const DeferralFixture f(/*alternate=*/false);
  const std::vector<ModelComparison> comparisons = f.Compare();
  ASSERT_EQ(comparisons.size(), 2u);
  for (const ModelComparison& c : comparisons) {
    EXPECT_GE(c.comparison.shapes, 4u);
    EXPECT_DOUBLE_EQ(c.comparison.own, 1.0) << c.own.device_model;
    EXPECT_DOUBLE_EQ(c.comparison.other, 1.0) << c.own.device_model << ": a tie";
  }
  const Deferrals deferrals = ChooseDeferrals(comparisons);
  EXPECT_THAT(deferrals, IsEmpty()) << "a tie goes to the own model";
  EXPECT_EQ(f.Ask(Query(kH100, {6000, 6000}), deferrals).rung, LookupRung::kPredicted);
}

TEST(LadderTest, AGiveWayNeedsAsManyJudgedShapesAsAModelNeeds) {
  ModelComparison c{{kH100.name, "transpose", DType::kF32}, kH200.name, {3, 0.5, 0.9}, {}};
  EXPECT_THAT(ChooseDeferrals({c}), IsEmpty()) << "three shapes are too few to judge";
  c.comparison.shapes = 4;
  EXPECT_THAT(ChooseDeferrals({c}), ElementsAre(std::pair(c.own, kH200.name)));
  c.comparison.other = 0.5 * 1.019;
  EXPECT_THAT(ChooseDeferrals({c}), IsEmpty()) << "within the margin the own model answers";
  c.comparison.other = 0.9;
  // Two models that each served the other better keep their own.
  ModelComparison back{{kH200.name, "transpose", DType::kF32}, kH100.name, {6, 0.9, 0.95}, {}};
  EXPECT_THAT(ChooseDeferrals({c, back}), IsEmpty());
  // Of two better models, the better one.
  ModelComparison gh200 = c;
  gh200.other = kGh200.name;
  gh200.comparison.other = 0.95;
  EXPECT_THAT(ChooseDeferrals({c, gh200}), ElementsAre(std::pair(c.own, kGh200.name)));
  EXPECT_THAT(ChooseDeferrals({gh200, c}), ElementsAre(std::pair(c.own, kGh200.name)));
}

TEST(LadderTest, AGiveWayIsReportedWhenItChangesOnly) {
  const ModelKey h100{kH100.name, "transpose", DType::kF32};
  const ModelComparison c{h100, kH200.name, {12, 0.835, 0.97}, {}};
  const ModelComparison gh{h100, kGh200.name, {12, 0.835, 0.98}, {}};
  const Deferrals to_h200{{h100, kH200.name}};
  std::vector<DeferralChange> began = DeferralChanges({}, to_h200, {c, gh});
  ASSERT_EQ(began.size(), 1u);
  EXPECT_EQ(began[0].own, h100);
  EXPECT_EQ(began[0].other, kH200.name);
  EXPECT_EQ(began[0].comparison.shapes, 12u);
  EXPECT_DOUBLE_EQ(began[0].comparison.other, 0.97) << "the chosen model's figures";
  EXPECT_THAT(DeferralChanges(to_h200, to_h200, {c}), IsEmpty()) << "no change, nothing said";
  const std::vector<DeferralChange> moved =
      DeferralChanges(to_h200, {{h100, kGh200.name}}, {c, gh});
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].other, kGh200.name);
  const std::vector<DeferralChange> back = DeferralChanges(to_h200, {}, {});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].own, h100);
  EXPECT_EQ(back[0].other, "") << "its own model again";
}

TEST(LadderTest, SameArchitectureIsTheNearestShapeOnAnotherModelOfTheComputeCapability) {
  LookupResult r = Ask(Query(kGh200, {8192, 8192}),
                       {W(kH200, {4096, 4096}, 64, 40.0), W(kH100, {8192, 8192}, 16, 170.0),
                        W(kA100, {8192, 8192}, 8, 90.0)});
  EXPECT_EQ(r.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(r.device_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.distance, 0);
  EXPECT_EQ(Tile(r), 16);

  // Nearest across models: 4096x4096 on the H200 is nearer than 8192x8192 on the H100.
  LookupResult nearer = Ask(Query(kGh200, {4096, 2048}),
                            {W(kH200, {4096, 4096}, 64, 40.0), W(kH100, {8192, 8192}, 16, 170.0)});
  EXPECT_EQ(nearer.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(nearer.device_model, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(nearer.distance, 1.0);
}

TEST(LadderTest, SameArchitectureSkipsTheOwnModel) {
  // The own model has only shapes of another rank; those must not come back through rung 3.
  LookupResult r = Ask(Query(kH200, {64, 64, 64}),
                       {W(kH200, {64, 64}, 8, 1.0), W(kH100, {128, 128, 128}, 4, 2.0)});
  EXPECT_EQ(r.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(r.device_model, "NVIDIA H100 80GB HBM3");
}

// --- order inside a rung -----------------------------------------------------------------------

TEST(LadderTest, InsideARungTheNearerShapeComesFirst) {
  // Even when it is the slowest.
  LookupResult r = Ask(Query(kH200, {4096, 4096}),
                       {W(kH200, {4096, 8192}, 1, 10.0), W(kH200, {8192, 8192}, 2, 5.0),
                        W(kH200, {2048, 2048}, 3, 1.0)});
  EXPECT_EQ(r.rung, LookupRung::kNearestShape);
  EXPECT_EQ(Tile(r), 1);
  EXPECT_DOUBLE_EQ(r.distance, 1.0);
}

TEST(LadderTest, AtOneDistanceTheCurrentSourceHashBeatsAStaleOne) {
  // The other winner is faster and stale in fewer fields (1 against 2), but the hash decides
  // first.
  LookupResult r = Ask(Query(kH200, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 64, 30.0, {13000, "13.0", "hash-old", 1, ""}),
                        W(kH200, {4096, 4096}, 32, 40.0, {12080, "12.8", "hash-now", 1, ""})});
  EXPECT_EQ(r.rung, LookupRung::kExact);
  EXPECT_EQ(Tile(r), 32);
  EXPECT_EQ(r.provenance.source_hash, "hash-now");
  EXPECT_THAT(r.stale, ElementsAre("driver 12080 != 13000", "nvrtc 12.8 != 13.0"));
}

TEST(LadderTest, ThenFewerStaleFields) {
  LookupResult r = Ask(Query(kH200, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 1, 10.0, {12080, "12.8", "hash-now", 1, ""}),
                        W(kH200, {4096, 4096}, 2, 20.0, {12080, "13.0", "hash-now", 1, ""})});
  EXPECT_EQ(Tile(r), 2);
  EXPECT_THAT(r.stale, ElementsAre("driver 12080 != 13000"));
}

TEST(LadderTest, ThenSpeed) {
  LookupResult r = Ask(Query(kH200, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 1, 20.0, {13000, "13.0", "hash-a", 1, ""}),
                        W(kH200, {4096, 4096}, 2, 10.0, {13000, "13.0", "hash-b", 1, ""})});
  // Both stale by their hash only (neither is "hash-now"): the faster one.
  EXPECT_EQ(Tile(r), 2);
}

TEST(LadderTest, ThenModelName) {
  LookupResult r = Ask(Query(kGh200, {4096, 4096}),
                       {W(kH200, {4096, 4096}, 1, 10.0), W(kH100, {4096, 4096}, 2, 10.0)});
  EXPECT_EQ(r.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(r.device_model, "NVIDIA H100 80GB HBM3");  // "H1" < "H2"
}

// --- stale fields ------------------------------------------------------------------------------

TEST(LadderTest, StaleFieldsNameEveryDifferenceAndSkipUnsetCurrentFields) {
  const Provenance tuned{12080, "12.8", "0123456789abcdef", 1, ""};
  EXPECT_THAT(StaleFields(tuned, {13000, "13.0", "fedcba9876543210", 2, ""}),
              ElementsAre("driver 12080 != 13000", "nvrtc 12.8 != 13.0",
                          "kernel source hash differs (tuned 0123456789ab, current fedcba987654)",
                          "space version 1 != 2"));
  // A table server without a GPU: no driver, NVRTC or space version to compare with. Another
  // timing method is not stale: the configuration is as right and as tuned; its times differ.
  EXPECT_THAT(StaleFields(tuned, {0, "", "0123456789abcdef", 0, "held"}), IsEmpty());
  EXPECT_THAT(StaleFields(tuned, tuned), IsEmpty());
}

TEST(LadderTest, RungNames) {
  EXPECT_EQ(LookupRungName(LookupRung::kExact), "exact");
  EXPECT_EQ(LookupRungName(LookupRung::kNearestShape), "nearest_shape");
  EXPECT_EQ(LookupRungName(LookupRung::kSameArchitecture), "same_architecture");
  EXPECT_EQ(LookupRungName(LookupRung::kFamilyDefault), "family_default");
}

TEST(LadderTest, IndexSurvivesAMove) {
  WinnerIndex index({W(kH200, {4096, 4096}, 64, 40.0)});
  WinnerIndex moved = std::move(index);
  LookupResult r = Ladder(Query(kH200, {4096, 4096}), {moved});
  EXPECT_EQ(r.rung, LookupRung::kExact);
  EXPECT_EQ(Tile(r), 64);
}

}  // namespace
}  // namespace cutune::store
