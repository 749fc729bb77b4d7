// Sweeps on a real GPU (label gpu): deliberate faults inside one sweep, and every candidate of
// both families verified on shapes that are not multiples of any tile (1000x1000x204 has interior
// blocks on the unchecked, float4 load path and checked edge blocks; in 1000x1001x204 only A rows
// allow float4; 512x512x256 is all interior blocks with no partial K step; in 512x512x12 interior
// blocks have fewer than two K steps, so their own loop (iloop=1) never runs).
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/compiler/pool.h"
#include "server/tuner/sweep.h"
#include "tests/tuner/fault_family.h"

namespace cutune::tuner {
namespace {

class SweepGpuTest : public ::testing::Test {
 protected:
  SweepGpuTest() : pool_(compiler_), worker_({}), sweeper_(pool_, worker_) {}

  SweepResult Sweep(SweepOptions options) {
    auto result = sweeper_.Run(options, nullptr);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? std::move(*result) : SweepResult{};
  }

  static std::map<Outcome, int> Counts(const SweepResult& r) {
    std::map<Outcome, int> counts;
    for (const Measurement& m : r.rows) ++counts[m.outcome];
    return counts;
  }

  // Every row of `r` ok (each other one named), and more than `at_least` of them.
  static void ExpectEveryRowOk(const SweepResult& r, const Shape& shape, int at_least) {
    EXPECT_GT(static_cast<int>(r.rows.size()), at_least) << FormatShape(shape);
    for (const Measurement& m : r.rows) {
      if (m.outcome != Outcome::kOk) {
        ADD_FAILURE() << FormatShape(shape) << " " << FormatParams(m.params) << ": " << m.detail;
      }
    }
  }

