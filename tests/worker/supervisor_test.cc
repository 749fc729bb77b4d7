#include "server/worker/supervisor.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::worker {
namespace {

using ::testing::HasSubstr;

std::string Beside(const std::string& name) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / name).string();
}

// A script that runs the fake worker with extra arguments.
std::string Script(const std::string& body) {
  static int counter = 0;
  auto path = std::filesystem::temp_directory_path() /
              ("cutune-fake-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

wpb::Run PlainRun() {
  wpb::Run run;
  run.mutable_candidate()->set_key("k");
  return run;
}

TEST(SupervisorTest, MissingExecutableIsAPrecondition) {
  WorkerProcess worker({.executable = "/nonexistent/cutune-worker"});
  auto info = worker.Start();
  EXPECT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(info.status().message()), HasSubstr("cannot start the GPU worker"));
}

TEST(SupervisorTest, WorkerThatExplainsNoGpuIsFinalNotQuarantine) {
  WorkerProcess worker({.executable = Script("exec " + Beside("fake-worker") + " \"$@\" --fail-start")});
  for (int i = 0; i < 4; ++i) {
    auto info = worker.Start();
    EXPECT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(info.status().message()), HasSubstr("no CUDA driver"));
  }
  EXPECT_FALSE(worker.quarantined());
}

TEST(SupervisorTest, RepeatedStartCrashesQuarantine) {
  WorkerProcess worker({.executable = "/bin/false", .max_start_failures = 3});
  auto info = worker.Start();
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(info.status().message()), HasSubstr("quarantined"));
  EXPECT_TRUE(worker.quarantined());
  EXPECT_EQ(worker.Start().status().code(), absl::StatusCode::kUnavailable);
}

TEST(SupervisorTest, AWorkerThatSaysItIsExitingIsReplacedBeforeTheNextRun) {
  const auto poison = std::filesystem::temp_directory_path() /
                      ("cutune-poison-" + std::to_string(getpid()));
  std::ofstream(poison.string()) << "1";
  setenv("FAKE_WORKER_POISON_FILE", poison.c_str(), 1);
  WorkerProcess worker({.executable = Beside("fake-worker")});
  ASSERT_TRUE(worker.Prepare({}).ok());
  auto failed = worker.Run(PlainRun(), std::chrono::seconds(5));
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_EQ(worker.restarts(), 1);
  // Before the fix the next candidate met the dead worker and was recorded as a fault.
  auto next = worker.Run(PlainRun(), std::chrono::seconds(5));
  unsetenv("FAKE_WORKER_POISON_FILE");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->outcome(), wpb::OUTCOME_OK);
  EXPECT_EQ(worker.restarts(), 1);
}

TEST(SupervisorTest, RunBeforePrepareIsAPrecondition) {
  WorkerProcess worker({.executable = Beside("fake-worker")});
  ASSERT_TRUE(worker.Start().ok());
  EXPECT_EQ(worker.Run(PlainRun(), std::chrono::seconds(5)).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SupervisorTest, CrashIsAFaultAndTheNextRunGetsAFreshPreparedWorker) {
  WorkerProcess worker({.executable = Beside("fake-worker")});
  auto info = worker.Start();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->name(), "Fake GPU");
  ASSERT_TRUE(worker.Prepare(wpb::Prepare()).ok());

  wpb::Run crash = PlainRun();
  crash.set_debug_crash(true);
  auto crashed = worker.Run(crash, std::chrono::seconds(5));
  ASSERT_TRUE(crashed.ok()) << crashed.status();
  EXPECT_EQ(crashed->outcome(), wpb::OUTCOME_FAULT);
  EXPECT_EQ(worker.restarts(), 1);

  // The replacement must have been prepared again, or the fake refuses to run.
  auto next = worker.Run(PlainRun(), std::chrono::seconds(5));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->outcome(), wpb::OUTCOME_OK);
}

TEST(SupervisorTest, HangIsATimeoutWithinTheLimit) {
  WorkerProcess worker({.executable = Beside("fake-worker")});
  ASSERT_TRUE(worker.Prepare(wpb::Prepare()).ok());
  wpb::Run hang = PlainRun();
  hang.set_debug_hang(true);
  auto began = std::chrono::steady_clock::now();
  auto hung = worker.Run(hang, std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - began;
  ASSERT_TRUE(hung.ok()) << hung.status();
  EXPECT_EQ(hung->outcome(), wpb::OUTCOME_TIMEOUT);
  EXPECT_THAT(hung->detail(), HasSubstr("killed"));
  EXPECT_LT(took, std::chrono::seconds(5));
  auto next = worker.Run(PlainRun(), std::chrono::seconds(5));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->outcome(), wpb::OUTCOME_OK);
}

TEST(SupervisorTest, RealWorkerWithoutDriverSaysSo) {
  // On a GPU host this starts for real; on CI (no driver) it must say why, not crash.
  WorkerProcess worker({.executable = Beside("cutune-worker")});
  auto info = worker.Start();
  if (!info.ok()) {
    EXPECT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(info.status().message()), HasSubstr("CUDA"));
  } else {
    EXPECT_FALSE(info->name().empty());
  }
}

}  // namespace
}  // namespace cutune::worker
