// GPUs the shipped H200 table does not hold, as a table server (or the client library offline)
// sees them. An H100 that describes itself (DeviceSelector's cc and SM count) is answered with
// the H200 model's prediction, labelled SAME_ARCHITECTURE, and launched for its own SM count;
// one that does not is NOT_FOUND, as before (a misspelt model stays an error). And where
// ANSWER_NOW_AND_TUNE's quick sweep starts on such a GPU: another Hopper from the H200's
// portfolio ranked for the shape, another architecture from the family's starters. Before
// store/quick_start.h every GPU but the H200 started from the baseline alone, and on an H100 the
// descent from it ended at 12-31% of cuBLAS on the awkward shapes (bench/results/
// unseen-shapes.md, section 18).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/predict/portfolio.h"
#include "server/service/offline_table.h"
#include "server/store/quick_start.h"
#include "server/store/tables.h"
#include "server/tuner/replay.h"

namespace cutune::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class OtherGpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto table = OfflineTable::Open(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json");
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = *std::move(table);
  }
  std::vector<Params> Start(const store::DeviceModel& device, const Shape& shape) const {
    auto start = table_->QuickStart(device, matmul_, DType::kF32, shape);
    EXPECT_TRUE(start.ok()) << start.status();
    return start.ok() ? *start : std::vector<Params>{};
  }

  const kernels::KernelFamily& matmul_ = *kernels::FindFamily("matmul");
  const store::DeviceModel h200_{"NVIDIA H200", 9, 0, 132, int64_t{141} << 30};
  const store::DeviceModel h100_{"NVIDIA H100 80GB HBM3", 9, 0, 132, int64_t{80} << 30};
  const store::DeviceModel a100_{"NVIDIA A100-SXM4-80GB", 8, 0, 108, int64_t{80} << 30};
  std::unique_ptr<OfflineTable> table_;
};

pb::GetBestConfigRequest Ask(const Shape& shape, const std::string& model, int cc_major = 0,
                             int cc_minor = 0, int sm_count = 0) {
  pb::GetBestConfigRequest request;
  request.mutable_problem()->set_family("matmul");
  for (int64_t d : shape) request.mutable_problem()->add_shape(d);
  request.mutable_device()->set_model(model);
  request.mutable_device()->set_cc_major(cc_major);
  request.mutable_device()->set_cc_minor(cc_minor);
  request.mutable_device()->set_sm_count(sm_count);
  return request;
}

TEST_F(OtherGpusTest, AnH100ThatDescribesItselfGetsTheH200ModelsPrediction) {
  for (const Shape& shape : {Shape{3000, 500, 700}, Shape{2047, 1000, 300}, Shape{100, 7000, 9000},
                             Shape{4096, 4096, 4096}}) {
    auto h200 = table_->Answer(Ask(shape, h200_.name));
    auto h100 = table_->Answer(Ask(shape, h100_.name, 9, 0, 114));  // an H100 PCIe: 114 SMs
    ASSERT_TRUE(h200.ok() && h100.ok()) << h200.status() << " " << h100.status();
    const bool tuned = h200->rung() == pb::GetBestConfigResponse::RUNG_EXACT;
    EXPECT_EQ(h200->rung(), tuned ? pb::GetBestConfigResponse::RUNG_EXACT
                                   : pb::GetBestConfigResponse::RUNG_PREDICTED)
        << FormatShape(shape);
    // The H200's own answer, labelled as the H200's: its winner where it tuned the shape, else
    // its prediction model's pick with its figures.
    EXPECT_EQ(h100->rung(), pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE);
    EXPECT_EQ(h100->device_model(), h200_.name);
    EXPECT_EQ(Params(h100->params().begin(), h100->params().end()),
              Params(h200->params().begin(), h200->params().end()))
        << FormatShape(shape);
    EXPECT_DOUBLE_EQ(h100->expected_slowdown(), h200->expected_slowdown());
    EXPECT_DOUBLE_EQ(h100->predicted_time_us(), h200->predicted_time_us());
    if (tuned) {
      EXPECT_EQ(h100->shape_distance(), 0);
    } else {
      EXPECT_GE(h100->expected_slowdown(), 1.0) << FormatShape(shape);
    }
    // Launched for the asking GPU: its SM count sizes a persistent kernel's grid.
    Params params(h100->params().begin(), h100->params().end());
    const LaunchGeometry geometry = matmul_.Geometry(params, shape, 114);
    EXPECT_THAT(h100->geometry().grid(), ElementsAre(geometry.grid[0], geometry.grid[1],
                                                     geometry.grid[2]))
        << FormatShape(shape) << " " << FormatParams(params);
  }
  // 8192^3's pick is stream-K (a grid of blocks per SM), so the SM count shows in its grid;
  // without one it is the H200's (132), not one SM's.
  auto big = table_->Answer(Ask({8192, 8192, 8192}, h100_.name, 9, 0, 114));
  auto unsized = table_->Answer(Ask({8192, 8192, 8192}, h100_.name, 9, 0, 0));
  ASSERT_TRUE(big.ok() && unsized.ok());
  ASSERT_GT(big->params().at("sk"), 0) << "pick a shape whose answer is stream-K";
  EXPECT_EQ(big->geometry().grid(0) % 114, 0);
  EXPECT_EQ(unsized->geometry().grid(0), big->geometry().grid(0) / 114 * 132);
}

