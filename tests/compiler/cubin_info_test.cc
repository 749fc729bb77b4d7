#include "server/compiler/cubin_info.h"

#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/tuner/candidate.h"
#include "tests/compiler/test_util.h"

namespace cutune::compiler {
namespace {

// The cubin's own attributes must agree with ptxas' report wherever the log has one: real
// candidates of both families, including ones with a stack frame.
TEST(CubinInfoTest, AgreesWithThePtxasReport) {
  int checked = 0;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    int taken = 0;
    int seen = 0;
    family->default_space().ForEachValid([&](uint64_t, const Params& params) {
      if (seen++ % 97 != 0 || taken >= 4) return;
      ++taken;
      auto compiled = Compile(tuner::CandidateRequest(*family, params, {}, "sm_90"));
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      ASSERT_TRUE(compiled->ok) << compiled->log;
      auto from_cubin = ReadCubinResources(compiled->cubin);
      ASSERT_TRUE(from_cubin.ok()) << from_cubin.status();
      const ResourceUsage& logged = compiled->resources.at("cutune_kernel");
      const ResourceUsage& read = from_cubin->at("cutune_kernel");
      EXPECT_GT(read.registers, 0);
      EXPECT_EQ(read.registers, logged.registers) << FormatParams(params);
      EXPECT_LE(read.stack_bytes, logged.stack_bytes) << FormatParams(params);
      ++checked;
    });
  }
  EXPECT_GE(checked, 6);
}

TEST(CubinInfoTest, StackFrameIsRead) {
  auto compiled = Compile({.source = testing::kStackAndSpillKernels,
                           .options = {"--maxrregcount=24"},
                           .arch = "sm_80"});
  ASSERT_TRUE(compiled.ok() && compiled->ok);
  auto read = ReadCubinResources(compiled->cubin);
  ASSERT_TRUE(read.ok()) << read.status();
  for (const char* kernel : {"local_array", "regs"}) {
    EXPECT_EQ(read->at(kernel).registers, compiled->resources.at(kernel).registers) << kernel;
    EXPECT_EQ(read->at(kernel).stack_bytes, compiled->resources.at(kernel).stack_bytes) << kernel;
  }
  EXPECT_EQ(read->at("local_array").stack_bytes, 1024);
}

TEST(CubinInfoTest, GarbageIsInvalidArgument) {
  EXPECT_EQ(ReadCubinResources("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadCubinResources(std::string(100, 'x')).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string truncated = "\x7f" "ELF";
  truncated += std::string("\x02\x01", 2);
  truncated += std::string(70, '\xff');
  EXPECT_EQ(ReadCubinResources(truncated).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cutune::compiler
