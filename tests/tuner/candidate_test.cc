// What a compiled candidate comes to (server/tuner/candidate.h), from made-up compiler answers:
// the one rule the sweep and `cutune space compile` share.
#include "server/tuner/candidate.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::tuner {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ReportCompiledTest : public ::testing::Test {
 protected:
  ReportCompiledTest() : family_(kernels::TransposeFamily()) {
    family_.default_space().ForEachValid([&](uint64_t, const Params& params) {
      if (params_.empty()) params_ = params;
    });
    limits_ = *kernels::DeviceLimits::ForArch("sm_90");
  }

  compiler::CompileResult Compiled(int registers) const {
    compiler::CompileResult compiled;
    compiled.ok = true;
    compiled.log = "ptxas info    : Used some registers";
    compiled.cubin = "not a cubin";
    compiled.resources[std::string(kernels::KernelFamily::kKernelName)] = {
        .registers = registers, .static_shared_bytes = 1024, .stack_bytes = 8};
    compiled.resources["some_helper"] = {.registers = 250};
    compiled.compile_ms = 12.5;
    compiled.from_cache = true;
    return compiled;
  }

  const kernels::KernelFamily& family_;
  Params params_;
  kernels::DeviceLimits limits_;
};

TEST_F(ReportCompiledTest, ACompiledCandidateWithinTheLimitsIsOk) {
  ASSERT_FALSE(params_.empty());
  CompileReport report = ReportCompiled(family_, params_, Compiled(32), limits_);
  EXPECT_EQ(report.outcome, Outcome::kOk);
  EXPECT_EQ(report.detail, "");
  EXPECT_EQ(report.params, params_);
  EXPECT_EQ(report.resources.registers, 32) << "the family's kernel, not another entry point";
  EXPECT_EQ(report.resources.static_shared_bytes, 1024);
  EXPECT_EQ(report.resources.stack_bytes, 8);
  EXPECT_EQ(report.compile_ms, 12.5);
  EXPECT_TRUE(report.from_cache);
}

TEST_F(ReportCompiledTest, ResourcesOverTheDeviceLimitArePruned) {
  CompileReport report = ReportCompiled(family_, params_, Compiled(300), limits_);
  EXPECT_EQ(report.outcome, Outcome::kPruned);
  EXPECT_EQ(report.detail, "300 registers per thread exceed the limit of 255 on sm_90");
  EXPECT_EQ(report.resources.registers, 300) << "kept for the row";
  EXPECT_EQ(report.compile_ms, 12.5);
}

TEST_F(ReportCompiledTest, AFailedCompilationKeepsTheEndOfTheLog) {
  compiler::CompileResult compiled;
  compiled.ok = false;
  compiled.log =
      std::string(2000, 'x') + "\ntranspose.cu(7): error: identifier \"q\" is undefined\n";
  compiled.compile_ms = 3;
  CompileReport report = ReportCompiled(family_, params_, compiled, limits_);
  EXPECT_EQ(report.outcome, Outcome::kCompileFailed);
  EXPECT_EQ(report.detail.size(), kLogExcerptChars + 3);
  EXPECT_THAT(report.detail, StartsWith("...x"));
  EXPECT_THAT(report.detail, EndsWith("error: identifier \"q\" is undefined\n"));
  EXPECT_EQ(report.compile_ms, 3);
}

TEST_F(ReportCompiledTest, AShortLogIsKeptWhole) {
  compiler::CompileResult compiled;
  compiled.ok = false;
  compiled.log = "transpose.cu(7): error: expected a \";\"\n1 error detected\n";
  CompileReport report = ReportCompiled(family_, params_, compiled, limits_);
  EXPECT_EQ(report.outcome, Outcome::kCompileFailed);
  EXPECT_EQ(report.detail, compiled.log);
}

// The options a candidate is built with at a shape: its defines, then the shape's, then the
// language standard; a shape-free request is the same without the shape's.
TEST(CandidateOptionsTest, TheShapesDefinesComeAfterTheCandidates) {
  const kernels::KernelFamily& matmul = kernels::MatmulFamily();
  Params params;
  matmul.default_space().ForEachValid([&](uint64_t, const Params& p) {
    if (params.empty() && p.at("vec") == 4 && p.at("db") == 1) params = p;
  });
  ASSERT_FALSE(params.empty());
  std::vector<std::string> expected = matmul.Defines(params);
  expected.push_back("--std=c++17");
  EXPECT_EQ(CandidateOptions(matmul, params, {}), expected);
  EXPECT_EQ(CandidateOptions(matmul, params, {4096, 4096, 4096}), expected);
  expected.insert(expected.end() - 1, "-DCT_SCALAR_B=1");
  EXPECT_EQ(CandidateOptions(matmul, params, {4096, 4095, 4096}), expected);
  const compiler::CompileRequest request =
      CandidateRequest(matmul, params, {4096, 4095, 4096}, "sm_90");
  EXPECT_EQ(request.options, expected);
  EXPECT_EQ(request.arch, "sm_90");
}

TEST(LogExcerptTest, CutsOnlyPastTheLimit) {
  EXPECT_EQ(LogExcerpt(""), "");
  const std::string full(kLogExcerptChars, 'a');
  EXPECT_EQ(LogExcerpt(full), full);
  const std::string longer = "b" + full;
  EXPECT_EQ(LogExcerpt(longer), "..." + full);
  EXPECT_THAT(LogExcerpt(longer), Not(HasSubstr("b")));
}

}  // namespace
}  // namespace cutune::tuner

namespace cutune::tuner {
namespace {

// Modules that keep state between launches (split-K's and stream-K's counters) are checked
// again after their timed launches; the others once.
TEST(RunRequestTest, ModulesWithStateAreVerifiedAgainAfterTheTimedLaunches) {
  const kernels::KernelFamily& matmul = kernels::MatmulFamily();
  compiler::CompileResult compiled;
  compiled.key = "k";
  const worker::v1::TimingPolicy policy;
  Params plain = matmul.baseline();
  Params split = plain, stream = plain;
  split["splitk"] = 4;
  stream["sk"] = 2;
  const Shape shape = {256, 256, 16384};
  EXPECT_FALSE(RunRequest(matmul, plain, shape, 132, compiled, policy, true).verify_again());
  EXPECT_TRUE(RunRequest(matmul, split, shape, 132, compiled, policy, true).verify_again());
  EXPECT_TRUE(RunRequest(matmul, stream, shape, 132, compiled, policy, true).verify_again());
  EXPECT_FALSE(RunRequest(matmul, split, shape, 132, compiled, policy, false).verify_again())
      << "nothing is verified without verify";
}

}  // namespace
}  // namespace cutune::tuner
