#include "server/cuda/driver.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::cuda {
namespace {

using ::testing::HasSubstr;

TEST(DriverTest, MissingLibraryIsAClearPrecondition) {
  auto driver = LoadDriver("libcuda-does-not-exist.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(), HasSubstr("no CUDA driver"));
}

TEST(DriverTest, DriverIsOkOrAClearPrecondition) {
  // Either outcome is right depending on the host; what must never happen is a crash or an
  // unexplained error.
  auto driver = Driver();
  if (!driver.ok()) {
    EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(driver.status().message()), HasSubstr("CUDA"));
  }
}

}  // namespace
}  // namespace cutune::cuda
