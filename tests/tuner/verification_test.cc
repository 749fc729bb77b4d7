// The verdict on a candidate's output (server/tuner/verification.h), from made-up comparison
// sums: exact for transpose, a relative error bound for matmul, non-finite outputs never right.
#include "server/tuner/verification.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::tuner {
namespace {

using ::testing::HasSubstr;

constexpr kernels::Verification kExact = {.exact = true, .max_rel_error = 0};
constexpr kernels::Verification kWithin1e4 = {.exact = false, .max_rel_error = 1e-4};

OutputComparison Sums(double squared_error, double squared_reference, float max_abs_error,
                      uint64_t nonfinite = 0) {
  return {.squared_error = squared_error,
          .squared_reference = squared_reference,
          .max_abs_error = max_abs_error,
          .nonfinite = nonfinite};
}

TEST(JudgeOutputTest, AnExactFamilyAcceptsAnIdenticalOutput) {
  const Verdict v = JudgeOutput(kExact, Sums(0, 1e6, 0));
  EXPECT_TRUE(v.correct);
  EXPECT_EQ(v.rel_error, 0.0);
  EXPECT_EQ(v.detail, "");
}

TEST(JudgeOutputTest, AnExactFamilyRejectsAnyDifference) {
  const Verdict v = JudgeOutput(kExact, Sums(1e-30, 1e6, 1e-15f));
  EXPECT_FALSE(v.correct);
  EXPECT_THAT(v.detail, HasSubstr("output differs from the reference: 0 non-finite or unwritten "
                                  "elements, max |error| 1e-15"));
  EXPECT_THAT(v.detail, HasSubstr("(allowed exact)"));
  // A difference that squares to nothing in double still fails by its largest element.
  EXPECT_FALSE(JudgeOutput(kExact, Sums(0, 1e6, 1e-30f)).correct);
}

TEST(JudgeOutputTest, ABoundedFamilyAcceptsUpToTheBound) {
  // ||out - ref|| / ||ref|| = sqrt(1e-6 / 100) = 1e-4: at the bound.
  const Verdict at = JudgeOutput(kWithin1e4, Sums(1e-6, 100, 1e-5f));
  EXPECT_TRUE(at.correct) << at.detail;
  EXPECT_THAT(at.rel_error, ::testing::DoubleNear(1e-4, 1e-18));

  const Verdict over = JudgeOutput(kWithin1e4, Sums(1.21e-6, 100, 1e-5f));
  EXPECT_FALSE(over.correct);
  EXPECT_THAT(over.rel_error, ::testing::DoubleNear(1.1e-4, 1e-15));
  EXPECT_THAT(over.detail, HasSubstr("relative error 0.00011 (allowed 0.0001)"));
}

TEST(JudgeOutputTest, ANonFiniteElementFailsEveryFamily) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const kernels::Verification& rule : {kExact, kWithin1e4}) {
    const Verdict v = JudgeOutput(rule, Sums(0, 100, inf, 3));
    EXPECT_FALSE(v.correct) << rule.exact;
    EXPECT_THAT(v.detail, HasSubstr(": 3 non-finite or unwritten elements, max |error| inf"));
  }
}

TEST(JudgeOutputTest, AnAllZeroReferenceIsJudgedByTheAbsoluteNorm) {
  EXPECT_EQ(JudgeOutput(kWithin1e4, Sums(1e-10, 0, 1e-5f)).rel_error, 1e-5);
  EXPECT_TRUE(JudgeOutput(kWithin1e4, Sums(1e-10, 0, 1e-5f)).correct);
  EXPECT_FALSE(JudgeOutput(kWithin1e4, Sums(1e-6, 0, 1e-3f)).correct);
}

TEST(JudgeOutputTest, ANaNSumFails) {
  const double nan = std::nan("");
  const Verdict v = JudgeOutput(kWithin1e4, Sums(nan, 100, 0));
  EXPECT_FALSE(v.correct);
  EXPECT_TRUE(std::isnan(v.rel_error));
  EXPECT_FALSE(JudgeOutput(kExact, Sums(nan, 100, 0)).correct);
}

}  // namespace
}  // namespace cutune::tuner
