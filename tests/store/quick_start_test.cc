// The starting set of a quick sweep: the device's own tuning first, then that of devices of its
// architecture, then the baseline. A device with no tuning of its own used to start from the
// baseline alone.
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
  std::vector<Params> Start(const DeviceDescription& device, const Shape& shape) {
    absl::StatusOr<std::vector<Params>> start =
        QuickStart(*store_, ModelOf(device), "transpose", DType::kF32, shape, kBaseline);
    EXPECT_TRUE(start.ok()) << start.status();
    return start.ok() ? *start : std::vector<Params>{};
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

TEST_F(QuickStartTest, TheBaselineIsListedOnce) {
  RunSweep(*store_, A100(), "transpose", {512, 512}, Prov(), {Ok(kBaseline, 5.0)});
  EXPECT_THAT(Start(A100(), {512, 512}), ElementsAre(kBaseline));
}

}  // namespace
}  // namespace cutune::store
