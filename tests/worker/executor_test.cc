// What a failed step of a run ends in. The executor itself needs a GPU (tuner_gpu_test); the rule
// that turns a failed driver call into the run's end does not.
#include "server/worker/executor.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/cuda/check.h"

namespace cutune::worker {
namespace {

using ::testing::HasSubstr;

absl::Status DriverFailure(CUresult result) {
  // Without a table the message names the number only; the CUresult is what counts here.
  return cuda::CheckResult(result, "cuMemsetD32Async(out, 0xFFFFFFFFu, n, stream)", "executor.cc",
                           1, nullptr);
}

wpb::RunResult Partial() {
  wpb::RunResult partial;
  partial.set_registers(40);
  partial.set_load_ms(1.5);
  return partial;
}

TEST(ClassifyRunFailureTest, AStickyErrorIsAFaultAndPoisonsTheContext) {
  RunFailure f = ClassifyRunFailure(Partial(), DriverFailure(CUDA_ERROR_ILLEGAL_ADDRESS),
                                    "poisoning the output");
  ASSERT_TRUE(f.result.ok()) << f.result.status();
  EXPECT_EQ(f.result->outcome(), wpb::OUTCOME_FAULT);
  EXPECT_THAT(f.result->detail(), HasSubstr("poisoning the output: cuMemsetD32Async("));
  EXPECT_THAT(f.result->detail(), HasSubstr("(700)"));
  EXPECT_EQ(f.result->registers(), 40) << "what the driver said about the function is kept";
  EXPECT_TRUE(f.poisons_context);
}

TEST(ClassifyRunFailureTest, AFailedPoisonThatIsNotStickyIsTheWorkersError) {
  // The failure issue 13 is about: never an outcome (and never "ok" by comparing stale output).
  RunFailure f = ClassifyRunFailure(Partial(), DriverFailure(CUDA_ERROR_INVALID_VALUE),
                                    "poisoning the output");
  ASSERT_FALSE(f.result.ok());
  EXPECT_EQ(f.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(f.result.status().message()),
              HasSubstr("poisoning the output: cuMemsetD32Async(out, 0xFFFFFFFFu, n, stream) "
                        "failed at executor.cc:1: CUDA error (1)"));
  EXPECT_FALSE(f.poisons_context);
}

TEST(ClassifyRunFailureTest, ARefusedLaunchIsOutOfResources) {
  for (CUresult refused : {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_INVALID_VALUE}) {
    RunFailure f = ClassifyRunFailure(Partial(), DriverFailure(refused), "launch",
                                      cuda::CallSite::kCandidateLaunch);
    ASSERT_TRUE(f.result.ok()) << refused << ": " << f.result.status();
    EXPECT_EQ(f.result->outcome(), wpb::OUTCOME_OUT_OF_RESOURCES) << refused;
    EXPECT_THAT(f.result->detail(), HasSubstr("launch: ")) << refused;
    EXPECT_FALSE(f.poisons_context) << refused;
  }
}

TEST(ClassifyRunFailureTest, Error701IsOutOfResourcesAnywhere) {
  RunFailure f =
      ClassifyRunFailure(Partial(), DriverFailure(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), "time");
  ASSERT_TRUE(f.result.ok());
  EXPECT_EQ(f.result->outcome(), wpb::OUTCOME_OUT_OF_RESOURCES);
}

TEST(ClassifyRunFailureTest, AStatusFromOutsideTheDriverKeepsItsCode) {
  RunFailure f = ClassifyRunFailure(
      {}, absl::FailedPreconditionError("worker does not hold this candidate's cubin"), "load");
  ASSERT_FALSE(f.result.ok());
  EXPECT_EQ(f.result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.result.status().message(), "load: worker does not hold this candidate's cubin");
  EXPECT_FALSE(f.poisons_context);
}

}  // namespace
}  // namespace cutune::worker
