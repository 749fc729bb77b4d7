// The batch sweep's parts that make no call (client/cli/batch.h) and the progress line
// (client/cli/render.h): the shape list's spelling and errors, the summary, the line's width.
#include "client/cli/batch.h"

#include "client/cli/json.h"
#include "client/cli/render.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/json_dialect.h"

namespace cutune::testing {
namespace {

namespace pb = ::cutune::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::Status ErrorOf(std::string_view text, const kernels::KernelFamily* family = nullptr) {
  return cli::ParseShapeList(text, "ci.txt", family).status();
}

TEST(BatchTest, ShapeListSkipsCommentsAndBlankLinesAndKeepsLineNumbers) {
  auto shapes = cli::ParseShapeList("# grid\n\n4096x4096x4096\n  127x8192x4096  # skinny\n\t\n",
                                    "-", &kernels::MatmulFamily());
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ((*shapes)[0].shape, (Shape{4096, 4096, 4096}));
  EXPECT_EQ((*shapes)[0].line, 3);
  EXPECT_EQ((*shapes)[1].shape, (Shape{127, 8192, 4096}));
  EXPECT_EQ((*shapes)[1].line, 4);
}

TEST(BatchTest, EveryBadLineIsNamedByFileAndLine) {
  EXPECT_EQ(ErrorOf("64x64\n64x\n").message(),
            "ci.txt:2: bad shape '64x': expected positive integers separated by 'x', e.g. 4096x4096");
  EXPECT_EQ(ErrorOf("64x64\n0x64\n").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ErrorOf("64x64 64x64\n").message()), StartsWith("ci.txt:1: bad shape"));
  EXPECT_THAT(std::string(ErrorOf("64x64\n64x64x64\n", &kernels::TransposeFamily()).message()),
              StartsWith("ci.txt:2: transpose 64x64x64: "));
  EXPECT_EQ(ErrorOf("64x64\n128x64\n64x64 # again\n").message(),
            "ci.txt:3: 64x64 is listed twice (first on line 1)");
  EXPECT_EQ(ErrorOf("# nothing\n\n").message(), "ci.txt: no shape listed");
  // Without the family here, the dimensions are the daemon's to check.
  EXPECT_TRUE(cli::ParseShapeList("64x64x64\n", "ci.txt", nullptr).ok());
}

pb::BatchSweepReport ThreeShapes() {
  pb::BatchSweepReport report;
  report.set_family("transpose");
  report.set_shapes_file("ci.txt");
  const int64_t dims[3][2] = {{256, 256}, {512, 256}, {1024, 512}};
  for (int i = 0; i < 3; ++i) {
    pb::BatchSweepShape* shape = report.add_shapes();
    shape->mutable_problem()->set_family("transpose");
    for (int64_t d : dims[i]) shape->mutable_problem()->add_shape(d);
    shape->set_line(i + 2);
    shape->set_state(pb::BatchSweepShape::STATE_NOT_STARTED);
  }
  pb::JobProgress& done = *report.mutable_shapes(0)->mutable_sweep()->mutable_job();
  report.mutable_shapes(0)->set_state(pb::BatchSweepShape::STATE_SUCCEEDED);
  done.set_done(4);
  done.set_resumed(4);
  done.mutable_best()->set_outcome(pb::OUTCOME_OK);
  (*done.mutable_best()->mutable_params())["tile"] = 32;
  done.mutable_best()->set_time_us(11.5);
  done.mutable_best()->set_percent_of_reference(93.25);
  report.mutable_shapes(1)->set_state(pb::BatchSweepShape::STATE_FAILED);
  report.mutable_shapes(1)->set_error("ABORTED: sweep job job-2 failed: INTERNAL: boom");
  report.mutable_shapes(1)->mutable_sweep()->mutable_job()->set_done(1);
  return report;
}

TEST(BatchTest, SummaryHasARowPerShapeTheFailuresAndTheCounts) {
  pb::BatchSweepReport report = ThreeShapes();
  cli::CountShapes(report);
  EXPECT_EQ(report.succeeded(), 1);
  EXPECT_EQ(report.failed(), 1);
  EXPECT_EQ(report.not_finished(), 1);
  EXPECT_EQ(cli::BatchSummary(report),
            "shape     state        winner   time us  % of ref  candidates  earlier  seconds\n"
            "--------  -----------  -------  -------  --------  ----------  -------  -------\n"
            "256x256   done before  tile=32    11.50      93.2           4        4      0.0\n"
            "512x256   failed       -                                    1        0      0.0\n"
            "1024x512  not started  -                                                       \n"
            "failed: 512x256 (line 3): ABORTED: sweep job job-2 failed: INTERNAL: boom\n"
            "transpose: 3 shapes: 1 succeeded, 1 failed, 1 not finished\n");
  EXPECT_EQ(cli::BatchPrefix(report, 2), "shape 3/3 (1 done, 1 failed) 1024x512");
  // The report is one more message of the one JSON dialect.
  absl::StatusOr<std::string> json = cli::ToJson(report);
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(InJsonDialect<pb::BatchSweepReport>(*json));
}

TEST(BatchTest, TheProgressLineFitsTheTerminal) {
  const std::string line = cli::ProgressLine(40, 120, "ETA 6s  ok 36", "shape 2/3 (1 done) 512x256", 0);
  EXPECT_EQ(line,
            "shape 2/3 (1 done) 512x256 [##########....................] 40/120  33.3%  ETA 6s  ok 36");
  EXPECT_EQ(cli::ProgressLine(40, 120, "ETA 6s", "", 0),
            "[##########....................] 40/120  33.3%  ETA 6s");
  // One column short of the width: a full last column would wrap on some terminals.
  EXPECT_EQ(cli::ProgressLine(40, 120, "ETA 6s  ok 36", "shape 2/3", 40).size(), 39u);
  EXPECT_EQ(cli::ProgressLine(0, 0, "starting", "", 0),
            "[..............................] 0/0   0.0%  starting");
}

}  // namespace
}  // namespace cutune::testing
