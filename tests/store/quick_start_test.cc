// The starting set of a quick sweep, in the lookup ladder's order: the device's own and its
// architecture's winners of the shape, their portfolios in turns, then the winners of other
// shapes (own first), then the family's starters while fewer than 32 are listed, then the
// baseline. A device
// with no tuning of its own used to start from the baseline alone. (Most tests here pass no
// starters, so their lists end with what the store knows and the baseline.)
#include "server/store/quick_start.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::A100;
using ::testing::ElementsAre;
using testing::H100;
using testing::H200;
using testing::Ok;
using testing::Prov;
using testing::RunSweep;
using testing::TempDir;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

DeviceModel ModelOf(const DeviceDescription& d) {
  return {d.name, d.cc_major, d.cc_minor, d.sm_count, d.total_memory_bytes};
}

Params Tile(int64_t t) { return {{"tile", t}}; }
const Params kBaseline = {{"tile", 1}};

TEST(ServingModelsTest, OwnModelFirstThenTheSameArchitectureByName) {
  const std::vector<DeviceModel> known = {{"NVIDIA H200", 9, 0, 132, 0},
                                          {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 0},
                                          {"NVIDIA H100 80GB HBM3", 9, 0, 132, 0},
                                          {"NVIDIA GH200", 9, 0, 132, 0}};
  EXPECT_THAT(ServingModels({"NVIDIA H100 80GB HBM3", 9, 0, 132, 0}, known),
              ElementsAre("NVIDIA H100 80GB HBM3", "NVIDIA GH200", "NVIDIA H200"));
  EXPECT_THAT(ServingModels({"NVIDIA A100-SXM4-80GB", 8, 0, 108, 0}, known),
              ElementsAre("NVIDIA A100-SXM4-80GB"));
  // A device the store has never seen is served by its architecture all the same.
  EXPECT_THAT(ServingModels({"NVIDIA H20", 9, 0, 78, 0}, known),
              ElementsAre("NVIDIA H20", "NVIDIA GH200", "NVIDIA H100 80GB HBM3", "NVIDIA H200"));
  EXPECT_THAT(ServingModels({"NVIDIA L4", 8, 9, 58, 0}, {}), ElementsAre("NVIDIA L4"));
}

class QuickStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_.File("cutune.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    // The H200 is tuned at two shapes; the H100 and the A100 are known but untuned.
    RunSweep(*store_, H200(), "transpose", {1024, 1024}, Prov(),
             {Ok(Tile(32), 10.0), Ok(Tile(64), 12.0)});
    RunSweep(*store_, H200(), "transpose", {16384, 16384}, Prov(),
             {Ok(Tile(64), 500.0), Ok(Tile(32), 520.0)});
    ASSERT_TRUE(store_->UpsertDevice(H100(), 13000).ok());
    ASSERT_TRUE(store_->UpsertDevice(A100(), 13000).ok());
  }
  std::vector<Params> Start(const DeviceDescription& device, const Shape& shape,
                            const std::vector<Params>& starters = {}) {
    absl::StatusOr<std::vector<Params>> start =
        QuickStart(*store_, ModelOf(device), "transpose", DType::kF32, shape, starters, kBaseline);
    EXPECT_TRUE(start.ok()) << start.status();
    return start.ok() ? *start : std::vector<Params>{};
  }

  // Tiles 16, 32 and 64 measured at six more H200 squares (16 wins below 2048, 64 from there, 32
  // is 1.2x everywhere): a matrix, so a portfolio its model ranks.
  void TuneH200Squares() {
    for (int64_t n : {256, 512, 2048, 4096, 8192, 32768}) {
      const double work = static_cast<double>(n * n) / 1e5;
      RunSweep(*store_, H200(), "transpose", {n, n}, Prov(),
               {Ok(Tile(16), work * (n < 2048 ? 1.0 : 1.4)), Ok(Tile(32), work * 1.2),
                Ok(Tile(64), work * (n < 2048 ? 1.4 : 1.0))});
    }
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(QuickStartTest, AnUntunedDeviceStartsFromItsArchitecturesWinnersNearestFirst) {
  EXPECT_THAT(Start(H100(), {12000, 12000}), ElementsAre(Tile(64), Tile(32), kBaseline));
  EXPECT_THAT(Start(H100(), {1000, 1000}), ElementsAre(Tile(32), Tile(64), kBaseline));
}

TEST_F(QuickStartTest, AnotherArchitecturesTuningDoesNotServe) {
  EXPECT_THAT(Start(A100(), {1000, 1000}), ElementsAre(kBaseline));
}

TEST_F(QuickStartTest, TheDevicesOwnTuningComesFirst) {
  RunSweep(*store_, H100(), "transpose", {8192, 8192}, Prov(), {Ok(Tile(128), 200.0)});
  EXPECT_THAT(Start(H100(), {1000, 1000}), ElementsAre(Tile(128), Tile(32), Tile(64), kBaseline));
  EXPECT_THAT(Start(H200(), {1000, 1000}), ElementsAre(Tile(32), Tile(64), Tile(128), kBaseline));
}

// With a prediction model, the architecture's portfolio ranked for the shape comes before the
// device's own winners of other shapes, as the ladder ranks it: 40 own winners left the H200's
// portfolio out of the 32 places before.
TEST_F(QuickStartTest, TheArchitecturesPortfolioComesBeforeOwnWinnersOfOtherShapes) {
  TuneH200Squares();
  auto h200 = store_->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_TRUE(h200 != nullptr && h200->HasMatrix());
  for (int64_t t = 100; t < 140; ++t) {
    RunSweep(*store_, H100(), "transpose", {t * 64, 4096}, Prov(), {Ok(Tile(t), 50.0)});
  }
  const std::vector<Params> start = Start(H100(), {1000, 1000});
  ASSERT_EQ(start.size(), 3u + 40u + 1u) << "every configuration known, then the baseline";
  EXPECT_THAT(std::vector<Params>(start.begin(), start.begin() + 3),
              UnorderedElementsAre(Tile(16), Tile(32), Tile(64)))
      << "the H200's portfolio, ranked for the shape";
  EXPECT_EQ(start[3], Tile(100)) << "then the own winners, nearest shape first";
  EXPECT_EQ(start.back(), kBaseline);
  // An own winner of the very shape still comes first.
  RunSweep(*store_, H100(), "transpose", {1000, 1000}, Prov(), {Ok(Tile(7), 9.0)});
  EXPECT_EQ(Start(H100(), {1000, 1000})[0], Tile(7));
}

// Where the H100's own model gives way to the H200's (its four tuned squares alternate winners,
// so it predicts them badly held out; it measured tile 32 too, the H200's pick at 1200x1200, so
// four shapes judge the H200's model; LookupTest has the same case), the H200's portfolio ranked
// for the shape comes before the H100's own: 64, then 32 (1.2x everywhere), then 16.
TEST_F(QuickStartTest, TheModelTheOwnOneGivesWayToComesFirst) {
  TuneH200Squares();
  const std::pair<int64_t, int64_t> h100[] = {{300, 16}, {600, 64}, {1200, 16}, {5000, 64}};
  for (auto [n, winner] : h100) {
    const double work = static_cast<double>(n * n) / 1e5;
    RunSweep(*store_, H100(), "transpose", {n, n}, Prov(),
             {Ok(Tile(16), work * (winner == 16 ? 1.0 : 1.4)), Ok(Tile(32), work * 1.3),
              Ok(Tile(64), work * (winner == 64 ? 1.0 : 1.4))});
  }
  ASSERT_EQ(store_->GivesWayTo(H100().name, "transpose", DType::kF32), H200().name);
  EXPECT_EQ(store_->GivesWayTo(H200().name, "transpose", DType::kF32), "");
  const std::vector<Params> start = Start(H100(), {6000, 6000});
  ASSERT_GE(start.size(), 3u);
  EXPECT_THAT(std::vector<Params>(start.begin(), start.begin() + 3),
              ElementsAre(Tile(64), Tile(32), Tile(16)));
  // The own winner of the very shape still comes first.
  RunSweep(*store_, H100(), "transpose", {6000, 6000}, Prov(), {Ok(Tile(7), 300.0)});
  EXPECT_EQ(Start(H100(), {6000, 6000})[0], Tile(7));
}

// Two models of the architecture with full portfolios (32 members each: every tuned shape has a
// winner of its own) share the start in turns, each model's best-ranked first. Before, the own
// portfolio took all 32 places, and an H100 answering 6000x250x6000 from its own table missed the
// full sweep's best by 4.4%, which the H200's portfolio reaches (bench/results/unseen-shapes.md,
// section 24).
TEST_F(QuickStartTest, TheServingModelsPortfoliosShareTheStartInTurns) {
  auto tune = [&](const DeviceDescription& device, int64_t first_tile) {
    for (int64_t i = 0; i < 32; ++i) {
      std::vector<Measurement> results;
      for (int64_t j = 0; j < 32; ++j)
        results.push_back(Ok(Tile(first_tile + j), i == j ? 10.0 : 15.0));
      RunSweep(*store_, device, "transpose", {512 + 64 * i, 4096}, Prov(), results);
    }
  };
  tune(H200(), 100);
  tune(H100(), 200);
  for (const DeviceDescription& device : {H100(), H200()}) {
    auto model = store_->PredictionModel(device.name, "transpose", DType::kF32);
    ASSERT_TRUE(model != nullptr && model->HasMatrix()) << device.name;
    ASSERT_EQ(model->Ranked({1000, 3000}).size(), 32u) << device.name;
  }
  ASSERT_EQ(store_->GivesWayTo(H100().name, "transpose", DType::kF32), "");
  const std::vector<Params> start = Start(H100(), {1000, 3000});
  ASSERT_EQ(start.size(), kMaxQuickStart + 1) << "48 and the baseline";
  const auto own =
      store_->PredictionModel(H100().name, "transpose", DType::kF32)->Ranked({1000, 3000});
  const auto other =
      store_->PredictionModel(H200().name, "transpose", DType::kF32)->Ranked({1000, 3000});
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(start[2 * i], own[i]) << i;
    EXPECT_EQ(start[2 * i + 1], other[i]) << i;
  }
  // Then the nearest shapes' winners take the 16 places beyond the portfolios': the own ones
  // the turns left out, nearest shape first.
  auto winners = store_->ListWinners(H100().name);
  ASSERT_TRUE(winners.ok()) << winners.status();
  std::vector<predict::TunedShape> tuned;
  for (const Winner& w : *winners) {
    tuned.push_back({w.shape, w.measurement.params, w.measurement.timing.median_us});
  }
  ASSERT_EQ(tuned.size(), 32u);
  std::vector<Params> nearest;
  for (const Params& p : predict::NearestWinners(tuned, {1000, 3000})) {
    if (std::find(start.begin(), start.begin() + 32, p) == start.begin() + 32) nearest.push_back(p);
  }
  ASSERT_EQ(nearest.size(), 16u);
  EXPECT_EQ(std::vector<Params>(start.begin() + 32, start.begin() + 48), nearest);
}

