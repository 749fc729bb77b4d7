// Sweeps on the fake worker (tests/worker/fake_worker_main.cc), so that the sweep's phases run on
// a machine without a GPU: every candidate evaluated and verified, the finalists re-measured
// without verification, and the winner named among the finalists tied with the fastest. The fake
// worker's times are fixed per candidate, without spread: only equal times tie.
#include "server/tuner/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ties.h"
#include "server/tuner/winner.h"

namespace cutune::tuner {
namespace {

using ::testing::Contains;

std::string Beside(const std::string& name) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / name).string();
}

std::vector<Params> FirstCandidates(const kernels::Space& space, size_t n) {
  std::vector<Params> out;
  space.ForEachValid([&](uint64_t, const Params& params) {
    if (out.size() < n) out.push_back(params);
  });
  return out;
}

// The runs the fake worker logged: how many verified, how many not.
std::pair<int, int> CountRuns(const std::string& log) {
  std::ifstream in(log);
  int verified = 0, unverified = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("run verify=1", 0) == 0) ++verified;
    if (line.rfind("run verify=0", 0) == 0) ++unverified;
  }
  return {verified, unverified};
}

class FakeWorkerSweepTest : public ::testing::Test {
 protected:
  FakeWorkerSweepTest()
      : log_((std::filesystem::temp_directory_path() /
              ("cutune-sweep-test-" + std::to_string(getpid()) + ".log"))
                 .string()),
        pool_(compiler_, 2),
        worker_({.executable = Beside("fake-worker")}),
        sweeper_(pool_, worker_) {
    std::filesystem::remove(log_);
    setenv("FAKE_WORKER_RUN_LOG", log_.c_str(), 1);
  }
  ~FakeWorkerSweepTest() override {
    unsetenv("FAKE_WORKER_RUN_LOG");
    std::filesystem::remove(log_);
  }

  SweepOptions Options(size_t candidates) const {
    SweepOptions options;
    options.family = &kernels::TransposeFamily();
    options.shape = {256, 256};
    options.candidates = FirstCandidates(options.family->default_space(), candidates);
    options.finalists = 4;
    options.remeasure_rounds = 2;
    return options;
  }

  const std::string log_;
  compiler::CachingCompiler compiler_;
  compiler::CompilePool pool_;
  worker::WorkerProcess worker_;
  Sweeper sweeper_;
};

TEST_F(FakeWorkerSweepTest, TheWinnerIsTheCanonicalFirstOfTheFinalistsTiedWithTheFastest) {
  const SweepOptions options = Options(12);
  auto r = sweeper_.Run(options, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 12u);
  std::vector<size_t> ranked;
  for (size_t i = 0; i < r->rows.size(); ++i) {
    if (r->rows[i].outcome == Outcome::kOk) ranked.push_back(i);
  }
  ASSERT_GE(ranked.size(), 4u);
  std::sort(ranked.begin(), ranked.end(),
            [&](size_t a, size_t b) { return RanksBefore(r->rows[a], r->rows[b]); });

  // The fake worker times a candidate the same every time, so re-measurement keeps the ranking:
  // the finalists are the four fastest, and those with the fastest's time are tied.
  const Measurement& fastest = r->rows[ranked[0]];
  std::vector<size_t> tied;
  for (size_t k = 0; k < 4; ++k) {
    if (r->rows[ranked[k]].timing.median_us == fastest.timing.median_us) tied.push_back(ranked[k]);
  }
  std::sort(tied.begin(), tied.end());
  EXPECT_EQ(r->tied, tied);
  ASSERT_TRUE(r->winner.has_value());
  EXPECT_THAT(r->tied, Contains(*r->winner));
  for (size_t i : r->tied) {
    EXPECT_FALSE(CanonicalBefore(r->rows[i].params, r->rows[*r->winner].params))
        << FormatParams(r->rows[i].params) << " comes before the winner "
        << FormatParams(r->rows[*r->winner].params);
  }

  // Each ok candidate verified once; each finalist timed again, unverified, in every round.
  auto [verified, unverified] = CountRuns(log_);
  EXPECT_EQ(verified, static_cast<int>(ranked.size()));
  EXPECT_EQ(unverified, 4 * options.remeasure_rounds);
  for (size_t k = 0; k < ranked.size(); ++k) {
    EXPECT_EQ(r->rows[ranked[k]].timing.samples, k < 4 ? 10 + 10 * options.remeasure_rounds : 10)
        << "rank " << k;
  }
}

