// The CLI's device selector: --model with --arch and --sm-count describes the asking GPU, so a
// table without that model answers from another of its architecture (DeviceSelector).
#include "client/cli/commands.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

TEST(SelectorTest, ArchitecturesAreSmAndTwoOrThreeDigits) {
  EXPECT_THAT(*ArchCapability("sm_90"), Pair(9, 0));
  EXPECT_THAT(*ArchCapability("sm_89"), Pair(8, 9));
  EXPECT_THAT(*ArchCapability("sm_100"), Pair(10, 0));
  EXPECT_THAT(*ArchCapability("sm_121"), Pair(12, 1));
  for (const char* bad : {"", "sm_", "sm_9", "sm_090", "sm_1000", "compute_90", "sm_9a", "90",
                          "SM_90", "sm_90 "}) {
    auto cc = ArchCapability(bad);
    ASSERT_FALSE(cc.ok()) << bad;
    EXPECT_THAT(std::string(cc.status().message()), HasSubstr("like sm_90")) << bad;
  }
}

TEST(SelectorTest, AModelWithAnArchitectureDescribesTheGpu) {
  ProblemOptions options;
  options.model = "NVIDIA H100 PCIe";
  options.arch = "sm_90";
  options.sm_count = 114;
  const pb::DeviceSelector s = ToSelector(options);
  EXPECT_EQ(s.model(), "NVIDIA H100 PCIe");
  EXPECT_EQ(s.cc_major(), 9);
  EXPECT_EQ(s.cc_minor(), 0);
  EXPECT_EQ(s.sm_count(), 114);
  options.arch.clear();
  const pb::DeviceSelector bare = ToSelector(options);
  EXPECT_EQ(bare.cc_major(), 0) << "no description: a model no table holds stays NOT_FOUND";
  EXPECT_EQ(bare.sm_count(), 0);
}

}  // namespace
}  // namespace cutune::cli