TEST_F(OtherGpusTest, AModelNoTableHoldsWithoutADescriptionIsNotFound) {
  auto answer = table_->Answer(Ask({3000, 500, 700}, h100_.name));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound) << answer.status();
  EXPECT_THAT(std::string(answer.status().message()), HasSubstr("NVIDIA H200"));
  // Another architecture, described: nothing of it is tuned, so the family default.
  auto a100 = table_->Answer(Ask({3000, 500, 700}, a100_.name, 8, 0, 108));
  ASSERT_TRUE(a100.ok()) << a100.status();
  EXPECT_EQ(a100->rung(), pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT);
}

TEST_F(OtherGpusTest, ADescriptionOutOfRangeIsInvalidArgumentNamingTheField) {
  for (auto [major, minor, sms, field] :
       {std::tuple{100, 0, 132, "cc_major"}, std::tuple{-1, 0, 132, "cc_major"},
        std::tuple{9, 100, 132, "cc_minor"}, std::tuple{9, 0, -5, "sm_count"},
        std::tuple{9, 0, 100001, "sm_count"}}) {
    auto answer = table_->Answer(Ask({64, 64, 64}, h100_.name, major, minor, sms));
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_THAT(std::string(answer.status().message()), HasSubstr(field));
  }
}

TEST_F(OtherGpusTest, AnotherHopperStartsFromTheH200sPortfolio) {
  for (const Shape& shape : {Shape{2048, 512, 8192}, Shape{127, 8192, 4096}, Shape{16, 16, 16}}) {
    const std::vector<Params> h100 = Start(h100_, shape);
    EXPECT_EQ(h100, Start(h200_, shape)) << FormatShape(shape);
    // The portfolio ranked for the shape, the nearest winners after it, then the baseline.
    ASSERT_EQ(h100.size(), store::kMaxQuickStart + 1) << FormatShape(shape);
    EXPECT_EQ(h100.back(), matmul_.baseline());
  }
  // Ranked for the shape: a skinny K-heavy shape and a tiny one lead with different members.
  EXPECT_NE(Start(h100_, {2048, 512, 8192}).front(), Start(h100_, {16, 16, 16}).front());
}

using StartFn = std::function<std::vector<Params>(const Shape&)>;

