#include "server/profile/process.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::profile {
namespace {

using ::testing::HasSubstr;

TEST(RunProcessTest, CapturesStdoutAndStderrAndTheExitCode) {
  auto r = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; echo \"$CUTUNE_X\"; exit 3"},
                      {.timeout = std::chrono::seconds(10), .env = {"CUTUNE_X=given"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_THAT(r->output, HasSubstr("out\n"));
  EXPECT_THAT(r->output, HasSubstr("err\n"));
  EXPECT_THAT(r->output, HasSubstr("given\n"));
  EXPECT_FALSE(r->timed_out);
}

TEST(RunProcessTest, ALimitKillsTheCommandAndItsChildren) {
  const auto began = std::chrono::steady_clock::now();
  ProcessOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto r = RunProcess({"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
}

TEST(RunProcessTest, CancellationStopsIt) {
  std::atomic<bool> cancel{true};
  ProcessOptions options;
  options.cancel = &cancel;
  auto r = RunProcess({"/bin/sleep", "30"}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->cancelled);
}

TEST(RunProcessTest, AMissingProgramIsFailedPrecondition) {
  auto r = RunProcess({"/nonexistent/ncu", "--version"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot start '/nonexistent/ncu'"));
}

}  // namespace
}  // namespace cutune::profile
