#include "server/core/ties.h"

#include <limits>

#include "gtest/gtest.h"

namespace cutune {
namespace {

TimingStats T(double median_us, double rel_spread) {
  TimingStats t;
  t.samples = 10;
  t.median_us = median_us;
  t.rel_spread = rel_spread;
  return t;
}

TEST(TiesTest, WithinTheLargerSpreadIsATie) {
  EXPECT_TRUE(Tied(T(100, 0.01), T(100.9, 0.002)));
  EXPECT_TRUE(Tied(T(100.9, 0.002), T(100, 0.01)));  // symmetric
  EXPECT_FALSE(Tied(T(100, 0.01), T(101.1, 0.002)));
  EXPECT_FALSE(Tied(T(100, 0), T(100.01, 0)));  // no spread measured: only equal times tie
  EXPECT_TRUE(Tied(T(100, 0), T(100, 0)));
}

TEST(TiesTest, ANoisyCandidateDoesNotTieWithEverything) {
  EXPECT_DOUBLE_EQ(TieBand(T(100, 0.5), T(100, 0.01)), kMaxTieBand);
  EXPECT_FALSE(Tied(T(100, 0.5), T(103, 0.01)));
  EXPECT_TRUE(Tied(T(100, 0.5), T(101.9, 0.01)));
}

TEST(TiesTest, UntimedOrNanNeverTies) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(Tied(T(0, 0.01), T(0, 0.01)));
  EXPECT_FALSE(Tied(T(nan, 0.01), T(100, 0.01)));
  EXPECT_EQ(TieBand(T(100, nan), T(100, nan)), 0);
}

TEST(TiesTest, CanonicalOrderComparesValuesNumericallyInNameOrder) {
  const Params a = {{"bk", 8}, {"bm", 128}};
  const Params b = {{"bk", 16}, {"bm", 64}};
  EXPECT_TRUE(CanonicalBefore(a, b));  // bk decides first; 8 < 16 as numbers, not as text
  EXPECT_FALSE(CanonicalBefore(b, a));
  EXPECT_FALSE(CanonicalBefore(a, a));
}

}  // namespace
}  // namespace cutune