// Quick replayed on the matmul recordings of bench/data/`dir` (full sweeps: every candidate's
// time), started from `start`, lands within `bound` of each recording's best in under an eighth
// of the evaluations. Returns how many recordings it replayed.
[[nodiscard]] int ExpectQuickFindsEachRecordedBest(
    const kernels::KernelFamily& matmul, const std::string& dir, const StartFn& start,
    const std::function<double(const Shape&)>& bound) {
  const kernels::Space& space = matmul.default_space();
  const tuner::ValidCandidates valid = tuner::EnumerateValid(space);
  int recordings = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CUTUNE_BENCH_DATA_DIR) + "/" + dir)) {
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() != ".csv" || !stem.starts_with("matmul-")) continue;
    ++recordings;
    auto recorded = tuner::LoadRecordedSweep(entry.path().string(), &space);
    EXPECT_TRUE(recorded.ok()) << recorded.status();
    auto shape = ParseShape(stem.substr(std::string("matmul-").size()));
    EXPECT_TRUE(shape.ok()) << stem;
    if (!recorded.ok() || !shape.ok()) continue;
    const tuner::ValidCandidates held = tuner::RecordedSubset(valid, *recorded);
    auto run = tuner::Replay(space, held, *recorded, "quick", 1, 0, 32, start(*shape));
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) continue;
    EXPECT_TRUE(run->best_us.has_value()) << stem;
    if (!run->best_us) continue;
    EXPECT_LE(*run->best_us / *recorded->best_us, bound(*shape)) << stem;
    EXPECT_LE(run->evaluations, static_cast<int64_t>(held.candidates.size() / 8)) << stem;
  }
  return recordings;
}

// Quick replayed on an H100's recorded full sweeps (bench/data/h100: every candidate of space v9
// measured at 13 shapes outside the grid, 2026-12-05), started from `start`, lands within 2% of
// each recording's best (5% in the class whose C stores changed since) in under an eighth of the
// evaluations. The recordings are of source c2108cfd. In the class whose C rows are misaligned
// (N % 4) source b7c38814 stores C through shared memory, up to 10% faster for the wide tiles the
// H200's start now leads with and unchanged for others, so the recorded landscape misranks them:
// 6000x250x6000 lands 4.4% from its recorded best (within 2% from v9's table).
void ExpectQuickFindsTheH100sRecordedBest(const kernels::KernelFamily& matmul,
                                          const StartFn& start) {
  EXPECT_GE(ExpectQuickFindsEachRecordedBest(
                matmul, "h100", start,
                [](const Shape& shape) { return shape[1] % 4 != 0 ? 1.05 : 1.02; }),
            13);
}

// As a daemon holding only the shipped H200 table starts an H100. From the baseline alone, as
// before the same-architecture start, the descent stopped 110-488% from the best.
TEST_F(OtherGpusTest, QuickFromTheH200sStartFindsTheH100sRecordedBest) {
  ExpectQuickFindsTheH100sRecordedBest(matmul_,
                                       [&](const Shape& shape) { return Start(h100_, shape); });
}

// An H100 asking a daemon that holds the shipped tables (its own among them), replayed on its
// full sweeps of three shapes outside the grid (bench/data/h100-v10: space v10, the held start)
// whose best is in none of the first 32 places of the start: 3000x500x700's (a 64x128 tile split
// 2 ways) wins one grid shape, 1200^3, and no portfolio holds it; 6000x250x6000's and
// 96x12288x4096's are reached from nearby winners. With only the portfolio's 32 places, quick
// stopped 5.6%, 4.4% and 3.7% behind them; the nearest shapes' winners, in places of their own
// after it, bring each (bench/results/unseen-shapes.md, section 37).
TEST(OfflineTableDirectoryTest, QuickFromTheShippedTablesReachesTheBestsNoPortfolioHolds) {
  auto all = OfflineTable::Open(CUTUNE_TABLES_DIR);
  ASSERT_TRUE(all.ok()) << all.status();
  const kernels::KernelFamily& matmul = *kernels::FindFamily("matmul");
  const store::DeviceModel h100{"NVIDIA H100 80GB HBM3", 9, 0, 132, int64_t{80} << 30};
  auto start = [&](const Shape& shape) {
    auto s = (*all)->QuickStart(h100, matmul, DType::kF32, shape);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : std::vector<Params>{};
  };
  EXPECT_EQ(ExpectQuickFindsEachRecordedBest(matmul, "h100-v10", start,
                                             [](const Shape&) { return 1.01; }),
            3);
  // The premise: no recording's best is among the first 32 (what the start held before).
  for (const char* name : {"3000x500x700", "6000x250x6000", "96x12288x4096"}) {
    auto recorded = tuner::LoadRecordedSweep(
        std::string(CUTUNE_BENCH_DATA_DIR) + "/h100-v10/matmul-" + name + ".csv",
        &matmul.default_space());
    ASSERT_TRUE(recorded.ok()) << recorded.status();
    std::string best;
    for (const auto& [params, us] : recorded->times) {
      if (us && us == recorded->best_us) best = params;
    }
    ASSERT_FALSE(best.empty()) << name << ": its best is one of its rows";
    const std::vector<Params> first = start(*ParseShape(name));
    for (size_t i = 0; i < std::min<size_t>(first.size(), 32); ++i) {
      EXPECT_NE(FormatParams(first[i]), best) << name << " at " << i;
    }
  }
}