  compiler::CachingCompiler compiler_;
  compiler::CompilePool pool_;
  worker::WorkerProcess worker_;
  Sweeper sweeper_;
};

TEST_F(SweepGpuTest, FaultsHangsAndRefusalsDoNotStopTheSweep) {
  SweepOptions options;
  options.family = &testing::FaultFamily();
  options.shape = {2048, 1024};
  options.candidate_timeout = std::chrono::milliseconds(3000);
  SweepResult r = Sweep(options);
  ASSERT_EQ(r.rows.size(), 7u);
  std::map<int64_t, const Measurement*> by_mode;
  for (const Measurement& m : r.rows) by_mode[m.params.at("mode")] = &m;
  for (const auto& [mode, m] : by_mode) {
    std::cout << "mode " << mode << ": " << OutcomeName(m->outcome) << " " << m->timing.median_us
              << " us  " << m->detail << "\n";
  }
  EXPECT_EQ(by_mode[testing::kFast]->outcome, Outcome::kOk);
  EXPECT_EQ(by_mode[testing::kSlow]->outcome, Outcome::kOk);
  EXPECT_EQ(by_mode[testing::kIllegalAddress]->outcome, Outcome::kFault);
  EXPECT_EQ(by_mode[testing::kHang]->outcome, Outcome::kTimeout);
  EXPECT_EQ(by_mode[testing::kTooManyRegisters]->outcome, Outcome::kOutOfResources);
  EXPECT_EQ(by_mode[testing::kWrongAnswer]->outcome, Outcome::kWrongAnswer);
  // Right on the checked first launch, wrong on the launches timed after it.
  EXPECT_EQ(by_mode[testing::kWrongAfterFirstLaunch]->outcome, Outcome::kWrongAnswer);
  EXPECT_THAT(by_mode[testing::kWrongAfterFirstLaunch]->detail,
              ::testing::HasSubstr("after the timed launches"));
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_EQ(r.rows[*r.winner].params.at("mode"), testing::kFast);
  // The fault and the hang each cost a worker; the refused launch must not.
  EXPECT_EQ(r.worker_restarts, 2);
}

TEST_F(SweepGpuTest, EveryTransposeCandidateIsRightOnAnOddShape) {
  SweepOptions options;
  options.family = &kernels::TransposeFamily();
  options.shape = {1023, 769};
  options.timing.min_samples = 3;
  options.timing.max_samples = 5;
  SweepResult r = Sweep(options);
  auto counts = Counts(r);
  EXPECT_GT(counts[Outcome::kOk], 300);
  EXPECT_EQ(counts[Outcome::kWrongAnswer], 0);
  EXPECT_EQ(counts[Outcome::kFault], 0);
  EXPECT_EQ(counts[Outcome::kCompileFailed], 0);
  for (const Measurement& m : r.rows) {
    EXPECT_NE(m.outcome, Outcome::kWrongAnswer) << FormatParams(m.params) << ": " << m.detail;
  }
}

TEST_F(SweepGpuTest, TransposeOnALargeOddShape) {
  SweepOptions options;
  options.family = &kernels::TransposeFamily();
  options.shape = {8191, 4097};
  options.strategy = "random";
  options.max_evaluations = 80;
  SweepResult r = Sweep(options);
  auto counts = Counts(r);
  EXPECT_EQ(counts[Outcome::kWrongAnswer], 0);
  EXPECT_EQ(counts[Outcome::kFault], 0);
  EXPECT_GT(counts[Outcome::kOk], 40);
}

TEST_F(SweepGpuTest, EveryMatmulCandidateIsRightOnOddShapes) {
  for (Shape shape : {Shape{1000, 1000, 77}, Shape{1000, 1000, 204}, Shape{1000, 1001, 204},
                      Shape{512, 512, 256}, Shape{512, 512, 12}, Shape{4097, 1023, 777},
                      Shape{1, 1, 1},
                      Shape{33, 65, 17}}) {
    SweepOptions options;
    options.family = &kernels::MatmulFamily();
    options.shape = shape;
    options.timing.min_samples = 3;
    options.timing.max_samples = 5;
    if (shape[0] > 1000) {
      options.strategy = "random";
      options.max_evaluations = 120;
    }
    SweepResult r = Sweep(options);
    auto counts = Counts(r);
    EXPECT_EQ(counts[Outcome::kWrongAnswer], 0) << FormatShape(shape);
    EXPECT_EQ(counts[Outcome::kFault], 0) << FormatShape(shape);
    EXPECT_EQ(counts[Outcome::kCompileFailed], 0) << FormatShape(shape);
    EXPECT_GT(counts[Outcome::kOk], 50) << FormatShape(shape);
    for (const Measurement& m : r.rows) {
      if (m.outcome == Outcome::kWrongAnswer || m.outcome == Outcome::kFault) {
        ADD_FAILURE() << FormatShape(shape) << " " << FormatParams(m.params) << ": " << m.detail;
      }
    }
  }
}

// Split-K modules on a shape with more 64x64 C tiles (256 x 257) than their turn counters: the
// grid does not split and the kernel must leave the counters alone (128x64 and 64x128 tiles, 32896
// and 33024 of them, still split). C is 1 GiB.
TEST_F(SweepGpuTest, SplitKModulesAreRightPastTheirTurnCounters) {
  SweepOptions options;
  options.family = &kernels::MatmulFamily();
  options.shape = {16384, 16448, 64};
  auto space = options.family->default_space().Narrow({{"splitk", {2, 4, 8}}});
  ASSERT_TRUE(space.ok()) << space.status();
  options.space = *space;
  options.timing.min_samples = 3;
  options.timing.max_samples = 3;
  SweepResult r = Sweep(options);
  auto counts = Counts(r);
  EXPECT_EQ(counts[Outcome::kOk], static_cast<int>(r.rows.size()));
  EXPECT_GT(counts[Outcome::kOk], 100);
  for (const Measurement& m : r.rows) {
    if (m.outcome != Outcome::kOk) ADD_FAILURE() << FormatParams(m.params) << ": " << m.detail;
  }
}

// Split-K modules whose partials fit their module memory (the last split sums them) on odd
// shapes: one C tile split 16 ways (16x16x16384), tiles cut by both edges (129x260x4100), and
// 1000x1001x204, whose 64x64 grids fit up to 4 splits and add into C in turn past that. Each is
// checked on its first launch and again after the timed ones (the counters must return to 0).
TEST_F(SweepGpuTest, SplitKModulesAreRightSummingPartials) {
  for (Shape shape : {Shape{16, 16, 16384}, Shape{129, 260, 4100}, Shape{1000, 1001, 204}}) {
    SweepOptions options;
    options.family = &kernels::MatmulFamily();
    options.shape = shape;
    auto space = options.family->default_space().Narrow({{"splitk", {2, 4, 8, 16}}});
    ASSERT_TRUE(space.ok()) << space.status();
    options.space = *space;
    options.timing.min_samples = 3;
    options.timing.max_samples = 3;
    ExpectEveryRowOk(Sweep(options), shape, 100);
  }
}

// Stream-K modules where a tile's hand-over chain is long (16x16x16384: one C tile, its 2048 K
// steps shared by every block) and where every block has parts of several tiles, on odd shapes:
// right on the checked launch, and no hang in the timed ones (each launch leaves the turn counters
// at 0 for the next).
TEST_F(SweepGpuTest, StreamKModulesAreRightWithLongHandOvers) {
  for (Shape shape : {Shape{16, 16, 16384}, Shape{1000, 1001, 204}, Shape{4097, 1023, 777}}) {
    SweepOptions options;
    options.family = &kernels::MatmulFamily();
    options.shape = shape;
    auto space = options.family->default_space().Narrow({{"sk", {1, 2}}});
    ASSERT_TRUE(space.ok()) << space.status();
    options.space = *space;
    options.timing.min_samples = 3;
    options.timing.max_samples = 3;
    if (shape[0] > 1000) {
      options.strategy = "random";
      options.max_evaluations = 120;
    }
    ExpectEveryRowOk(Sweep(options), shape, 100);
  }
}

// Quick's brief timing takes one sample of a candidate already far behind the fastest so far
// (tuner::AbandonAbove): the seed kernel after the 4096^3 winner's configuration at 2048^3. The
// fast one, timed first, gets its samples in full.
TEST_F(SweepGpuTest, QuickTimesACandidateFarBehindTheFastestOnce) {
  SweepOptions options;
  options.family = &kernels::MatmulFamily();
  options.shape = {2048, 2048, 2048};
  auto fast = ParseParams(
      "at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,"
      "tn=8,vec=4,warp=1");
  ASSERT_TRUE(fast.ok()) << fast.status();
  const Params slow = kernels::MatmulFamily().baseline();
  options.candidates = {*fast, slow};
  options.strategy = "quick";
  options.max_evaluations = 2;  // the two alone, in this order
  options.finalists = 1;        // the slow one keeps its first timing
  SweepResult r = Sweep(options);
  ASSERT_EQ(r.rows.size(), 2u);
  const Measurement& first = r.rows[0];
  const Measurement& second = r.rows[1];
  ASSERT_EQ(first.params, *fast);
  ASSERT_EQ(second.params, slow);
  ASSERT_EQ(first.outcome, Outcome::kOk) << first.detail;
  ASSERT_EQ(second.outcome, Outcome::kOk) << second.detail;
  std::cout << "fast " << first.timing.median_us << " us (" << first.timing.samples
            << " samples), slow " << second.timing.median_us << " us (" << second.timing.samples
            << ")\n";
  EXPECT_GE(first.timing.samples, 3);
  EXPECT_GT(second.timing.median_us, kQuickAbandonFactor * first.timing.median_us);
  EXPECT_EQ(second.timing.samples, 1);
}

TEST_F(SweepGpuTest, ReferenceFiguresAreMeasured) {
  SweepOptions options;
  options.family = &kernels::MatmulFamily();
  options.shape = {2048, 2048, 2048};
  options.candidates = {kernels::MatmulFamily().baseline()};
  SweepResult r = Sweep(options);
  EXPECT_THAT(r.reference_name, ::testing::HasSubstr("cuBLAS"));
  EXPECT_GT(r.reference_us, 0);
  ASSERT_TRUE(r.winner);
  EXPECT_GT(r.rows[*r.winner].percent_of_reference, 1);
  EXPECT_LT(r.rows[*r.winner].percent_of_reference, 200);
}

}  // namespace
}  // namespace cutune::tuner
