// NVRTC wrapper: cubins for real archs, resource reports, compile failures and misuse.
#include "server/compiler/compiler.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/test_util.h"

namespace cutune::compiler {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::SizeIs;
using testing::StatusIs;

bool IsElf(const std::string& image) {
  return image.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

class CompileArchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CompileArchTest, TinyKernelGivesCubinAndResources) {
  CompileRequest request{.source = testing::kAddKernel, .arch = GetParam()};
  absl::StatusOr<CompileResult> result = Compile(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok) << result->log;
  EXPECT_TRUE(IsElf(result->cubin));
  EXPECT_THAT(result->log,
              HasSubstr(std::string("Compiling entry function 'add' for '") + GetParam() + "'"));
  ASSERT_THAT(result->resources, SizeIs(1));
  ASSERT_TRUE(result->resources.contains("add"));
  EXPECT_GT(result->resources.at("add").registers, 0);
  EXPECT_EQ(result->resources.at("add").spill_store_bytes, 0);
  EXPECT_GT(result->compile_ms, 0);
  EXPECT_FALSE(result->from_cache);
  EXPECT_EQ(result->key, ContentKey(request));
}

INSTANTIATE_TEST_SUITE_P(Archs, CompileArchTest, ::testing::Values("sm_80", "sm_90"));

TEST(CompileTest, BrokenSourceIsAResultWithTheLog) {
  absl::StatusOr<CompileResult> result =
      Compile({.source = testing::kBrokenKernel, .source_name = "broken.cu"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok);
  EXPECT_THAT(result->log, HasSubstr("identifier \"undeclared_thing\" is undefined"));
  EXPECT_THAT(result->log, HasSubstr("broken.cu"));
  EXPECT_THAT(result->cubin, IsEmpty());
  EXPECT_THAT(result->resources, IsEmpty());
}

TEST(CompileTest, StackFrameAndSpillsAreReported) {
  absl::StatusOr<CompileResult> result = Compile({.source = testing::kStackAndSpillKernels,
                                                  .options = {"--maxrregcount=24"},
                                                  .arch = "sm_80"});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->ok) << result->log;
  ASSERT_TRUE(result->resources.contains("local_array"));
  ASSERT_TRUE(result->resources.contains("regs"));
  EXPECT_EQ(result->resources.at("local_array").stack_bytes, 1024);
  const ResourceUsage& regs = result->resources.at("regs");
  EXPECT_LE(regs.registers, 24);
  EXPECT_GT(regs.spill_store_bytes, 0);
  EXPECT_GT(regs.spill_load_bytes, 0);
  EXPECT_GT(regs.stack_bytes, 0);
  EXPECT_GT(regs.constant_bytes, 0);  // sm_80 reports kernel parameters in cmem[0]
}

TEST(CompileTest, UnknownOptionIsInvalidArgumentWithNvrtcsMessage) {
  EXPECT_THAT(Compile({.source = testing::kAddKernel, .options = {"--no-such-option"}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unrecognized option --no-such-option")));
}

TEST(CompileTest, OptionsAreNeverSplitOnSpaces) {
  // One element is one option: this defines VALUE as "1 -DOTHER=2" and leaves OTHER undefined.
  absl::StatusOr<CompileResult> result =
      Compile({.source = std::string(testing::kAddKernel) +
                         "#ifdef OTHER\n#error options were split\n#endif\n",
               .options = {"-DVALUE=1 -DOTHER=2"}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok) << result->log;
}

TEST(CompileTest, ArchOptionsAreRejected) {
  for (const char* option : {"--gpu-architecture=sm_80", "-arch=sm_80", "-arch"}) {
    EXPECT_THAT(Compile({.source = testing::kAddKernel, .options = {option}}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("CompileRequest::arch")))
        << option;
  }
}

TEST(CompileTest, BadArchIsInvalidArgument) {
  EXPECT_THAT(Compile({.source = testing::kAddKernel, .arch = "compute_90"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sm_XY")));
}

TEST(CompileTest, SourceWithNulIsInvalidArgument) {
  EXPECT_THAT(Compile({.source = std::string("int x;\0int y;", 13)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("NUL")));
}

TEST(ValidateArchTest, AcceptsSupportedArchs) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100"}) {
    EXPECT_TRUE(ValidateArch(arch).ok()) << arch << ": " << ValidateArch(arch);
  }
}

TEST(ValidateArchTest, RejectsMalformedAndUnsupported) {
  for (const char* arch :
       {"", "sm_", "sm90", "sm_9x", "compute_90", "sm_90ab", "SM_90", "sm_-90"}) {
    EXPECT_EQ(ValidateArch(arch).code(), absl::StatusCode::kInvalidArgument) << arch;
  }
  // NVRTC 13 dropped Volta; sm_10 never existed.
  absl::Status volta = ValidateArch("sm_70");
  EXPECT_EQ(volta.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(volta.message()), HasSubstr("sm_90"));  // lists what is supported
  EXPECT_EQ(ValidateArch("sm_10").code(), absl::StatusCode::kInvalidArgument);
}

TEST(NvrtcVersionTest, IsMajorDotMinor) {
  EXPECT_THAT(NvrtcVersion(), MatchesRegex("[0-9]+\\.[0-9]+"));
}

TEST(ContentKeyTest, EveryPartMatters) {
  const CompileRequest base{.source = "a", .options = {"-DX=1"}, .arch = "sm_90"};
  const std::string key = ContentKey(base);
  EXPECT_THAT(key, MatchesRegex("[0-9a-f]{64}"));
  EXPECT_EQ(ContentKey(base), key);
  CompileRequest other = base;
  other.source = "b";
  EXPECT_NE(ContentKey(other), key);
  other = base;
  other.source_name = "other.cu";
  EXPECT_NE(ContentKey(other), key);
  other = base;
  other.options = {"-DX=2"};
  EXPECT_NE(ContentKey(other), key);
  other = base;
  other.options.push_back("-lineinfo");
  EXPECT_NE(ContentKey(other), key);
  other = base;
  other.arch = "sm_80";
  EXPECT_NE(ContentKey(other), key);
}

TEST(ContentKeyTest, ConcatenationsDoNotCollide) {
  EXPECT_NE(ContentKey({.source = "x", .options = {"ab", "c"}}),
            ContentKey({.source = "x", .options = {"a", "bc"}}));
  EXPECT_NE(ContentKey({.source = "x", .options = {"ab"}}),
            ContentKey({.source = "x", .options = {"a", "b"}}));
  EXPECT_NE(ContentKey({.source = "ab", .source_name = "c"}),
            ContentKey({.source = "a", .source_name = "bc"}));
  EXPECT_NE(ContentKey({.source = "x", .options = {}}),
            ContentKey({.source = "x", .options = {""}}));
}

}  // namespace
}  // namespace cutune::compiler