// A configuration that wins one region of the grid alone is in no portfolio: the nearest shapes'
// winners bring it, in places of their own after a full portfolio's 32. Before, the portfolio
// took every place, and quick on an H100 stopped 5.6% behind 3000x500x700's best, 1200^3's winner
// (bench/results/unseen-shapes.md, section 37).
TEST_F(QuickStartTest, TheNearestWinnersHavePlacesBeyondAFullPortfolio) {
  // 40 shapes, each won by its own tile, every tile measured at every shape at 1.5x its winner's
  // time: the portfolio holds 32 of the 40 winners.
  constexpr int64_t kShapes = 40;
  auto shape_of = [](int64_t i) { return Shape{512 + 64 * i, 4096}; };
  for (int64_t i = 0; i < kShapes; ++i) {
    std::vector<Measurement> results;
    for (int64_t j = 0; j < kShapes; ++j)
      results.push_back(Ok(Tile(200 + j), i == j ? 10.0 : 15.0));
    RunSweep(*store_, H100(), "transpose", shape_of(i), Prov(), results);
  }
  auto model = store_->PredictionModel(H100().name, "transpose", DType::kF32);
  ASSERT_TRUE(model != nullptr && model->HasMatrix());
  const std::vector<Params>& members = model->portfolio().members;
  ASSERT_EQ(members.size(), predict::kMaxMembers);
  int64_t left_out = -1;
  for (int64_t i = 0; i < kShapes && left_out < 0; ++i) {
    if (std::find(members.begin(), members.end(), Tile(200 + i)) == members.end()) left_out = i;
  }
  ASSERT_GE(left_out, 0);
  // Asked next to the shape the left-out tile wins: it comes right after the portfolio.
  const Shape asked = {shape_of(left_out)[0] + 8, 4096};
  const std::vector<Params> start = Start(H100(), asked);
  ASSERT_EQ(start.size(), 32u + 8u + 2u + 1u)
      << "the 32 members, the 8 winners left out, the H200's two, then the baseline";
  EXPECT_THAT(std::vector<Params>(start.begin(), start.begin() + 32),
              UnorderedElementsAreArray(members))
      << "the portfolio first";
  EXPECT_EQ(start[32], Tile(200 + left_out)) << "then the nearest shape's winner";
  EXPECT_EQ(start.back(), kBaseline);
}

