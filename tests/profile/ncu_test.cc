#include "server/profile/ncu.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::profile {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

MATCHER_P2(StatusIs, code, substring, "") {
  if (arg.status().code() == code && arg.status().message().find(substring) != std::string::npos) {
    return true;
  }
  *result_listener << "status is " << arg.status();
  return false;
}

// As ncu 2025.x prints `--csv --page details --print-units base --metrics ...` for one launch,
// between its ==PROF== lines: quoted fields, thousands separators, a C++ kernel name with commas
// in its parameter list (another kernel), and a CRLF line.
constexpr std::string_view kSample =
    "==PROF== Connected to process 4242 (/opt/cutune/bin/cutune-worker)\n"
    "==PROF== Profiling \"cutune_kernel\" - 0: 0%....50%....100% - 9 passes\n"
    "==PROF== Disconnected from process 4242\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"87.41\"\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"gpu__time_duration.sum\",\"ns\",\"1,234,560\"\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum\",\"\",\"1,048,576\"\r\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"launch__registers_per_thread\",\"register/thread\",\"32\"\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"lts__t_sector_hit_rate.pct\",\"%\",\"50.02\"\n"
    "\"0\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"cutune_kernel\",\"1\",\"13\",\"(32, 8, 1)\","
    "\"(128, 128, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"71.9\"\n"
    "\"1\",\"4242\",\"cutune-worker\",\"127.0.0.1\",\"void other<float, 4>(const float *, int)\","
    "\"1\",\"13\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"launch__registers_per_thread\",\"register/thread\",\"99\"\n";

TEST(NcuCsvTest, ReadsEveryMetricOfTheKernelWithItsUnit) {
  auto metrics = ParseNcuCsv(kSample, "cutune_kernel");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_EQ(metrics->size(), 6u);
  std::map<std::string, Metric> by_name;
  for (const Metric& m : *metrics) by_name[m.name] = m;
  EXPECT_DOUBLE_EQ(by_name["dram__throughput.avg.pct_of_peak_sustained_elapsed"].value, 87.41);
  EXPECT_EQ(by_name["dram__throughput.avg.pct_of_peak_sustained_elapsed"].unit, "%");
  EXPECT_DOUBLE_EQ(by_name["gpu__time_duration.sum"].value, 1234560);
  EXPECT_EQ(by_name["gpu__time_duration.sum"].unit, "ns");
  EXPECT_DOUBLE_EQ(by_name["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"].value, 1048576);
  EXPECT_EQ(by_name["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"].unit, "");
  EXPECT_DOUBLE_EQ(by_name["launch__registers_per_thread"].value, 32);  // not the other kernel's
  EXPECT_DOUBLE_EQ(by_name["lts__t_sector_hit_rate.pct"].value, 50.02);
  EXPECT_DOUBLE_EQ(by_name["sm__warps_active.avg.pct_of_peak_sustained_active"].value, 71.9);
}

TEST(NcuCsvTest, ColumnsAreFoundByNameInAnyOrder) {
  const std::string csv =
      "\"Metric Value\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\"\n"
      "\"0.5\",\"cutune_kernel\",\"lts__t_sector_hit_rate.pct\",\"%\"\n"
      "\"n/a\",\"cutune_kernel\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\"\n"
      "\"7\",\"cutune_kernel\",\"sm__not_asked_for.sum\",\"\"\n";
  auto metrics = ParseNcuCsv(csv, "cutune_kernel");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_EQ(metrics->size(), 1u);  // n/a and unasked metrics are left out
  EXPECT_EQ((*metrics)[0].name, "lts__t_sector_hit_rate.pct");
  EXPECT_DOUBLE_EQ((*metrics)[0].value, 0.5);
}

TEST(NcuCsvTest, CounterPermissionErrorSaysHowToAllowIt) {
  const std::string output =
      "==PROF== Connected to process 77 (/opt/cutune/bin/cutune-worker)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0. For instructions on enabling permissions and "
      "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
      "==PROF== Disconnected from process 77\n"
      "==WARNING== No kernels were profiled.\n";
  EXPECT_THAT(ParseNcuCsv(output, "cutune_kernel"),
              StatusIs(absl::StatusCode::kFailedPrecondition, "ERR_NVGPUCTRPERM"));
  EXPECT_THAT(ParseNcuCsv(output, "cutune_kernel"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "NVreg_RestrictProfilingToAdminUsers=0"));
}

TEST(NcuCsvTest, OtherErrorsAndEmptyOutputsAreNamed) {
  EXPECT_THAT(ParseNcuCsv("==ERROR== Failed to prepare kernel for profiling\n", "cutune_kernel"),
              StatusIs(absl::StatusCode::kInternal,
                       "ncu failed: ==ERROR== Failed to prepare kernel for profiling"));
  EXPECT_THAT(ParseNcuCsv("==PROF== Disconnected from process 1\n"
                          "==WARNING== No kernels were profiled.\n",
                          "cutune_kernel"),
              StatusIs(absl::StatusCode::kFailedPrecondition, "ncu profiled no launch of "
                                                              "cutune_kernel"));
  EXPECT_THAT(ParseNcuCsv("garbage\n", "cutune_kernel"),
              StatusIs(absl::StatusCode::kInternal, "its output ends:\ngarbage"));
}

