// ProfileCandidate end to end on the fake worker and a fake ncu (tests/service/assets/fake-ncu):
// the candidate queued on its GPU, the one-shot worker run under "ncu", the counters stored
// with the row and listed by ListResults; and each error the RPC promises.
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/dashboard/pages.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string FakeNcu() { return (AssetsDir() / "fake-ncu").string(); }

ServerOptions WithNcu(std::string path) {
  ServerOptions options;
  options.ncu_path = std::move(path);
  return options;
}

pb::ProfileCandidateRequest WinnerOf(int64_t rows, int64_t cols) {
  pb::ProfileCandidateRequest request;
  request.mutable_problem()->set_family("transpose");
  request.mutable_problem()->add_shape(rows);
  request.mutable_problem()->add_shape(cols);
  request.set_winner(true);
  return request;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Tunes the small transpose job to its end.
void Tune(TestServer& server, int64_t rows, int64_t cols) {
  pb::StartTuningResponse started;
  ASSERT_TRUE(server.stub().StartTuning(Context().get(), SmallJob(rows, cols), &started).ok());
  ASSERT_EQ(WaitForJob(server.stub(), started.job_id()).state(),
            pb::JobProgress::STATE_SUCCEEDED);
}

TEST(ProfileTest, AbsentNcuIsFailedPreconditionNamingWhereItLooked) {
  TestServer server(WithNcu("/nonexistent/ncu"));
  pb::ProfileCandidateResponse response;
  grpc::Status status =
      server.stub().ProfileCandidate(Context().get(), WinnerOf(64, 64), &response);
  EXPECT_THAT(status, HasStatus(grpc::StatusCode::FAILED_PRECONDITION,
                                "Nsight Compute (ncu) not found: looked at /nonexistent/ncu "
                                "(--ncu)"));
}

TEST(ProfileTest, TheWinnersCountersAreStoredWithItsRowAndListed) {
  TestServer server(WithNcu(FakeNcu()));
  const std::string worker_log = server.dir().File("runs.log");
  const std::string ncu_log = server.dir().File("ncu.log");
  ScopedEnv runs("FAKE_WORKER_RUN_LOG", worker_log);
  ScopedEnv args("FAKE_NCU_LOG", ncu_log);
  Tune(server, 64, 64);

  pb::ProfileCandidateResponse response;
  grpc::Status status =
      server.stub().ProfileCandidate(Context().get(), WinnerOf(64, 64), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.stored());
  EXPECT_EQ(response.device_model(), "Fake GPU");
  EXPECT_EQ(response.profile().ncu_version(), "2025.3.1.0");
  ASSERT_THAT(response.profile().metrics(), SizeIs(6));
  std::map<std::string, pb::ProfileMetric> by_name;
  for (const pb::ProfileMetric& m : response.profile().metrics()) by_name[m.name()] = m;
  EXPECT_DOUBLE_EQ(by_name["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"].value(), 1024);
  EXPECT_DOUBLE_EQ(by_name["gpu__time_duration.sum"].value(), 12480);
  EXPECT_EQ(by_name["gpu__time_duration.sum"].unit(), "ns");
  EXPECT_GT(response.row().time_us(), 0);
  EXPECT_EQ(response.row().params().size(), response.params().size());

  // The one-shot worker ran under ncu, which was told to measure the launch after the check.
  EXPECT_THAT(ReadAll(worker_log), HasSubstr("profile family=transpose kernel=cutune_kernel "
                                             "device=0"));
  EXPECT_THAT(ReadAll(ncu_log), HasSubstr("--kernel-name cutune_kernel --launch-skip 1 "
                                          "--launch-count 1 --target-processes all"));
  EXPECT_THAT(ReadAll(ncu_log), HasSubstr("--profile"));

  pb::ListResultsRequest list;
  list.mutable_problem()->set_family("transpose");
  list.mutable_problem()->add_shape(64);
  list.mutable_problem()->add_shape(64);
  pb::ListResultsResponse results;
  ASSERT_TRUE(server.stub().ListResults(Context().get(), list, &results).ok());
  int profiled = 0;
  for (const pb::Measurement& row : results.rows()) {
    if (row.profile().metrics_size() == 0) continue;
    ++profiled;
    EXPECT_EQ(row.sequence(), response.row().sequence());
    EXPECT_EQ(row.profile().ncu_version(), "2025.3.1.0");
    EXPECT_THAT(row.profile().metrics(), SizeIs(6));
  }
  EXPECT_EQ(profiled, 1);
  // The dashboard's sweep page shows them too.
  const std::string page = dashboard::SweepPage({"transpose 64x64 f32", nullptr, results});
  EXPECT_THAT(page, HasSubstr("<h2>Profiled (Nsight Compute)</h2>"));
  EXPECT_THAT(page, HasSubstr(">shared-memory bank conflicts</th>"));
  EXPECT_THAT(page, HasSubstr("<td class=\"num\">1024</td><td class=\"num\">87.4%</td>"));
  EXPECT_THAT(page, HasSubstr("<td class=\"num\">12.48 us</td><td>2025.3.1.0</td>"));

  // The sweep's GPU worker was stopped for the profile; the next job starts a fresh one.
  Tune(server, 128, 64);
}

TEST(ProfileTest, GivenParametersWithoutARowAreProfiledButNotStored) {
  TestServer server(WithNcu(FakeNcu()));
  pb::ProfileCandidateRequest request;
  request.mutable_problem()->set_family("transpose");
  request.mutable_problem()->add_shape(256);
  request.mutable_problem()->add_shape(256);
  (*request.mutable_params()->mutable_values())["pad"] = 1;
  pb::ProfileCandidateResponse response;
  grpc::Status status = server.stub().ProfileCandidate(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.stored());
  EXPECT_FALSE(response.has_row());
  EXPECT_EQ(response.params().at("pad"), 1);
  EXPECT_THAT(response.profile().metrics(), SizeIs(6));
}

TEST(ProfileTest, ErrorsSayWhatWentWrong) {
  TestServer server(WithNcu(FakeNcu()));
  pb::ProfileCandidateResponse response;
  EXPECT_THAT(server.stub().ProfileCandidate(Context().get(), WinnerOf(64, 64), &response),
              HasStatus(grpc::StatusCode::NOT_FOUND,
                        "no stored winner of transpose 64x64 f32 on Fake GPU"));
  pb::ProfileCandidateRequest bad = WinnerOf(64, 64);
  bad.set_winner(false);
  (*bad.mutable_params()->mutable_values())["nope"] = 1;
  EXPECT_THAT(server.stub().ProfileCandidate(Context().get(), bad, &response),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "nope"));

  Tune(server, 64, 64);
  {
    ScopedEnv mode("FAKE_NCU_MODE", "noperm");
    EXPECT_THAT(server.stub().ProfileCandidate(Context().get(), WinnerOf(64, 64), &response),
                HasStatus(grpc::StatusCode::FAILED_PRECONDITION, "ERR_NVGPUCTRPERM"));
  }
  {
    ScopedEnv outcome("FAKE_WORKER_PROFILE_OUTCOME", "wrong_answer");
    EXPECT_THAT(server.stub().ProfileCandidate(Context().get(), WinnerOf(64, 64), &response),
                HasStatus(grpc::StatusCode::FAILED_PRECONDITION,
                          "the candidate's run under ncu ended wrong_answer"));
  }
}

TEST(ProfileTest, ReadTokensMayNotProfile) {
  TempDir dir;
  const std::string admin = dir.File("admin"), read = dir.File("read");
  std::ofstream(admin) << "admin-token\n";
  std::ofstream(read) << "read-token\n";
  auto authorizer = Authorizer::FromFiles(admin, read);
  ASSERT_TRUE(authorizer.ok()) << authorizer.status();
  ServerOptions options = ServerOptions::Auth(*authorizer);
  options.ncu_path = FakeNcu();
  TestServer server(std::move(options));
  pb::ProfileCandidateResponse response;
  EXPECT_THAT(server.stub().ProfileCandidate(
                  Context(std::chrono::seconds(30), "read-token").get(), WinnerOf(64, 64),
                  &response),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, ""));
}

}  // namespace
}  // namespace cutune::service::testing
