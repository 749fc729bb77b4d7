// The CLI's one JSON printer (client/cli/json.h) and the report messages of `results` and
// `sweep` (client/cli/results_view.h): the dialect, byte-stable maps, and the round trip through
// protobuf's own parser.
#include "client/cli/json.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/results_view.h"
#include "cutune/v1/cli.pb.h"
#include "cutune/v1/cutune.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/json_dialect.h"

namespace cutune::testing {
namespace {

namespace pb = ::cutune::v1;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::ordered_json;

std::string Print(const google::protobuf::Message& message) {
  absl::StatusOr<std::string> json = cli::ToJson(message);
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

pb::Measurement Row(int64_t tile, pb::Outcome outcome, double time_us, std::string detail = "") {
  pb::Measurement row;
  (*row.mutable_params())["tile"] = tile;
  (*row.mutable_params())["rows"] = 8;
  row.set_outcome(outcome);
  row.set_time_us(time_us);
  row.set_detail(std::move(detail));
  row.set_spill_store_bytes(4);
  row.set_spill_load_bytes(8);
  return row;
}

// A job whose maps hold `keys` in the order given.
pb::JobProgress Job(const std::vector<std::string>& keys) {
  pb::JobProgress job;
  job.set_job_id("job-000001-3f2a");
  job.set_state(pb::JobProgress::STATE_SUCCEEDED);
  for (size_t i = 0; i < keys.size(); ++i) {
    (*job.mutable_outcome_counts())[keys[i]] = static_cast<int64_t>(keys[i].size());
    (*job.mutable_phase_seconds())[keys[i]] = 0.5 * static_cast<double>(keys[i].size());
    (*job.mutable_best()->mutable_params())[keys[i]] = static_cast<int64_t>(keys[i].size());
  }
  return job;
}

TEST(JsonTest, EveryFieldIsPresentUnderItsProtoNameWithEnumsByName) {
  const std::string text = Print(pb::Measurement());
  EXPECT_TRUE(InJsonDialect<pb::Measurement>(text));
  const Json j = Json::parse(text);
  EXPECT_EQ(j["outcome"], "OUTCOME_UNSPECIFIED");
  EXPECT_EQ(j["params"], Json::object());
  EXPECT_EQ(j["spill_store_bytes"], 0);
  EXPECT_EQ(j["spill_load_bytes"], 0);
  EXPECT_EQ(j["percent_of_reference"], 0);
  EXPECT_FALSE(j.contains("spill_bytes"));
  EXPECT_FALSE(j.contains("percentOfReference"));  // not the camelCase json_name
}

TEST(JsonTest, SixtyFourBitIntegersAreStringsAndThirtyTwoBitOnesNumbers) {
  pb::JobProgress job = Job({"OUTCOME_OK"});
  job.mutable_problem()->set_family("matmul");
  for (int64_t d : {4096, 4096, 4096}) job.mutable_problem()->add_shape(d);
  job.set_done(12);
  job.mutable_best()->set_registers(72);
  const std::string text = Print(job);
  EXPECT_TRUE(InJsonDialect<pb::JobProgress>(text));
  const Json j = Json::parse(text);
  EXPECT_EQ(j["problem"]["shape"], Json::array({"4096", "4096", "4096"}));
  EXPECT_EQ(j["done"], "12");
  EXPECT_EQ(j["state"], "STATE_SUCCEEDED");
  EXPECT_EQ(j["outcome_counts"]["OUTCOME_OK"], "10");
  EXPECT_EQ(j["best"]["registers"], 72);
  EXPECT_FALSE(j.contains("latest"));  // a message field that is not set is absent
}

// Protobuf's maps iterate in hash order, seeded per map: the printer must not show it.
TEST(JsonTest, EqualMapsPrintTheSameBytesInKeyOrder) {
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back(absl::StrCat("k", (i * 7919) % 1000));
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  const std::string first = Print(Job(keys));
  EXPECT_TRUE(InJsonDialect<pb::JobProgress>(first));
  std::mt19937 rng(1);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(keys.begin(), keys.end(), rng);
    ASSERT_EQ(Print(Job(keys)), first) << "round " << round;
  }
  const Json j = Json::parse(first);
  for (const char* map : {"outcome_counts", "phase_seconds"}) {
    std::vector<std::string> printed;
    for (const auto& [key, value] : j[map].items()) printed.push_back(key);
    EXPECT_EQ(printed, sorted) << map;
  }
}

TEST(JsonTest, OutputParsesBackIntoItsMessage) {
  pb::GetBestConfigResponse answer;
  answer.set_rung(pb::GetBestConfigResponse::RUNG_NEAREST_SHAPE);
  answer.add_tuned_shape(8192);
  (*answer.mutable_params())["tile"] = 64;
  answer.set_cubin(
      std::string("\x7f"
                  "ELF\0\x01",
                  6));
  answer.set_source("extern \"C\" __global__ void cutune_kernel() {}\n");
  answer.set_time_us(145.12);
  answer.mutable_launch()->set_concurrency(pb::LaunchContract::CONCURRENCY_ANY);
  const std::string text = Print(answer);
  EXPECT_TRUE(InJsonDialect<pb::GetBestConfigResponse>(text));
  EXPECT_EQ(Json::parse(text)["cubin"], "f0VMRgAB");  // bytes: base64
  const pb::GetBestConfigResponse back = ParseJsonAs<pb::GetBestConfigResponse>(text);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, answer));
}

