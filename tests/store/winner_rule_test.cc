// The replacement rule for a key's winner, case by case: faster and not tied replaces; slower
// and not tied keeps; tied keeps one that does not spill, then whichever comes first in the
// canonical order.
#include "server/store/winner_rule.h"

#include "gtest/gtest.h"

namespace cutune::store {
namespace {

Measurement M(int tile, double median_us, double rel_spread = 0.01) {
  Measurement m;
  m.params = {{"tile", tile}};
  m.timing = {20, median_us, median_us, rel_spread};
  return m;
}

TEST(SupersedesTest, FasterBeyondTheTieBandReplaces) {
  EXPECT_TRUE(Supersedes(M(64, 90.0), M(32, 100.0)));
  EXPECT_FALSE(Supersedes(M(64, 110.0), M(32, 100.0)));
}

TEST(SupersedesTest, TiedKeepsTheCanonicallyFirstWhicheverIsFaster) {
  // 99.5 and 100 are within 1%: a tie.
  EXPECT_TRUE(Supersedes(M(16, 100.0), M(32, 99.5)));   // slower, but tile=16 comes first
  EXPECT_FALSE(Supersedes(M(64, 99.5), M(32, 100.0)));  // faster, but tile=32 comes first
  // The same configuration re-measured within the noise: kept.
  EXPECT_FALSE(Supersedes(M(32, 99.5), M(32, 100.0)));
  // ... and beyond it, replaced (its new figures win).
  EXPECT_TRUE(Supersedes(M(32, 90.0), M(32, 100.0)));
}

TEST(SupersedesTest, TiedPrefersOneThatDoesNotSpill) {
  Measurement spills = M(16, 99.5);
  spills.resources.spill_store_bytes = 8;
  // tile=32 comes later but does not spill: it replaces the stored spilling tile=16 ...
  EXPECT_TRUE(Supersedes(M(32, 100.0), spills));
  // ... and a spilling tile=16 does not replace it, though it comes first.
  EXPECT_FALSE(Supersedes(spills, M(32, 100.0)));
  // Beyond the band, speed decides whatever spills.
  Measurement fast = M(16, 90.0);
  fast.resources.spill_load_bytes = 8;
  EXPECT_TRUE(Supersedes(fast, M(32, 100.0)));
}

TEST(SupersedesTest, TheBandIsTheLargerSpreadCappedAtTwoPercent) {
  // Spread 0.1% on both: 0.5% apart is not a tie, so speed decides.
  EXPECT_FALSE(Supersedes(M(16, 100.5, 0.001), M(32, 100.0, 0.001)));
  // One noisy side widens the band to its spread...
  EXPECT_TRUE(Supersedes(M(16, 100.5, 0.001), M(32, 100.0, 0.01)));
  // ... but never beyond 2%: 3% apart is a real difference even at 10% spread.
  EXPECT_FALSE(Supersedes(M(16, 103.0, 0.1), M(32, 100.0, 0.1)));
  EXPECT_TRUE(Supersedes(M(16, 101.9, 0.1), M(32, 100.0, 0.1)));
}

}  // namespace
}  // namespace cutune::store
