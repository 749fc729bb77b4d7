// ProfileCandidate on a real GPU with the real cutune-worker and the real Nsight Compute (label
// gpu): the transpose 4096x4096 and matmul 1024x1024x1024 baselines, then each problem's winner
// after a small sweep, every counter present and plausible, the winner's stored with its row.
// ncu: $CUTUNE_NCU, else /usr/local/cuda/bin/ncu. Needs permission to read the counters (root,
// or NVreg_RestrictProfilingToAdminUsers=0).
#include <cstdlib>
#include <iostream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

std::string Ncu() {
  const char* env = std::getenv("CUTUNE_NCU");
  return env != nullptr && *env != '\0' ? env : "/usr/local/cuda/bin/ncu";
}

ServerOptions RealGpu() {
  ServerOptions options = ServerOptions::Worker((BinDir() / "cutune-worker").string());
  options.ncu_path = Ncu();
  return options;
}

pb::Problem Problem(const std::string& family, std::vector<int64_t> shape) {
  pb::Problem problem;
  problem.set_family(family);
  for (int64_t d : shape) problem.add_shape(d);
  problem.set_dtype("f32");
  return problem;
}

std::map<std::string, pb::ProfileMetric> ByName(const pb::Profile& profile) {
  std::map<std::string, pb::ProfileMetric> out;
  for (const pb::ProfileMetric& m : profile.metrics()) out[m.name()] = m;
  return out;
}

// Every counter is there and within what the hardware allows.
void ExpectPlausible(const pb::ProfileCandidateResponse& r, const std::string& what) {
  std::cout << what << " (ncu " << r.profile().ncu_version() << "):";
  for (const pb::ProfileMetric& m : r.profile().metrics()) {
    std::cout << "\n  " << m.name() << " = " << m.value() << " " << m.unit();
  }
  if (r.has_row()) std::cout << "\n  stored row: " << r.row().time_us() << " us";
  std::cout << "\n";
  EXPECT_FALSE(r.profile().ncu_version().empty()) << what;
  auto m = ByName(r.profile());
  ASSERT_EQ(m.size(), 6u) << what;
  const double dram = m["dram__throughput.avg.pct_of_peak_sustained_elapsed"].value();
  EXPECT_GT(dram, 0) << what;
  EXPECT_LE(dram, 100) << what;
  const double occupancy = m["sm__warps_active.avg.pct_of_peak_sustained_active"].value();
  EXPECT_GT(occupancy, 0) << what;
  EXPECT_LE(occupancy, 100) << what;
  const double l2 = m["lts__t_sector_hit_rate.pct"].value();
  EXPECT_GE(l2, 0) << what;
  EXPECT_LE(l2, 100) << what;
  EXPECT_GT(m["launch__registers_per_thread"].value(), 0) << what;
  EXPECT_LE(m["launch__registers_per_thread"].value(), 255) << what;
  EXPECT_GE(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"].value(), 0) << what;
  EXPECT_GT(m["gpu__time_duration.sum"].value(), 0) << what;
  EXPECT_EQ(m["gpu__time_duration.sum"].unit(), "ns") << what;  // ncu 2025.3, base units
}

pb::ProfileCandidateResponse Profile(TestServer& server, const pb::Problem& problem, bool winner) {
  pb::ProfileCandidateRequest request;
  *request.mutable_problem() = problem;
  request.set_winner(winner);
  pb::ProfileCandidateResponse response;
  grpc::Status status = server.stub().ProfileCandidate(Context(std::chrono::minutes(5)).get(),
                                                       request, &response);
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  return response;
}

void SmallSweep(TestServer& server, const pb::Problem& problem) {
  pb::StartTuningRequest request;
  *request.mutable_problem() = problem;
  request.set_strategy("random");
  request.mutable_budget()->set_max_evaluations(6);
  request.set_seed(7);
  pb::StartTuningResponse started;
  grpc::Status status = server.stub().StartTuning(Context().get(), request, &started);
  ASSERT_TRUE(status.ok()) << status.error_message();
  pb::JobProgress done = WaitForJob(server.stub(), started.job_id(), std::chrono::seconds(300));
  ASSERT_EQ(done.state(), pb::JobProgress::STATE_SUCCEEDED) << done.error();
}

void ProfileBaselineAndWinner(const std::string& family, std::vector<int64_t> shape) {
  TestServer server(RealGpu());
  const pb::Problem problem = Problem(family, shape);
  const std::string name = family + " " + std::to_string(shape[0]);
  ExpectPlausible(Profile(server, problem, /*winner=*/false), name + " baseline");

  SmallSweep(server, problem);
  pb::ProfileCandidateResponse winner = Profile(server, problem, /*winner=*/true);
  ExpectPlausible(winner, name + " winner");
  EXPECT_TRUE(winner.stored());
  ASSERT_TRUE(winner.has_row());
  EXPECT_GT(winner.row().time_us(), 0);
  // ncu's register count is the driver's, which the sweep stored.
  EXPECT_EQ(ByName(winner.profile())["launch__registers_per_thread"].value(),
            winner.row().registers());

  pb::ListResultsRequest list;
  *list.mutable_problem() = problem;
  pb::ListResultsResponse results;
  ASSERT_TRUE(server.stub().ListResults(Context().get(), list, &results).ok());
  int profiled = 0;
  for (const pb::Measurement& row : results.rows()) profiled += row.profile().metrics_size() > 0;
  EXPECT_EQ(profiled, 1);
}

TEST(ProfileGpuTest, Transpose4096) { ProfileBaselineAndWinner("transpose", {4096, 4096}); }

TEST(ProfileGpuTest, Matmul1024) { ProfileBaselineAndWinner("matmul", {1024, 1024, 1024}); }

}  // namespace
}  // namespace cutune::service::testing