TEST(JsonTest, TextEndsInOneNewline) {
  const std::string text = Print(pb::ListJobsResponse());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text[text.size() - 2], '\n');
}

// --- the reports of results and sweep ---------------------------------------------------------

TEST(JsonTest, ResultsReportGroupsRejectedRowsByOutcomeEnum) {
  pb::ListResultsResponse response;
  response.set_device_model("NVIDIA H200");
  *response.add_rows() = Row(64, pb::OUTCOME_OK, 145.12);
  *response.add_rows() = Row(32, pb::OUTCOME_PRUNED, 0, "72 registers x 1024 threads\nmore");
  *response.add_rows() = Row(16, pb::OUTCOME_PRUNED, 0, "72 registers x 1024 threads");
  *response.add_rows() = Row(8, pb::OUTCOME_WRONG_ANSWER, 0, "element (17, 3) differs");
  pb::Problem problem;
  problem.set_family("transpose");
  problem.set_dtype("f32");
  const pb::ResultsReport report = cli::ResultsReportOf(problem, response);
  const std::string text = Print(report);
  EXPECT_TRUE(InJsonDialect<pb::ResultsReport>(text));
  const Json j = Json::parse(text);
  EXPECT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["problem"]["family"], "transpose");
  ASSERT_EQ(j["rejected"].size(), 2u);
  EXPECT_EQ(j["rejected"][0]["outcome"], "OUTCOME_PRUNED");
  EXPECT_EQ(j["rejected"][0]["reason"], "72 registers x 1024 threads");
  EXPECT_EQ(j["rejected"][0]["count"], "2");
  EXPECT_EQ(j["rejected"][0]["example"], (Json{{"rows", "8"}, {"tile", "32"}}));
  EXPECT_EQ(j["rejected"][1]["outcome"], "OUTCOME_WRONG_ANSWER");
  // The text summary keeps its labels.
  const std::vector<pb::Measurement> rows(response.rows().begin(), response.rows().end());
  EXPECT_THAT(cli::RejectedSummary(rows),
              AllOf(HasSubstr("pruned "), HasSubstr("wrong_answer"), HasSubstr("rows=8,tile=32"),
                    Not(HasSubstr("OUTCOME_"))));
}

TEST(JsonTest, SweepReportHasTheJobTheFastestRowsAndTheRejected) {
  pb::ListResultsResponse results;
  results.set_device_model("NVIDIA H200");
  *results.add_rows() = Row(16, pb::OUTCOME_OK, 300);
  *results.add_rows() = Row(64, pb::OUTCOME_OK, 100);
  *results.add_rows() = Row(32, pb::OUTCOME_OK, 200);
  *results.add_rows() = Row(8, pb::OUTCOME_COMPILE_FAILED, 0, "ptxas fatal");
  const pb::SweepReport report = cli::SweepReportOf(Job({"OUTCOME_OK"}), results, 2);
  const std::string text = Print(report);
  EXPECT_TRUE(InJsonDialect<pb::SweepReport>(text));
  const Json j = Json::parse(text);
  EXPECT_EQ(j["job"]["state"], "STATE_SUCCEEDED");
  EXPECT_EQ(j["device_model"], "NVIDIA H200");
  ASSERT_EQ(j["top"].size(), 2u);
  EXPECT_EQ(j["top"][0]["params"]["tile"], "64");
  EXPECT_EQ(j["top"][1]["params"]["tile"], "32");
  ASSERT_EQ(j["rejected"].size(), 1u);
  EXPECT_EQ(j["rejected"][0]["outcome"], "OUTCOME_COMPILE_FAILED");
}

// One set of spill names: what `space compile` reports per candidate is named as in Measurement.
TEST(JsonTest, CompiledCandidatesNameResourcesAsMeasurementsDo) {
  const auto* candidate = pb::CompiledCandidate::descriptor();
  const auto* measurement = pb::Measurement::descriptor();
  for (const char* name : {"params", "outcome", "detail", "registers", "shared_bytes",
                           "spill_store_bytes", "spill_load_bytes", "compile_ms"}) {
    const auto* a = candidate->FindFieldByName(name);
    const auto* b = measurement->FindFieldByName(name);
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(b, nullptr) << name;
    EXPECT_EQ(a->type(), b->type()) << name;
  }
  EXPECT_EQ(measurement->FindFieldByName("spill_bytes"), nullptr);
}

TEST(JsonTest, EnumLabelDropsTheTypePrefix) {
  EXPECT_EQ(cli::EnumLabel(pb::OUTCOME_WRONG_ANSWER), "wrong_answer");
  EXPECT_EQ(cli::EnumLabel(pb::JobProgress::STATE_RUNNING), "running");
  EXPECT_EQ(cli::EnumLabel(pb::TableDiffEntry::CHANGE_ONLY_IN_A), "only_in_a");
  EXPECT_EQ(cli::EnumLabel(static_cast<pb::Outcome>(99)), "unknown(99)");
}

}  // namespace
}  // namespace cutune::testing
