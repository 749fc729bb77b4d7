// The summaries the pictures are drawn from (ranking, best so far, outcome counts, strips, the
// ceiling) on hand-made rows, and what every picture must carry: SVG with nothing external, the
// provenance footer, and words instead of an empty frame when there is nothing to draw.
#include <cmath>
#include <map>
#include <set>

#include "charts/diff_chart.h"
#include "charts/svg.h"
#include "charts/sweep_charts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::charts {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

pb::Measurement Row(int64_t tile, int64_t rows, double us, int64_t sequence,
                    pb::Outcome outcome = pb::OUTCOME_OK) {
  pb::Measurement m;
  (*m.mutable_params())["tile"] = tile;
  (*m.mutable_params())["rows"] = rows;
  m.set_outcome(outcome);
  m.set_sequence(sequence);
  if (outcome == pb::OUTCOME_OK) {
    m.set_time_us(us);
    m.set_gbps(1000 / us);
    m.set_percent_of_reference(90 * 10 / us);  // the 10 us one is 90% of the reference
    m.set_registers(static_cast<int32_t>(16 + rows));
    m.set_shared_bytes(static_cast<int32_t>(tile * tile * 4));
  }
  return m;
}

SweepData Sample() {
  SweepData d;
  d.problem = "transpose 256x256 f32";
  d.provenance = {"NVIDIA H200", "0123456789abcdef0123", 13000, "13.0", 1764611712000, 7, "held"};
  d.reference_name = "device copy";
  d.reference_us = 9;
  d.rows = {Row(32, 8, 12, 3), Row(32, 16, 10, 1), Row(64, 8, 10.05, 4),
            Row(64, 16, 0, 2, pb::OUTCOME_COMPILE_FAILED), Row(64, 32, 20, 5),
            Row(16, 8, 0, 6, pb::OUTCOME_FAULT)};
  return d;
}

TEST(ChartsTest, RankingCountsTheCandidatesNearTheWinner) {
  const Ranking r = RankCandidates(Sample().rows);
  EXPECT_TRUE(r.of_reference);
  ASSERT_EQ(r.percent.size(), 4u);
  EXPECT_DOUBLE_EQ(r.percent.front(), 90);
  EXPECT_TRUE(std::is_sorted(r.percent.rbegin(), r.percent.rend()));
  EXPECT_EQ(r.within_1, 2);  // 10 and 10.05 us
  EXPECT_EQ(r.within_5, 2);  // 12 us is 20% slower
}

TEST(ChartsTest, WithoutAReferenceTheRankingIsOfTheWinnersSpeed) {
  std::vector<pb::Measurement> rows = {Row(32, 8, 10, 1), Row(32, 16, 20, 2)};
  for (auto& row : rows) row.clear_percent_of_reference();
  const Ranking r = RankCandidates(rows);
  EXPECT_FALSE(r.of_reference);
  EXPECT_THAT(r.percent, ElementsAre(100, 50));
}

TEST(ChartsTest, BestSoFarFollowsTheMeasuringOrder) {
  const std::vector<double> best = BestSoFar(Sample().rows);
  ASSERT_EQ(best.size(), 6u);
  EXPECT_DOUBLE_EQ(best[0], 10);  // sequence 1: 10 us first
  EXPECT_DOUBLE_EQ(best[1], 10);  // a compile failure finds nothing
  EXPECT_DOUBLE_EQ(best[5], 10);
  std::vector<pb::Measurement> late = {Row(1, 1, 0, 1, pb::OUTCOME_TIMEOUT), Row(1, 2, 5, 2)};
  const std::vector<double> b = BestSoFar(late);
  EXPECT_TRUE(std::isnan(b[0]));
  EXPECT_DOUBLE_EQ(b[1], 5);
}

TEST(ChartsTest, OutcomeCountsListEveryOutcomeWithZeros) {
  const std::vector<OutcomeCount> counts = CountOutcomes(Sample().rows);
  ASSERT_EQ(counts.size(), 7u);
  std::map<std::string, int64_t> by;
  std::set<std::string> colours;
  for (const auto& c : counts) {
    by[c.label] = c.count;
    colours.insert(c.colour);
  }
  EXPECT_EQ(by["ok"], 4);
  EXPECT_EQ(by["compile failed"], 1);
  EXPECT_EQ(by["fault (crash)"], 1);
  EXPECT_EQ(by["timeout"], 0);
  EXPECT_EQ(colours.size(), 7u) << "each outcome its own colour";
  EXPECT_FALSE(colours.contains(kEmptyFill));
  // Zero counts are drawn as an outlined empty box labelled "none".
  const std::string svg = OutcomeChart(Sample());
  EXPECT_THAT(svg, AllOf(HasSubstr("stroke-dasharray"), HasSubstr(">none<"), HasSubstr(">4<")));
}