// On an H200 a small kernel's first time comes out below its re-measurements (and the fastest
// of many single times is the luckiest): the fake worker's FAKE_WORKER_FIRST_SCALE makes every
// first time 15% short. The finalists, re-measured, then lose to rows timed once; those rows
// must be re-measured too (challengers), or the table ranks them above the winner unchecked.
TEST_F(FakeWorkerSweepTest, RowsTimedOnceThatBeatTheReMeasuredFinalistsAreReMeasuredToo) {
  setenv("FAKE_WORKER_FIRST_SCALE", "0.85", 1);
  SweepOptions options = Options(24);
  options.finalists = 2;
  auto r = sweeper_.Run(options, nullptr);
  unsetenv("FAKE_WORKER_FIRST_SCALE");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->winner.has_value());
  const Measurement& winner = r->rows[*r->winner];
  EXPECT_GT(winner.timing.samples, 10) << "the winner was re-measured";
  size_t remeasured = 0;
  for (const Measurement& row : r->rows) remeasured += row.timing.samples > 10;
  EXPECT_GT(remeasured, 2u) << "challengers joined the two finalists";
  EXPECT_LE(remeasured, 6u) << "at most three times the finalists";
  if (remeasured < 6) {
    for (const Measurement& row : r->rows) {
      if (row.outcome != Outcome::kOk || !RanksBefore(row, winner)) continue;
      EXPECT_GT(row.timing.samples, 10)
          << FormatParams(row.params) << " ranks before the winner, timed once";
    }
  }
  // Every re-measured row's median is its true time (two of three values).
  for (const Measurement& row : r->rows) {
    if (row.timing.samples > 10) {
      EXPECT_EQ(row.timing.median_us, std::round(row.timing.median_us)) << FormatParams(row.params);
    }
  }
}

TEST_F(FakeWorkerSweepTest, WithoutReMeasurementTheFastestIsTiedAlone) {
  SweepOptions options = Options(6);
  options.finalists = 1;
  auto r = sweeper_.Run(options, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->winner.has_value());
  EXPECT_EQ(r->tied, std::vector<size_t>{*r->winner});
  for (const Measurement& row : r->rows) {
    if (row.outcome == Outcome::kOk) {
      EXPECT_FALSE(RanksBefore(row, r->rows[*r->winner])) << FormatParams(row.params);
    }
  }
  EXPECT_EQ(CountRuns(log_).second, 0) << "one finalist is not re-measured";
}

TEST_F(FakeWorkerSweepTest, NoFinalistsNoWinner) {
  SweepOptions options = Options(3);
  options.finalists = 0;
  auto r = sweeper_.Run(options, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->winner.has_value());
  EXPECT_TRUE(r->tied.empty());
}

// Runs of the fake worker's log by device and verification: {device, verify} -> count.
std::map<std::pair<int, int>, int> RunsByDevice(const std::string& log) {
  std::ifstream in(log);
  std::map<std::pair<int, int>, int> out;
  int verify = 0, device = 0;
  for (std::string line; std::getline(in, line);) {
    if (std::sscanf(line.c_str(), "run verify=%d device=%d", &verify, &device) == 2) {
      ++out[{device, verify}];
    }
  }
  return out;
}

// Two fake GPUs of one model, the second 2% faster (FAKE_WORKER_FAST_DEVICE): a sweep sharded
// across both.
class ShardedSweepTest : public FakeWorkerSweepTest {
 protected:
  ShardedSweepTest() : second_({.executable = Beside("fake-worker"), .ordinal = 1}) {
    setenv("FAKE_WORKER_FAST_DEVICE", "1", 1);
    setenv("FAKE_WORKER_RUN_MS", "5", 1);  // so that both GPUs get work
  }
  ~ShardedSweepTest() override {
    unsetenv("FAKE_WORKER_FAST_DEVICE");
    unsetenv("FAKE_WORKER_RUN_MS");
  }
  worker::WorkerProcess second_;
};