// The family's starters come after everything the store knows, while there is room: a device of
// an architecture the store has no table for started from the baseline alone.
TEST_F(QuickStartTest, TheFamilysStartersFillTheRoomLeftBeforeTheBaseline) {
  const std::vector<Params> starters = {Tile(2), Tile(32), Tile(3)};
  EXPECT_THAT(Start(A100(), {1000, 1000}, starters),
              ElementsAre(Tile(2), Tile(32), Tile(3), kBaseline));
  // After the architecture's winners; one already listed is not listed again.
  EXPECT_THAT(Start(H100(), {1000, 1000}, starters),
              ElementsAre(Tile(32), Tile(64), Tile(2), Tile(3), kBaseline));
  // The baseline among them keeps its place.
  EXPECT_THAT(Start(A100(), {1000, 1000}, {Tile(2), kBaseline, Tile(3)}),
              ElementsAre(Tile(2), kBaseline, Tile(3)));
  EXPECT_THAT(QuickStartOfNothing(starters, kBaseline),
              ElementsAre(Tile(2), Tile(32), Tile(3), kBaseline))
      << "what a store that knows nothing starts from";
}

TEST_F(QuickStartTest, AFullStartLeavesNoRoomForTheStarters) {
  std::vector<Measurement> results;
  for (int64_t j = 0; j < 60; ++j) results.push_back(Ok(Tile(100 + j), 10.0 + j));
  for (int64_t i = 0; i < 60; ++i) {
    RunSweep(*store_, A100(), "transpose", {512 + 64 * i, 4096}, Prov(), {results[i]});
  }
  const std::vector<Params> start = Start(A100(), {1000, 3000}, {Tile(2), Tile(3)});
  ASSERT_EQ(start.size(), kMaxQuickStart + 1) << "48 winners and the baseline";
  EXPECT_EQ(std::count(start.begin(), start.end(), Tile(2)), 0);
  EXPECT_EQ(start.back(), kBaseline);
  // Room for one: the first starter takes it.
  std::vector<Params> almost(start.begin(), start.begin() + 31);
  FinishQuickStart(almost, {Tile(2), Tile(3)}, kBaseline);
  EXPECT_THAT(std::vector<Params>(almost.end() - 2, almost.end()), ElementsAre(Tile(2), kBaseline));
}

// 40 winners and no matrix: every one is listed (the nearest winners may fill 48 places), and
// the starters, which stop at 32, get no place after them.
TEST_F(QuickStartTest, FortyWinnersWithoutAMatrixAreAllListedAndTheStartersNone) {
  for (int64_t i = 0; i < 40; ++i) {
    RunSweep(*store_, A100(), "transpose", {512 + 64 * i, 4096}, Prov(), {Ok(Tile(100 + i), 10.0)});
  }
  const std::vector<Params> start = Start(A100(), {1000, 3000}, {Tile(2), Tile(3)});
  ASSERT_EQ(start.size(), 41u) << "40 winners and the baseline";
  for (int64_t i = 0; i < 40; ++i)
    EXPECT_EQ(std::count(start.begin(), start.end(), Tile(100 + i)), 1) << i;
  EXPECT_EQ(std::count(start.begin(), start.end(), Tile(2)), 0);
  EXPECT_EQ(start.back(), kBaseline);
}

TEST_F(QuickStartTest, TheBaselineIsListedOnce) {
  RunSweep(*store_, A100(), "transpose", {512, 512}, Prov(), {Ok(kBaseline, 5.0)});
  EXPECT_THAT(Start(A100(), {512, 512}), ElementsAre(kBaseline));
}

}  // namespace
}  // namespace cutune::store
