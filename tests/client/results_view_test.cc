// How rows and outcomes are said (client/cli/results_view.h), without a daemon.
#include "client/cli/results_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::testing {
namespace {

namespace pb = ::cutune::v1;

TEST(ResultsViewTest, NoValidCandidateSaysWhatBecameOfTheCandidates) {
  pb::JobProgress job;
  (*job.mutable_outcome_counts())["OUTCOME_WRONG_ANSWER"] = 1;
  (*job.mutable_outcome_counts())["OUTCOME_PRUNED"] = 12;
  (*job.mutable_outcome_counts())["OUTCOME_COMPILE_FAILED"] = 3;
  (*job.mutable_outcome_counts())["OUTCOME_OK"] = 0;
  EXPECT_EQ(cli::NoValidCandidateReason(job), "12 pruned, 3 failed to compile, 1 wrong answer");
  EXPECT_THAT(cli::NoValidCandidateReason(pb::JobProgress()),
              ::testing::StartsWith("the space has no candidate"));
}

}  // namespace
}  // namespace cutune::testing
