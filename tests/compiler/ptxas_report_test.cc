// ParsePtxasReport on ptxas output captured verbatim from NVRTC 13.0 (--ptxas-options=-v), plus
// two constructed edge cases marked as such.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/compiler/compiler.h"
#include "tests/compiler/test_util.h"

namespace cutune::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using testing::SameUsage;

ResourceUsage Usage(int registers, int smem, int stack, int spill_stores, int spill_loads,
                    int cmem) {
  return {registers, smem, stack, spill_stores, spill_loads, cmem};
}

// sm_80, -maxrregcount=16: a register-limit warning, a user __constant__ array (module-wide
// cmem[3]), spills in `regs`, a 1024-byte local array plus shared memory in `spill`.
constexpr char kSm80Spills[] =
    R"(ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for 'regs' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for 'spill' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for 'add' with  24 of maxrregcount option
ptxas info    : 0 bytes gmem, 64 bytes cmem[3]
ptxas info    : Compiling entry function 'regs' for 'sm_80'
ptxas info    : Function properties for regs
ptxas         .     1624 bytes stack frame, 1652 bytes spill stores, 2972 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 1624 bytes cumulative stack size, 364 bytes cmem[0]
ptxas info    : Compile time = 58.538 ms
ptxas info    : Compiling entry function 'spill' for 'sm_80'
ptxas info    : Function properties for spill
ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 1024 bytes cumulative stack size, 1024 bytes smem, 372 bytes cmem[0]
ptxas info    : Compile time = 33.356 ms
ptxas info    : Compiling entry function 'add' for 'sm_80'
ptxas info    : Function properties for add
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 372 bytes cmem[0]
ptxas info    : Compile time = 1.212 ms
)";

// The same source for sm_90 without a register limit: sm_90 reports no cmem[0] line item.
constexpr char kSm90[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'regs' for 'sm_90'
ptxas info    : Function properties for regs
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 44 registers, used 0 barriers
ptxas info    : Compile time = 33.584 ms
ptxas info    : Compiling entry function 'spill' for 'sm_90'
ptxas info    : Function properties for spill
ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 50.621 ms
ptxas info    : Compiling entry function 'add' for 'sm_90'
ptxas info    : Function properties for add
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.859 ms
)";

// A __noinline__ device function (reported after the entries, not an entry itself) and a
// template kernel whose name ptxas prints mangled.
constexpr char kNoinlineAndTemplate[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4tmplILi4EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z4tmplILi4EEvPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 1.342 ms
ptxas info    : Compiling entry function 'caller' for 'sm_90'
ptxas info    : Function properties for caller
ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 6.960 ms
ptxas info    : Function properties for _Z6helperPfi
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

// -rdc=true: device functions are compiled on their own, before and after the entry, and the
// entry's report leaves out what its callees need (ptxas cannot know before linking).
constexpr char kRelocatable[] = R"(ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperPKfii$1
ptxas         .     264 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 10.152 ms
ptxas info    : Compiling entry function 'caller' for 'sm_90'
ptxas info    : Function properties for caller
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers
ptxas info    : Compile time = 5.539 ms
ptxas info    : Function properties for _Z6helperPKfii
ptxas         .     264 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 8.796 ms
)";

struct ReportCase {
  const char* name;
  const char* log;
  std::map<std::string, ResourceUsage> expected;
};

class ParsePtxasReportTest : public ::testing::TestWithParam<ReportCase> {};

TEST_P(ParsePtxasReportTest, MatchesExpected) {
  const ReportCase& c = GetParam();
  std::map<std::string, ResourceUsage> report = ParsePtxasReport(c.log);
  ASSERT_EQ(report.size(), c.expected.size());
  for (const auto& [name, usage] : c.expected) {
    ASSERT_TRUE(report.contains(name)) << name;
    EXPECT_THAT(report.at(name), SameUsage(usage)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Captured, ParsePtxasReportTest,
    ::testing::Values(
        ReportCase{"Sm80Spills",
                   kSm80Spills,
                   {{"regs", Usage(24, 0, 1624, 1652, 2972, 364 + 64)},
                    {"spill", Usage(24, 1024, 1024, 0, 0, 372 + 64)},
                    {"add", Usage(10, 0, 0, 0, 0, 372 + 64)}}},
        ReportCase{"Sm90",
                   kSm90,
                   {{"regs", Usage(44, 0, 0, 0, 0, 0)},
                    {"spill", Usage(32, 1024, 1024, 0, 0, 0)},
                    {"add", Usage(10, 0, 0, 0, 0, 0)}}},
        ReportCase{"NoinlineHelperIsNotAnEntry",
                   kNoinlineAndTemplate,
                   {{"_Z4tmplILi4EEvPf", Usage(8, 0, 0, 0, 0, 0)},
                    {"caller", Usage(40, 0, 256, 0, 0, 0)}}},
        ReportCase{"RelocatableDeviceCode", kRelocatable, {{"caller", Usage(40, 0, 0, 0, 0, 0)}}},
        ReportCase{"CompileErrorLogHasNoEntries",
                   "k.cu(1): error: identifier \"x\" is undefined\n\n1 error detected in the "
                   "compilation of \"k.cu\".\n",
                   {}},
        ReportCase{"Empty", "", {}}),
    [](const ::testing::TestParamInfo<ReportCase>& p) { return p.param.name; });

TEST(ParsePtxasReportStandaloneTest, CumulativeStackCountsCallees) {
  // Constructed: a cumulative stack larger than the entry's own frame (a non-inlined callee with
  // its own frame) counts in full.
  constexpr char kLog[] = R"(ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
ptxas         .     16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 0 barriers, 272 bytes cumulative stack size
ptxas info    : Function properties for _Z1fv
ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";
  EXPECT_THAT(ParsePtxasReport(kLog),
              ElementsAre(Pair("k", SameUsage(Usage(20, 0, 272, 0, 0, 0)))));
}

TEST(ParsePtxasReportStandaloneTest, WindowsLineEndings) {
  // Constructed: the same lines with CRLF endings.
  constexpr char kLog[] =
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\r\n"
      "ptxas info    : Function properties for k\r\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\r\n"
      "ptxas info    : Used 12 registers, used 0 barriers, 8 bytes cumulative stack size\r\n";
  EXPECT_THAT(ParsePtxasReport(kLog), ElementsAre(Pair("k", SameUsage(Usage(12, 0, 8, 4, 4, 0)))));
}

}  // namespace
}  // namespace cutune::compiler
