#include "server/observe/prometheus.h"

#include <cmath>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::observe::prometheus {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusTextTest, RendersHelpTypeAndSamples) {
  std::vector<Family> families = {
      {"cutune_lookups_total",
       "Answers by rung",
       Type::kCounter,
       {{"", {{"rung", "exact"}}, 3}, {"", {{"rung", "nearest_shape"}}, 1}}},
      {"cutune_store_size_bytes", "Bytes", Type::kGauge, {{"", {}, 1.5e9}}},
  };
  EXPECT_EQ(Render(families),
            "# HELP cutune_lookups_total Answers by rung\n"
            "# TYPE cutune_lookups_total counter\n"
            "cutune_lookups_total{rung=\"exact\"} 3\n"
            "cutune_lookups_total{rung=\"nearest_shape\"} 1\n"
            "# HELP cutune_store_size_bytes Bytes\n"
            "# TYPE cutune_store_size_bytes gauge\n"
            "cutune_store_size_bytes 1500000000\n");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelpAsTheFormatSays) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue("NVIDIA H200 µ"), "NVIDIA H200 µ");  // UTF-8 as is
  EXPECT_EQ(EscapeHelp("one\\two\nthree \"quoted\""), "one\\\\two\\nthree \"quoted\"");
  std::vector<Family> families = {{"m", "h", Type::kGauge, {{"", {{"model", "GPU \"x\"\n"}}, 1}}}};
  EXPECT_THAT(Render(families), HasSubstr("m{model=\"GPU \\\"x\\\"\\n\"} 1\n"));
}

TEST(PrometheusTextTest, MakesNamesValid) {
  EXPECT_EQ(MetricName("cutune:lookups_total"), "cutune:lookups_total");
  EXPECT_EQ(MetricName("9lives-left.now"), "_lives_left_now");
  EXPECT_EQ(LabelName("gpu.model"), "gpu_model");
  EXPECT_EQ(LabelName("a:b"), "a_b");  // colons are for metric names only
  EXPECT_EQ(LabelName("1st"), "_st");
  EXPECT_EQ(LabelName("__name__"), "x__name__");
  EXPECT_EQ(LabelName(""), "_");
  std::vector<Family> families = {{"m", "h", Type::kGauge, {{"", {{"bad-name", "v"}}, 1}}}};
  EXPECT_THAT(Render(families), HasSubstr("m{bad_name=\"v\"} 1\n"));
}

TEST(PrometheusTextTest, FormatsValuesAsGoParsesThem) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(1e-4), "0.0001");
  EXPECT_EQ(FormatValue(1e20), "1e+20");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
}

TEST(CounterFamilyTest, CountsPerLabelCombination) {
  CounterFamily counter("c_total", "help", {"method", "code"});
  counter.Declare({"Get", "OK"});
  counter.Inc({"Get", "OK"});
  counter.Inc({"Get", "OK"}, 2);
  counter.Inc({"Get", "NOT_FOUND"});
  const Family family = counter.Collect();
  EXPECT_EQ(Render({family}),
            "# HELP c_total help\n# TYPE c_total counter\n"
            "c_total{method=\"Get\",code=\"NOT_FOUND\"} 1\n"
            "c_total{method=\"Get\",code=\"OK\"} 3\n");
}

TEST(CounterFamilyTest, IsThreadSafe) {
  CounterFamily counter("c_total", "help", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counter, t] {
      for (int i = 0; i < 10000; ++i) counter.Inc({t % 2 ? "odd" : "even"});
    });
  }
  for (auto& thread : threads) thread.join();
  const Family family = counter.Collect();
  ASSERT_EQ(family.samples.size(), 2u);
  EXPECT_EQ(family.samples[0].value + family.samples[1].value, 40000);
}

TEST(HistogramTest, BucketsAreCumulativeWithInfSumAndCount) {
  Histogram histogram("h_seconds", "latency", {0.001, 0.01, 0.1});
  for (double v : {0.0005, 0.001, 0.005, 0.05, 2.0}) histogram.Observe(v);
  EXPECT_EQ(Render({histogram.Collect()}),
            "# HELP h_seconds latency\n# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"0.001\"} 2\n"
            "h_seconds_bucket{le=\"0.01\"} 3\n"
            "h_seconds_bucket{le=\"0.1\"} 4\n"
            "h_seconds_bucket{le=\"+Inf\"} 5\n"
            "h_seconds_sum 2.0565\n"
            "h_seconds_count 5\n");
}

}  // namespace
}  // namespace cutune::observe::prometheus
