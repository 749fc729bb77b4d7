// Which finalists are tied with the fastest and which of them a sweep names as its winner
// (server/tuner/winner.h), on made-up rows.
#include "server/tuner/winner.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::tuner {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Measurement Row(int64_t tile, double median_us, double rel_spread, Outcome outcome = Outcome::kOk) {
  Measurement row;
  row.params = {{"tile", tile}};
  row.outcome = outcome;
  row.timing = {
      .samples = 40, .median_us = median_us, .min_us = median_us * 0.99, .rel_spread = rel_spread};
  return row;
}

TEST(ChooseWinnerTest, NoFinalistsNoWinner) {
  const std::vector<Measurement> rows = {Row(8, 100, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {}, {});
  EXPECT_FALSE(choice.winner.has_value());
  EXPECT_THAT(choice.tied, IsEmpty());
}

TEST(ChooseWinnerTest, TheFastestWinsAloneWhenNothingIsWithinTheBand) {
  const std::vector<Measurement> rows = {Row(8, 110, 0.01), Row(16, 100, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {1, 0}, {1, 0});
  EXPECT_EQ(choice.winner, 1u);
  EXPECT_THAT(choice.tied, ElementsAre(1));
}

TEST(ChooseWinnerTest, TheCanonicalFirstOfTheTiedWinsOverTheFastest) {
  // tile=16 is faster by 0.5%, within the 1% spread; tile=8 comes first numerically (as text,
  // "tile=16" would).
  const std::vector<Measurement> rows = {Row(16, 100, 0.01), Row(8, 100.5, 0.01),
                                         Row(32, 105, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1, 2}, {0, 1, 2});
  EXPECT_EQ(choice.winner, 1u);
  EXPECT_THAT(choice.tied, ElementsAre(0, 1));
}

TEST(ChooseWinnerTest, AmongTheTiedOneThatDoesNotSpillWinsOverTheCanonicalFirst) {
  // tile=8 comes first and is fastest, but ptxas spilled it (a register cap): the tied tile=16,
  // without a spill, is named; tile=32 does not spill either but is not tied.
  std::vector<Measurement> rows = {Row(16, 100.5, 0.01), Row(8, 100, 0.01), Row(32, 105, 0.01)};
  rows[1].resources.spill_store_bytes = 12;
  rows[1].resources.spill_load_bytes = 20;
  WinnerChoice choice = ChooseWinner(rows, {0, 1, 2}, {0, 1, 2});
  EXPECT_EQ(choice.winner, 0u);
  EXPECT_THAT(choice.tied, ElementsAre(0, 1));
  // Both spilling: the canonical first again.
  rows[0].resources.spill_load_bytes = 4;
  EXPECT_EQ(ChooseWinner(rows, {0, 1, 2}, {0, 1, 2}).winner, 1u);
  // A spilling fastest beyond the band still wins alone.
  rows[0].timing.median_us = 110;
  rows[0].resources = {};
  EXPECT_EQ(ChooseWinner(rows, {0, 1, 2}, {0, 1, 2}).winner, 1u);
}

TEST(ChooseWinnerTest, EqualMediansWithoutSpreadAreTied) {
  const std::vector<Measurement> rows = {Row(64, 12, 0), Row(8, 12, 0), Row(16, 12.01, 0)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1, 2}, {0, 1, 2});
  EXPECT_EQ(choice.winner, 1u);
  EXPECT_THAT(choice.tied, ElementsAre(0, 1));
}

TEST(ChooseWinnerTest, OnlyReMeasuredFinalistsCanTie) {
  const std::vector<Measurement> rows = {Row(16, 100, 0.01), Row(8, 100.5, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1}, {0});
  EXPECT_EQ(choice.winner, 0u);
  EXPECT_THAT(choice.tied, ElementsAre(0));

  // Nor is a row that is not a finalist tied, whatever its time.
  choice = ChooseWinner(rows, {0}, {0, 1});
  EXPECT_EQ(choice.winner, 0u);
  EXPECT_THAT(choice.tied, ElementsAre(0));
}

TEST(ChooseWinnerTest, AFastestNotReMeasuredIsTiedWithNothing) {
  // A sweep stopped before the re-measurement: the fastest by its single timing wins.
  const std::vector<Measurement> rows = {Row(16, 100, 0.01), Row(8, 100.5, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1}, {});
  EXPECT_EQ(choice.winner, 0u);
  EXPECT_THAT(choice.tied, ElementsAre(0));
  choice = ChooseWinner(rows, {0, 1}, {1});
  EXPECT_EQ(choice.winner, 0u);
  EXPECT_THAT(choice.tied, ElementsAre(0));
}

TEST(ChooseWinnerTest, TiesAreWithTheFastestNotAChain) {
  // 8 is within 2% of 32, 16 within 2% of 8 but 3% from 32.
  const std::vector<Measurement> rows = {Row(32, 100, 0.02), Row(8, 101.5, 0.02),
                                         Row(16, 103, 0.02)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1, 2}, {0, 1, 2});
  EXPECT_EQ(choice.winner, 1u);
  EXPECT_THAT(choice.tied, ElementsAre(0, 1));
}

