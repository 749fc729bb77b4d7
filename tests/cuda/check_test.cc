#include "server/cuda/check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::cuda {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A driver table of fakes: no GPU needed. The memset stands for the output poisoning; it answers
// whatever the test sets and records what it was asked.
CUresult g_answer = CUDA_SUCCESS;
CUdeviceptr g_ptr = 0;
unsigned g_value = 0;
size_t g_count = 0;

CUresult FakeMemset(CUdeviceptr ptr, unsigned value, size_t count, CUstream) {
  g_ptr = ptr;
  g_value = value;
  g_count = count;
  return g_answer;
}

// Names two errors as the driver does; anything else is unknown to it: CUDA_ERROR_INVALID_VALUE
// and a null string.
CUresult FakeName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
      return CUDA_SUCCESS;
    default:
      *name = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult FakeString(CUresult error, const char** text) {
  switch (error) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *text = "an illegal memory access was encountered";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      *text = "too many resources requested for launch";
      return CUDA_SUCCESS;
    default:
      *text = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// A lookup that fails but leaves a pointer behind: it must not be believed.
CUresult FailingLookupWithGarbage(CUresult, const char** out) {
  *out = "GARBAGE";
  return CUDA_ERROR_INVALID_VALUE;
}

DriverApi FakeApi() {
  DriverApi api;
  api.cuMemsetD32Async = FakeMemset;
  api.cuGetErrorName = FakeName;
  api.cuGetErrorString = FakeString;
  return api;
}

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override { g_answer = CUDA_SUCCESS; }
};

TEST_F(CheckTest, SuccessPassesThroughAndMakesTheCall) {
  const DriverApi api = FakeApi();
  const CUdeviceptr out = 0x1000;
  const size_t n = 77;
  absl::Status s = CUTUNE_DRIVER_CALL(api, cuMemsetD32Async, out, 0xFFFFFFFFu, n, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(ResultOf(s), CUDA_SUCCESS);
  EXPECT_EQ(g_ptr, out);
  EXPECT_EQ(g_value, 0xFFFFFFFFu);
  EXPECT_EQ(g_count, n);
}

struct Row {
  CUresult result;
  const char* name;  // what the message must carry for the error itself
  const char* text;
};

TEST_F(CheckTest, AFailureNamesTheCallItsPlaceAndTheError) {
  const Row rows[] = {
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS (700)",
       ": an illegal memory access was encountered"},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)",
       ": too many resources requested for launch"},
      // Unknown to the (fake) driver: the lookups fail, the number stays. (A number within
      // CUresult's range of values: loading one outside it is undefined behaviour.)
      {static_cast<CUresult>(555), "CUDA error (555)", ""},
  };
  const DriverApi api = FakeApi();
  const CUdeviceptr out = 0x1000;
  const size_t n = 77;
  for (const Row& row : rows) {
    g_answer = row.result;
    absl::Status s = CUTUNE_DRIVER_CALL(api, cuMemsetD32Async, out, 0xFFFFFFFFu, n, nullptr);
    const int line = __LINE__ - 1;
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << row.result;
    EXPECT_THAT(std::string(s.message()),
                AllOf(HasSubstr("cuMemsetD32Async(out, 0xFFFFFFFFu, n, nullptr) failed"),
                      HasSubstr(absl::StrCat("check_test.cc:", line, ":")), HasSubstr(row.name),
                      HasSubstr(row.text)))
        << row.result;
    EXPECT_EQ(ResultOf(s), row.result) << "the CUresult stays attached for classification";
  }
}

TEST_F(CheckTest, FailedNameLookupsStillGiveTheNumber) {
  DriverApi garbage = FakeApi();
  garbage.cuGetErrorName = FailingLookupWithGarbage;
  garbage.cuGetErrorString = FailingLookupWithGarbage;
  DriverApi missing = FakeApi();  // a table without the lookups at all
  missing.cuGetErrorName = nullptr;
  missing.cuGetErrorString = nullptr;
  for (const DriverApi* api : {&garbage, &missing}) {
    absl::Status s = CheckResult(CUDA_ERROR_ILLEGAL_ADDRESS, "cuEventRecord(start, stream)",
                                 "server/worker/executor.cc", 42, api);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_EQ(s.message(),
              "cuEventRecord(start, stream) failed at executor.cc:42: CUDA error (700)");
    EXPECT_THAT(std::string(s.message()), Not(HasSubstr("GARBAGE")));
    EXPECT_EQ(ResultOf(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  }
}

TEST_F(CheckTest, NoDriverTableGivesTheNumber) {
  absl::Status s = CheckResult(CUDA_ERROR_LAUNCH_FAILED, "cuStreamSynchronize(stream)",
                               "/abs/path/executor.cc", 7, nullptr);
  EXPECT_EQ(s.message(), "cuStreamSynchronize(stream) failed at executor.cc:7: CUDA error (719)");
  EXPECT_EQ(ResultOf(s), CUDA_ERROR_LAUNCH_FAILED);
}

TEST_F(CheckTest, DescribeErrorUsesTheTable) {
  const DriverApi api = FakeApi();
  EXPECT_EQ(DescribeError(CUDA_ERROR_ILLEGAL_ADDRESS, &api),
            "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered");
  EXPECT_EQ(DescribeError(CUDA_ERROR_ILLEGAL_ADDRESS, nullptr), "CUDA error (700)");
}

TEST_F(CheckTest, ResultOfAStatusFromElsewhereIsUnknown) {
  EXPECT_EQ(ResultOf(absl::OkStatus()), CUDA_SUCCESS);
  EXPECT_EQ(ResultOf(absl::FailedPreconditionError("no cubin")), CUDA_ERROR_UNKNOWN);
}

TEST_F(CheckTest, AnnotateKeepsCodeAndResult) {
  absl::Status s = Annotate(
      CheckResult(CUDA_ERROR_ILLEGAL_ADDRESS, "cuLaunchKernel(f)", "x.cc", 1, nullptr), "verify");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "verify: cuLaunchKernel(f) failed at x.cc:1: CUDA error (700)");
  EXPECT_EQ(ResultOf(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_TRUE(Annotate(absl::OkStatus(), "verify").ok());
}

TEST_F(CheckTest, TheCleanupFormLogsAndGoesOn) {
  const DriverApi api = FakeApi();
  g_answer = CUDA_ERROR_ILLEGAL_ADDRESS;
  ::testing::internal::CaptureStderr();
  CUTUNE_DRIVER_CALL_NOEXCEPT(api, cuMemsetD32Async, 0, 0, 0, nullptr);
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(logged, AllOf(HasSubstr("cuMemsetD32Async(0, 0, 0, nullptr) failed"),
                            HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
                            HasSubstr("ignored during cleanup")));
  g_answer = CUDA_SUCCESS;
  ::testing::internal::CaptureStderr();
  CUTUNE_DRIVER_CALL_NOEXCEPT(api, cuMemsetD32Async, 0, 0, 0, nullptr);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace cutune::cuda
