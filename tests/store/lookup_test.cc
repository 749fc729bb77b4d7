// The lookup ladder: exact -> nearest shape -> same architecture -> family default, with the
// distance and stale provenance reported; among many models, the asked model's own answers.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::A100;
using ::testing::ElementsAre;
using testing::H100;
using testing::H200;
using ::testing::HasSubstr;
using testing::Ok;
using testing::Prov;
using testing::RunSweep;
using testing::TempDir;

class LookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_.File("cutune.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  LookupQuery Query(const DeviceDescription& device, const Shape& shape) const {
    LookupQuery q;
    q.device_model = device.name;
    q.cc_major = device.cc_major;
    q.cc_minor = device.cc_minor;
    q.family = "transpose";
    q.shape = shape;
    q.current = Prov();
    q.family_default = {{"tile", 32}, {"pad", 1}};
    return q;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(LookupTest, WalksTheLadder) {
  RunSweep(*store_, H200(), "transpose", {4096, 4096}, Prov(), {Ok({{"tile", 64}}, 40.0)});
  RunSweep(*store_, H200(), "transpose", {16384, 16384}, Prov(), {Ok({{"tile", 128}}, 600.0)});
  RunSweep(*store_, H100(), "transpose", {8192, 8192}, Prov(), {Ok({{"tile", 16}}, 170.0)});

  LookupResult exact = store_->Lookup(Query(H200(), {4096, 4096}));
  EXPECT_EQ(exact.rung, LookupRung::kExact);
  EXPECT_EQ(exact.distance, 0);
  EXPECT_EQ(exact.device_model, "NVIDIA H200");
  EXPECT_EQ(exact.winner.params, (Params{{"tile", 64}}));

  // 8192x2048 is |log2 2| + |log2 1/2| = 2 from 4096x4096 and 1 + 3 = 4 from 16384x16384.
  LookupResult near = store_->Lookup(Query(H200(), {8192, 2048}));
  EXPECT_EQ(near.rung, LookupRung::kNearestShape);
  EXPECT_DOUBLE_EQ(near.distance, 2.0);
  EXPECT_THAT(near.tuned_shape, ElementsAre(4096, 4096));
  EXPECT_EQ(near.winner.params, (Params{{"tile", 64}}));

  LookupResult far = store_->Lookup(Query(H200(), {12000, 16384}));
  EXPECT_EQ(far.rung, LookupRung::kNearestShape);
  EXPECT_THAT(far.tuned_shape, ElementsAre(16384, 16384));
  EXPECT_NEAR(far.distance, std::log2(16384.0 / 12000.0), 1e-12);

  // No H200 shape of another rank; the H100 (same compute capability 9.0) has none either.
  LookupResult rank = store_->Lookup(Query(H200(), {64, 64, 64}));
  EXPECT_EQ(rank.rung, LookupRung::kFamilyDefault);

  // An H100 asking for 4096x4096: the H200's winner measured at the shape beats the H100's
  // own nearest shape (8192x8192); for 8192x4096 the H200 has neither the shape nor a matrix,
  // so the own nearest shape answers.
  LookupResult arch_exact = store_->Lookup(Query(H100(), {4096, 4096}));
  EXPECT_EQ(arch_exact.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(arch_exact.device_model, "NVIDIA H200");
  EXPECT_EQ(arch_exact.distance, 0);
  LookupResult own = store_->Lookup(Query(H100(), {8192, 4096}));
  EXPECT_EQ(own.rung, LookupRung::kNearestShape);
  EXPECT_EQ(own.device_model, "NVIDIA H100 80GB HBM3");

  // A model never tuned, same compute capability: the nearest shape across 9.0 models.
  DeviceDescription gh200{"NVIDIA GH200 480GB", "GPU-z", 9, 0, 132, 96LL << 30};
  LookupResult arch = store_->Lookup(Query(gh200, {8192, 8192}));
  EXPECT_EQ(arch.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(arch.device_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(arch.distance, 0);

  LookupResult none = store_->Lookup(Query(A100(), {8192, 8192}));
  EXPECT_EQ(none.rung, LookupRung::kFamilyDefault);
  EXPECT_EQ(none.winner.params, (Params{{"pad", 1}, {"tile", 32}}));
  EXPECT_TRUE(none.tuned_shape.empty());
  EXPECT_TRUE(none.stale.empty());

  LookupQuery other_family = Query(H200(), {4096, 4096});
  other_family.family = "matmul";
  EXPECT_EQ(store_->Lookup(other_family).rung, LookupRung::kFamilyDefault);
}

// The store chooses, each time it trains, whether an own prediction model gives way to another
// of the same architecture (ChooseDeferrals, tested rung by rung in ladder_test.cc): an H100
// whose four tuned squares alternate winners predicts badly held out, and the H200 grid's model
// served those squares better, so the H100's untuned shapes get the H200's pick.
TEST_F(LookupTest, AnOwnModelThatPredictsWorseGivesWayToTheArchitecturesModel) {
  auto sweep = [&](const DeviceDescription& device, int64_t n, int winner) {
    const double work = static_cast<double>(n * n) / 1e5;
    RunSweep(*store_, device, "transpose", {n, n}, Prov(),
             {Ok({{"tile", 16}}, work * (winner == 16 ? 1.0 : 1.4)),
              Ok({{"tile", 64}}, work * (winner == 64 ? 1.0 : 1.4))});
  };
  for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) sweep(H200(), n, n < 2048 ? 16 : 64);
  sweep(H100(), 300, 16);
  sweep(H100(), 600, 64);
  sweep(H100(), 1200, 16);
  ASSERT_EQ(store_->Lookup(Query(H100(), {6000, 6000})).rung, LookupRung::kSameArchitecture)
      << "three shapes: no matrix of its own yet";
  sweep(H100(), 5000, 64);
  auto model = store_->PredictionModel(H100().name, "transpose", DType::kF32);
  ASSERT_TRUE(model && model->HasMatrix()) << "four shapes, every cell measured";
  const LookupResult answer = store_->Lookup(Query(H100(), {6000, 6000}));
  EXPECT_EQ(answer.rung, LookupRung::kSameArchitecture);
  EXPECT_EQ(answer.device_model, "NVIDIA H200");
  EXPECT_EQ(answer.winner.params, (Params{{"tile", 64}}));
  EXPECT_GE(answer.expected_slowdown, 1.0) << "the H200 model's prediction";
  EXPECT_EQ(store_->Lookup(Query(H100(), {600, 600})).rung, LookupRung::kExact);
}

TEST_F(LookupTest, FlagsStaleProvenanceInsteadOfHidingIt) {
  RunSweep(*store_, H200(), "transpose", {4096, 4096}, {12080, "12.8", "old-hash", 1, ""},
           {Ok({{"tile", 64}}, 40.0)});
  LookupResult hit = store_->Lookup(Query(H200(), {4096, 4096}));
  EXPECT_EQ(hit.rung, LookupRung::kExact);  // still the answer, but flagged
  EXPECT_THAT(hit.stale, ElementsAre("driver 12080 != 13000", "nvrtc 12.8 != 13.0",
                                     HasSubstr("kernel source hash differs")));

  // A table server without a GPU has no driver or NVRTC of its own to compare with.
  LookupQuery no_gpu = Query(H200(), {4096, 4096});
  no_gpu.current.driver_version = 0;
  no_gpu.current.nvrtc_version.clear();
  EXPECT_THAT(store_->Lookup(no_gpu).stale, ElementsAre(HasSubstr("kernel source hash differs")));
}

TEST_F(LookupTest, CurrentSourceBeatsStaleSourceAtTheSameRung) {
  // The stale winner is faster, but was measured with another kernel source.
  RunSweep(*store_, H200(), "transpose", {4096, 4096}, Prov(13000, "old-hash"),
           {Ok({{"tile", 64}}, 30.0)});
  RunSweep(*store_, H200(), "transpose", {4096, 4096}, Prov(13000, "hash-transpose-1"),
           {Ok({{"tile", 32}}, 40.0)});
  LookupResult hit = store_->Lookup(Query(H200(), {4096, 4096}));
  EXPECT_EQ(hit.rung, LookupRung::kExact);
  EXPECT_EQ(hit.winner.params, (Params{{"tile", 32}}));
  EXPECT_EQ(hit.provenance.source_hash, "hash-transpose-1");
  EXPECT_TRUE(hit.stale.empty());

  // But a stale exact match still beats a fresh nearest shape: the rung comes first.
  RunSweep(*store_, H200(), "transpose", {2048, 2048}, Prov(13000, "old-hash"),
           {Ok({{"tile", 16}}, 10.0)});
  LookupResult stale_exact = store_->Lookup(Query(H200(), {2048, 2048}));
  EXPECT_EQ(stale_exact.rung, LookupRung::kExact);
  EXPECT_EQ(stale_exact.winner.params, (Params{{"tile", 16}}));
  EXPECT_THAT(stale_exact.stale, ElementsAre(HasSubstr("kernel source hash differs")));
}

// Among many models' winners, every lookup answers from the asked model's own. How fast it is
// (the store's share of a gRPC request's ~100 us) is a benchmark's figure, not a unit test's:
// `cutune-predict-bench` times Store::Lookup (bench/results/unseen-shapes.md, lookup cost).
TEST_F(LookupTest, AmongManyModelsTheOwnModelAnswers) {
  // 10 models x 100 shapes of winners, inserted through the import path in one transaction.
  ImportBatch batch;
  for (int d = 0; d < 10; ++d) {
    DeviceModel model{"GPU model " + std::to_string(d), 9, 0, 132, 80LL << 30};
    batch.devices.push_back(model);
    for (int s = 0; s < 100; ++s) {
      Winner w;
      w.device = model;
      w.family = "transpose";
      w.shape = {int64_t{256} << (s % 8), int64_t{256} << (s / 8 % 8), s + 1};
      w.provenance = Prov();
      w.measurement = Ok({{"tile", s}}, 10.0 + s);
      w.measured_at_ms = 1700000000000;
      batch.winners.push_back(w);
    }
  }
  absl::StatusOr<ImportStats> stats = store_->ApplyImport(batch, MergePolicy::kFailOnConflict);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->winners_added, 1000);

  LookupQuery q;
  q.device_model = "GPU model 7";
  q.cc_major = 9;
  q.family = "transpose";
  q.current = Prov();
  for (int i = 0; i < 1000; ++i) {
    q.shape = {int64_t{256} << (i % 8), int64_t{300} << (i / 8 % 8), i % 100 + 1};
    const LookupResult r = store_->Lookup(q);
    ASSERT_EQ(r.rung, LookupRung::kNearestShape) << i;
    ASSERT_EQ(r.device_model, "GPU model 7") << i;
  }
}

}  // namespace
}  // namespace cutune::store
