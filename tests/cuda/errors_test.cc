#include "server/cuda/errors.h"

#include "gtest/gtest.h"

namespace cutune::cuda {
namespace {

struct Row {
  CUresult result;
  ErrorClass expected;
};

TEST(ClassifyTest, Table) {
  const Row rows[] = {
      {CUDA_SUCCESS, ErrorClass::kNone},
      {CUDA_ERROR_ILLEGAL_ADDRESS, ErrorClass::kContextFatal},
      {CUDA_ERROR_LAUNCH_TIMEOUT, ErrorClass::kContextFatal},
      {CUDA_ERROR_ASSERT, ErrorClass::kContextFatal},
      {CUDA_ERROR_HARDWARE_STACK_ERROR, ErrorClass::kContextFatal},
      {CUDA_ERROR_ILLEGAL_INSTRUCTION, ErrorClass::kContextFatal},
      {CUDA_ERROR_MISALIGNED_ADDRESS, ErrorClass::kContextFatal},
      {CUDA_ERROR_INVALID_ADDRESS_SPACE, ErrorClass::kContextFatal},
      {CUDA_ERROR_INVALID_PC, ErrorClass::kContextFatal},
      {CUDA_ERROR_LAUNCH_FAILED, ErrorClass::kContextFatal},
      {CUDA_ERROR_TENSOR_MEMORY_LEAK, ErrorClass::kContextFatal},
      {CUDA_ERROR_MPS_CLIENT_TERMINATED, ErrorClass::kContextFatal},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, ErrorClass::kCandidateReject},
      {CUDA_ERROR_NO_BINARY_FOR_GPU, ErrorClass::kCandidateReject},
      {CUDA_ERROR_INVALID_VALUE, ErrorClass::kOther},
      {CUDA_ERROR_OUT_OF_MEMORY, ErrorClass::kOther},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(Classify(row.result), row.expected) << "CUresult " << row.result;
  }
}

TEST(ClassifyTest, ACandidateLaunchIsRefusedInMoreWays) {
  const Row rows[] = {
      {CUDA_SUCCESS, ErrorClass::kNone},
      // Block, grid or dynamic shared memory beyond the device's limits; a stack it cannot back.
      {CUDA_ERROR_INVALID_VALUE, ErrorClass::kCandidateReject},
      {CUDA_ERROR_OUT_OF_MEMORY, ErrorClass::kCandidateReject},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, ErrorClass::kCandidateReject},
      // Sticky errors stay fatal wherever they surface.
      {CUDA_ERROR_ILLEGAL_ADDRESS, ErrorClass::kContextFatal},
      {CUDA_ERROR_LAUNCH_FAILED, ErrorClass::kContextFatal},
      // The worker's own mistakes are not the candidate's.
      {CUDA_ERROR_INVALID_HANDLE, ErrorClass::kOther},
      {CUDA_ERROR_INVALID_CONTEXT, ErrorClass::kOther},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(Classify(row.result, CallSite::kCandidateLaunch), row.expected)
        << "CUresult " << row.result;
  }
}

TEST(ClassifyTest, OutcomeFollowsClass) {
  EXPECT_EQ(OutcomeForError(CUDA_ERROR_ILLEGAL_ADDRESS), Outcome::kFault);
  EXPECT_EQ(OutcomeForError(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), Outcome::kOutOfResources);
  EXPECT_EQ(OutcomeForError(CUDA_SUCCESS), std::nullopt);
  EXPECT_EQ(OutcomeForError(CUDA_ERROR_INVALID_VALUE), std::nullopt);
  EXPECT_EQ(OutcomeForError(CUDA_ERROR_INVALID_VALUE, CallSite::kCandidateLaunch),
            Outcome::kOutOfResources);
  EXPECT_EQ(OutcomeForError(CUDA_ERROR_ILLEGAL_ADDRESS, CallSite::kCandidateLaunch),
            Outcome::kFault);
}

}  // namespace
}  // namespace cutune::cuda