TEST(ChooseWinnerTest, TheBandIsTheLargerSpreadAtMostTwoPercent) {
  // The slower row's 50% spread widens the band to 2%, no further.
  const std::vector<Measurement> in = {Row(16, 100, 0.001), Row(8, 101.9, 0.5)};
  EXPECT_EQ(ChooseWinner(in, {0, 1}, {0, 1}).winner, 1u);
  const std::vector<Measurement> out = {Row(16, 100, 0.001), Row(8, 102.1, 0.5)};
  EXPECT_EQ(ChooseWinner(out, {0, 1}, {0, 1}).winner, 0u);
}

TEST(ChooseWinnerTest, RowsThatAreNotOkArePassedOver) {
  const std::vector<Measurement> rows = {Row(8, 50, 0.01, Outcome::kWrongAnswer),
                                         Row(16, 100, 0.01), Row(4, 100.2, 0.01, Outcome::kFault)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1, 2}, {0, 1, 2});
  EXPECT_EQ(choice.winner, 1u);
  EXPECT_THAT(choice.tied, ElementsAre(1));
  EXPECT_FALSE(ChooseWinner(rows, {0, 2}, {0, 2}).winner.has_value());
}

TEST(ChooseWinnerTest, AFastestWithoutAMedianStillWinsAlone) {
  const std::vector<Measurement> rows = {Row(16, 0, 0), Row(8, 0, 0)};
  WinnerChoice choice = ChooseWinner(rows, {0, 1}, {0, 1});
  EXPECT_EQ(choice.winner, 0u) << "equal medians rank by parameter text: tile=16 < tile=8";
  EXPECT_THAT(choice.tied, ElementsAre(0)) << "an untimed row ties with nothing, not even tile=8";
}

TEST(ChooseWinnerTest, TheTiedAreInRowOrderWhateverTheFinalistsOrder) {
  const std::vector<Measurement> rows = {Row(64, 10.05, 0.01), Row(128, 10.1, 0.01),
                                         Row(32, 10, 0.01)};
  WinnerChoice choice = ChooseWinner(rows, {2, 0, 1}, {1, 2, 0});
  EXPECT_EQ(choice.winner, 2u);
  EXPECT_THAT(choice.tied, ElementsAre(0, 1, 2));
}

TEST(RanksBeforeTest, LowerMedianThenParameterText) {
  EXPECT_TRUE(RanksBefore(Row(64, 9, 0), Row(8, 10, 0)));
  EXPECT_FALSE(RanksBefore(Row(8, 10, 0), Row(64, 9, 0)));
  EXPECT_TRUE(RanksBefore(Row(16, 10, 0), Row(8, 10, 0)));  // "tile=16" < "tile=8"
  EXPECT_FALSE(RanksBefore(Row(8, 10, 0), Row(8, 10, 0)));
}

TEST(ChallengersTest, RowsRankedBeforeTheFastestFinalistFastestFirstWithinTheRoom) {
  // Finalists 0 and 1, re-measured to 100 and 104; rows 2 (99), 3 (95) and 5 (97) were timed
  // once and look faster; row 4 (101) does not; row 6 failed.
  const std::vector<Measurement> rows = {Row(1, 104, 0.01), Row(2, 100, 0.01), Row(3, 99, 0.01),
                                         Row(4, 95, 0.01),  Row(5, 101, 0.01), Row(6, 97, 0.01),
                                         Row(7, 1, 0.01, Outcome::kWrongAnswer)};
  EXPECT_THAT(Challengers(rows, {0, 1}, 10), ElementsAre(3, 5, 2));
  EXPECT_THAT(Challengers(rows, {0, 1}, 2), ElementsAre(3, 5));
  EXPECT_THAT(Challengers(rows, {0, 1}, 0), IsEmpty());
  EXPECT_THAT(Challengers(rows, {0, 1, 3, 5, 2}, 10), IsEmpty()) << "all of them re-measured";
  EXPECT_THAT(Challengers(rows, {}, 10), IsEmpty()) << "no finalist, nothing to challenge";
}

}  // namespace
}  // namespace cutune::tuner