// A GPU of another architecture starts from the family's starters (then the baseline): the same
// recordings stand in for a GPU no table holds. One starter (128x32 split 8) is a candidate of
// space v10 only, so the v9 recordings lack it and the replay skips it. From the baseline alone it
// stopped 2-6x slower than the best (bench/results/unseen-shapes.md, section 35).
TEST_F(OtherGpusTest, AnotherArchitectureStartsFromTheFamilysStarters) {
  std::vector<Params> expected = matmul_.starters();
  expected.push_back(matmul_.baseline());
  EXPECT_EQ(Start(a100_, {2048, 512, 8192}), expected);
  ExpectQuickFindsTheH100sRecordedBest(matmul_,
                                       [&](const Shape& shape) { return Start(a100_, shape); });
}

// tables/ holds one file per GPU model. Opened as a directory it answers an H100 as a daemon
// with `--tables tables/` would: its transposes from its own table (the H200's file alone answers
// them from the H200's model), and its matmuls from a prediction model, whichever holds them.
TEST(OfflineTableDirectoryTest, AnswersAsADaemonHoldingEveryTableInIt) {
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  pb::GetBestConfigRequest transpose;
  transpose.mutable_problem()->set_family("transpose");
  transpose.mutable_problem()->add_shape(8191);
  transpose.mutable_problem()->add_shape(4097);
  transpose.mutable_device()->set_model(h100);
  auto all = OfflineTable::Open(CUTUNE_TABLES_DIR);
  ASSERT_TRUE(all.ok()) << all.status();
  auto t = (*all)->Answer(transpose);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->rung(), pb::GetBestConfigResponse::RUNG_EXACT);
  auto m = (*all)->Answer(Ask({3000, 500, 700}, h100));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NE(m->rung(), pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT);

  auto h200_only = OfflineTable::Open(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json");
  ASSERT_TRUE(h200_only.ok()) << h200_only.status();
  transpose.mutable_device()->set_cc_major(9);
  transpose.mutable_device()->set_sm_count(132);
  auto t_alone = (*h200_only)->Answer(transpose);
  ASSERT_TRUE(t_alone.ok()) << t_alone.status();
  EXPECT_EQ(t_alone->rung(), pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE);
}

// A directory without tables, or with one that does not import, is refused naming it.
TEST(OfflineTableDirectoryTest, AnEmptyDirectoryOrABadTableInItIsRefusedByName) {
  std::string pattern = (std::filesystem::temp_directory_path() / "offline-dir-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  auto empty = OfflineTable::Open(dir.string());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kNotFound) << empty.status();
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr(dir.string()));
  std::filesystem::copy_file(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json",
                             dir / "a-good.json");
  std::ofstream(dir / "b-bad.json") << "{\"format\": \"cutune-table\", \"version\": 99}";
  std::ofstream(dir / "notes.txt") << "not a table";
  auto bad = OfflineTable::Open(dir.string());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("b-bad.json"));
  std::filesystem::remove(dir / "b-bad.json");
  auto good = OfflineTable::Open(dir.string());
  EXPECT_TRUE(good.ok()) << good.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cutune::service
