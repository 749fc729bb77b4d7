#include "server/core/types.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ShapeTest, ParsesAndFormats) {
  auto shape = ParseShape("8192x4097");
  ASSERT_TRUE(shape.ok());
  EXPECT_THAT(*shape, ElementsAre(8192, 4097));
  EXPECT_EQ(FormatShape(*shape), "8192x4097");
}

TEST(ShapeTest, RejectsBadShapes) {
  for (const char* bad : {"", "0x4", "4x", "ax4", "-1x2", "4x4x"}) {
    auto shape = ParseShape(bad);
    EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ParamsTest, RoundTripsInNameOrder) {
  auto params = ParseParams("tile=64, pad=1,rows=8");
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(FormatParams(*params), "pad=1,rows=8,tile=64");
  EXPECT_THAT(ParseParams("tile=1,tile=2").status().message(), HasSubstr("twice"));
  EXPECT_FALSE(ParseParams("tile").ok());
  EXPECT_TRUE(ParseParams("")->empty());
}

TEST(OutcomeTest, NamesRoundTrip) {
  for (Outcome outcome : kAllOutcomes) {
    auto parsed = ParseOutcome(OutcomeName(outcome));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, outcome);
  }
  EXPECT_FALSE(ParseOutcome("great").ok());
}

TEST(DTypeTest, OnlyF32) {
  EXPECT_EQ(*ParseDType("f32"), DType::kF32);
  EXPECT_THAT(ParseDType("f16").status().message(), HasSubstr("supported: f32"));
}

}  // namespace
}  // namespace cutune