TEST_F(ShardedSweepTest, EveryCandidateIsMeasuredOnceAndTheFinalistsOnTheFirstGpuAlone) {
  SweepOptions options = Options(24);
  options.remeasure_rounds = 1;
  // The same candidates on the first GPU alone: each candidate's time there.
  auto alone = sweeper_.Run(options, nullptr);
  ASSERT_TRUE(alone.ok()) << alone.status();
  std::map<std::string, double> own_time;
  for (const Measurement& row : alone->rows) own_time[FormatParams(row.params)] = row.timing.median_us;
  std::filesystem::remove(log_);

  Sweeper sharded(pool_, {&worker_, &second_});
  std::vector<int> reported;
  auto r = sharded.Run(options, [&](const Measurement&, const Progress& progress) {
    reported.push_back(progress.latest_device);
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->devices, (std::vector<int>{0, 1}));
  EXPECT_TRUE(r->dropped.empty());

  // Every candidate is one row, and was verified once, on one GPU or the other; both took part.
  ASSERT_EQ(r->rows.size(), 24u);
  std::set<std::string> seen;
  for (const Measurement& row : r->rows) EXPECT_TRUE(seen.insert(FormatParams(row.params)).second);
  const auto runs = RunsByDevice(log_);
  const int ok = static_cast<int>(std::count_if(r->rows.begin(), r->rows.end(), [](const auto& m) {
    return m.outcome == Outcome::kOk;
  }));
  const auto count = [&](int device, int verify) {
    auto it = runs.find({device, verify});
    return it == runs.end() ? 0 : it->second;
  };
  EXPECT_EQ(count(0, 1) + count(1, 1), ok);
  EXPECT_GT(count(0, 1), 0);
  EXPECT_GT(count(1, 1), 0);
  EXPECT_EQ(r->rows_by_device.at(0) + r->rows_by_device.at(1), 24);
  EXPECT_EQ(std::count(reported.begin(), reported.end(), 1), r->rows_by_device.at(1));

  // The finalists were timed again on the first GPU only, and their figures are its alone: a
  // first time from the faster GPU, whose candidates become finalists first, does not count.
  // So the winner's time is the first GPU's.
  EXPECT_EQ(count(1, 0), 0);
  EXPECT_EQ(count(0, 0), 4 * options.remeasure_rounds);
  ASSERT_FALSE(r->tied.empty());
  for (size_t i : r->tied) {
    EXPECT_EQ(r->rows[i].timing.median_us, own_time[FormatParams(r->rows[i].params)])
        << FormatParams(r->rows[i].params);
  }
  ASSERT_TRUE(r->winner && alone->winner);
  EXPECT_EQ(r->rows[*r->winner].timing.median_us, alone->rows[*alone->winner].timing.median_us);
}

// A GPU goes bad: its worker dies (at its next run, or before the sweep) and cannot start again.
class BrokenGpuTest : public ShardedSweepTest, public ::testing::WithParamInterface<bool> {};

TEST_P(BrokenGpuTest, ItLeavesTheSweepAndTheOthersFinishIt) {
  const bool mid_sweep = GetParam();
  const std::string broken = log_ + ".break";
  setenv("FAKE_WORKER_BREAK_FILE", broken.c_str(), 1);
  if (mid_sweep) {
    ASSERT_TRUE(second_.Start().ok());
  }
  std::ofstream(broken) << 1;
  SweepOptions options = Options(12);
  Sweeper sharded(pool_, {&worker_, &second_});
  auto r = sharded.Run(options, nullptr);
  unsetenv("FAKE_WORKER_BREAK_FILE");
  std::filesystem::remove(broken);
  ASSERT_TRUE(r.ok()) << r.status();
  // Mid-sweep, its worker died at its first candidate (a crash row: a GPU cannot tell the two
  // apart), failed to start again and was quarantined; the first GPU measured the rest.
  ASSERT_EQ(r->rows.size(), 12u);
  std::set<std::string> seen;
  for (const Measurement& row : r->rows) EXPECT_TRUE(seen.insert(FormatParams(row.params)).second);
  ASSERT_EQ(r->dropped.size(), 1u);
  EXPECT_THAT(r->dropped[0], ::testing::HasSubstr("GPU 1 left the sweep"));
  EXPECT_TRUE(second_.quarantined());
  EXPECT_FALSE(worker_.quarantined());
  EXPECT_EQ(r->rows_by_device[1], mid_sweep ? 1 : 0);
  EXPECT_EQ(r->rows_by_device[0], mid_sweep ? 11 : 12);
  ASSERT_TRUE(r->winner.has_value());
}

INSTANTIATE_TEST_SUITE_P(WhenItBreaks, BrokenGpuTest, ::testing::Bool(),
                         [](const auto& test) { return test.param ? "MidSweep" : "AtStart"; });

TEST(TimingForTest, QuickTimesEachCandidateBrieflyAndOthersAsAsked) {
  const TimingOptions base;
  const TimingOptions quick = TimingFor("quick", base);
  EXPECT_EQ(quick.warmup, 1);
  EXPECT_EQ(quick.min_samples, 3);
  EXPECT_EQ(quick.max_samples, 50);
  EXPECT_DOUBLE_EQ(quick.target_rel_spread, 0.02);
  EXPECT_DOUBLE_EQ(quick.max_ms, 50);
  EXPECT_EQ(quick.flush_l2, base.flush_l2);
  EXPECT_DOUBLE_EQ(quick.abandon_factor, kQuickAbandonFactor);
  for (const char* strategy : {"brute_force", "random", "local", ""}) {
    const TimingOptions same = TimingFor(strategy, base);
    EXPECT_EQ(same.abandon_factor, 0) << strategy;
    EXPECT_EQ(same.warmup, base.warmup) << strategy;
    EXPECT_EQ(same.min_samples, base.min_samples) << strategy;
    EXPECT_DOUBLE_EQ(same.max_ms, base.max_ms) << strategy;
  }
  // Already briefer options (tests) stay as brief.
  TimingOptions brief;
  brief.warmup = 0;
  brief.min_samples = 2;
  brief.max_samples = 3;
  brief.max_ms = 0;
  const TimingOptions q = TimingFor("quick", brief);
  EXPECT_EQ(q.warmup, 0);
  EXPECT_EQ(q.min_samples, 2);
  EXPECT_EQ(q.max_samples, 3);
  EXPECT_DOUBLE_EQ(q.max_ms, 50);
}

}  // namespace
}  // namespace cutune::tuner