TEST(NcuCsvTest, SplitsQuotedFields) {
  EXPECT_THAT(SplitCsvLine("\"a,b\",\"c \"\"d\"\"\",,e"), ElementsAre("a,b", "c \"d\"", "", "e"));
}

TEST(NcuCsvTest, NumbersLoseThousandsSeparators) {
  EXPECT_EQ(ParseNcuNumber("1,048,576"), 1048576.0);
  EXPECT_EQ(ParseNcuNumber(" 87.25 "), 87.25);
  EXPECT_EQ(ParseNcuNumber("n/a"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber(""), std::nullopt);
}

TEST(NcuVersionTest, ReadsTheVersionLine) {
  EXPECT_EQ(ParseNcuVersion("NVIDIA (R) Nsight Compute Command Line Profiler\n"
                            "Copyright (c) 2018-2025 NVIDIA Corporation\n"
                            "Version 2025.3.1.0 (build 36398880) (public-release)\n"),
            "2025.3.1.0");
  EXPECT_EQ(ParseNcuVersion("nothing here\n"), std::nullopt);
}

TEST(NcuArgumentsTest, ProfilesOneLaunchOfTheKernelInCsvAndBaseUnits) {
  ProfileTarget target{"cutune_kernel", 1, {"/bin/cutune-worker", "--profile", "/tmp/job.pb"}};
  const std::vector<std::string> argv = NcuArguments("/usr/local/cuda/bin/ncu", target);
  EXPECT_THAT(argv, ElementsAre("/usr/local/cuda/bin/ncu", "--csv", "--page", "details",
                                "--print-units", "base", "--metrics",
                                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,"
                                "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
                                "sm__warps_active.avg.pct_of_peak_sustained_active,"
                                "lts__t_sector_hit_rate.pct,launch__registers_per_thread,"
                                "gpu__time_duration.sum",
                                "--kernel-name", "cutune_kernel", "--launch-skip", "1",
                                "--launch-count", "1", "--target-processes", "all",
                                "/bin/cutune-worker", "--profile", "/tmp/job.pb"));
}

TEST(FindNcuTest, FlagThenEnvironmentThenToolkitThenPath) {
  std::set<std::string> files = {"/usr/local/cuda/bin/ncu", "/opt/ncu/ncu", "/usr/bin/ncu"};
  auto exists = [&](const std::string& p) { return files.count(p) > 0; };
  EXPECT_EQ(*FindNcu("/opt/ncu/ncu", "/usr/bin/ncu", "/usr/bin", exists), "/opt/ncu/ncu");
  EXPECT_EQ(*FindNcu("", "/usr/bin/ncu", "/usr/bin", exists), "/usr/bin/ncu");
  EXPECT_EQ(*FindNcu("", nullptr, "/usr/bin", exists), "/usr/local/cuda/bin/ncu");
  EXPECT_EQ(*FindNcu("", "", "/usr/bin", exists), "/usr/local/cuda/bin/ncu");
  files.erase("/usr/local/cuda/bin/ncu");
  EXPECT_EQ(*FindNcu("", nullptr, "/bin:/usr/bin", exists), "/usr/bin/ncu");
}

TEST(FindNcuTest, AbsentNcuNamesWhereItLooked) {
  auto none = [](const std::string&) { return false; };
  EXPECT_THAT(FindNcu("", nullptr, "/bin:/usr/bin", none),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "Nsight Compute (ncu) not found: looked at /usr/local/cuda/bin/ncu, "
                       "$PATH (/bin:/usr/bin)"));
  // An explicit choice does not fall back to another ncu.
  auto toolkit = [](const std::string& p) { return p == "/usr/local/cuda/bin/ncu"; };
  EXPECT_THAT(FindNcu("/nope/ncu", nullptr, "", toolkit),
              StatusIs(absl::StatusCode::kFailedPrecondition, "looked at /nope/ncu (--ncu)"));
  EXPECT_THAT(FindNcu("", "/nope/ncu", "", toolkit),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "looked at /nope/ncu ($CUTUNE_NCU)"));
}

TEST(MetricsTest, EveryMetricHasWords) {
  for (const MetricSpec& spec : kMetrics) {
    EXPECT_FALSE(spec.label.empty()) << spec.name;
    EXPECT_FALSE(spec.meaning.empty()) << spec.name;
    EXPECT_EQ(FindMetric(spec.name), &spec);
  }
  EXPECT_EQ(FindMetric("sm__cycles_elapsed.avg"), nullptr);
}

}  // namespace
}  // namespace cutune::profile