TEST(ChartsTest, StripsHoldEveryValueOfEveryParameterAndTheWinnersValue) {
  const std::vector<Strip> strips = Strips(Sample().rows);
  ASSERT_EQ(strips.size(), 2u);
  EXPECT_EQ(strips[0].parameter, "rows");
  EXPECT_THAT(strips[0].values, ElementsAre(8, 16, 32));
  EXPECT_EQ(strips[0].winner_value, 16);
  EXPECT_EQ(strips[1].parameter, "tile");
  EXPECT_THAT(strips[1].values, ElementsAre(16, 32, 64));
  EXPECT_TRUE(strips[1].times[0].empty());  // tile 16 only faulted
}

TEST(ChartsTest, TheCeilingIsTheReferencesThroughput) {
  const Roofline r = RooflineOf(Sample());
  ASSERT_TRUE(r.available);
  EXPECT_EQ(r.unit, "GB/s");
  EXPECT_DOUBLE_EQ(r.winner, 100);
  EXPECT_NEAR(r.ceiling, 100 / 0.9, 1e-9);
  EXPECT_THAT(RooflineChart(Sample()), AllOf(HasSubstr("ceiling: device copy"), HasSubstr("90.0%")));
}

TEST(ChartsTest, EveryPictureIsSelfContainedSvgWithItsProvenance) {
  const std::string provenance = ProvenanceLine(Sample().provenance);
  EXPECT_EQ(provenance,
            "NVIDIA H200 · sweep 7 · source 01234567…0123 · driver 13.0 · NVRTC 13.0 · "
            "held start · 2025-12-01 17:55 UTC");
  for (const auto& [id, svg] : SweepCharts(Sample())) {
    SCOPED_TRACE(id);
    EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    EXPECT_THAT(svg, HasSubstr(Escape(provenance)));
    EXPECT_THAT(svg, AllOf(Not(HasSubstr("<script")), Not(HasSubstr("href")),
                           Not(HasSubstr("@import")), Not(HasSubstr("\"nan")),
                           Not(HasSubstr("-nan")), Not(HasSubstr(" nan"))));
  }
}

TEST(ChartsTest, NothingToDrawIsSaidInWords) {
  SweepData d = Sample();
  d.rows = {Row(1, 1, 0, 1, pb::OUTCOME_PRUNED)};
  EXPECT_THAT(PercentChart(d), HasSubstr("no candidate passed"));
  EXPECT_THAT(RooflineChart(d), HasSubstr("no ceiling"));
  EXPECT_THAT(ParameterChart(d), HasSubstr("nothing to plot"));
}

TEST(ChartsTest, ScalesTickRoundValuesInsideTheRange) {
  Scale linear(0, 97, 0, 100, false);
  for (double t : linear.Ticks()) EXPECT_TRUE(t >= 0 && t <= 97) << t;
  EXPECT_GE(linear.Ticks().size(), 3u);
  Scale log(3, 3000, 100, 0, true);
  EXPECT_TRUE(log.log());
  EXPECT_NEAR(log(30), 100 - 100.0 / 3, 1e-9);
  EXPECT_EQ(FormatNumber(1234), "1234");
  EXPECT_EQ(FormatNumber(12.34), "12.3");
  EXPECT_EQ(Escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
}

TEST(ChartsTest, TheDiffChartShowsOldAndNewAndMarksOneSidedKeys) {
  pb::TableDiffReport report;
  auto* slower = report.add_entries();
  slower->set_device_model("NVIDIA H200");
  slower->set_family("matmul");
  slower->add_shape(4096);
  slower->add_shape(4096);
  slower->add_shape(4096);
  slower->set_dtype("f32");
  slower->set_change(pb::TableDiffEntry::CHANGE_WINNER_CHANGED);
  slower->mutable_a()->set_time_us(3000);
  slower->mutable_b()->set_time_us(3300);
  slower->set_time_change_percent(10);
  auto* added = report.add_entries();
  added->set_family("transpose");
  added->add_shape(64);
  added->add_shape(64);
  added->set_dtype("f32");
  added->set_change(pb::TableDiffEntry::CHANGE_ONLY_IN_B);
  added->mutable_b()->set_time_us(2);
  const std::string svg = TableDiffChart(report, "old.json", "new.json", "cutune table diff");
  EXPECT_THAT(svg, AllOf(HasSubstr("matmul 4096x4096x4096 f32"), HasSubstr("+10.0%"),
                         HasSubstr("#d62728"), HasSubstr("added (only in new)"),
                         HasSubstr("not in this table"), HasSubstr("old: old.json")));
  EXPECT_THAT(TableDiffHtml(report, "a", "b", "p"),
              AllOf(StartsWith("<!DOCTYPE html>"), Not(HasSubstr("<script"))));
}

}  // namespace
}  // namespace cutune::charts
