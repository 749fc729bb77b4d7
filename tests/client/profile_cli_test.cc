// `cutune profile` end to end: a real cutuned on the fake worker with a fake ncu
// (tests/service/assets/fake-ncu, selected with --ncu), a small sweep, the winner profiled, and
// the counters shown by `results` and `report` afterwards.
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/harness.h"

namespace cutune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Cutune() { return (BinDir() / "cutune").string(); }

const std::vector<std::string> kSmall = {"--param", "tile=32", "--param", "rows=8,16",
                                         "--param", "pad=0,1", "--param", "vec=1",
                                         "--param", "minb=0",  "--param", "swizzle=0",
                                         "--param", "smem=1"};

TEST(CliProfileTest, TheWinnerIsProfiledAndResultsAndReportShowIt) {
  auto daemon = Daemon::Start({"--worker", FakeWorker(), "--ncu", CUTUNE_FAKE_NCU});
  ASSERT_NE(daemon, nullptr);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--server", daemon->target()});
    return RunProgram(Cutune(), args, {}, 120);
  };
  std::vector<std::string> sweep = {"sweep", "transpose", "--shape", "256x256"};
  sweep.insert(sweep.end(), kSmall.begin(), kSmall.end());
  RunResult swept = run(sweep);
  ASSERT_EQ(swept.exit_code, 0) << swept.out << swept.err;

  RunResult before = run({"results", "transpose", "--shape", "256x256"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_THAT(before.out, Not(HasSubstr("profiled")));

  RunResult profiled = run({"profile", "transpose", "--shape", "256x256", "--winner"});
  ASSERT_EQ(profiled.exit_code, 0) << profiled.out << profiled.err;
  std::cout << profiled.out;
  EXPECT_THAT(profiled.out, HasSubstr("with Nsight Compute 2025.3.1.0:\n"));
  EXPECT_THAT(profiled.out, HasSubstr("  shared-memory bank conflicts: 1024 (the seeds' yardstick "
                                      "for padding/swizzle)\n"));
  EXPECT_THAT(profiled.out, HasSubstr("  DRAM throughput: 87.4% ("));
  EXPECT_THAT(profiled.out, HasSubstr("  registers per thread: 30 ("));
  EXPECT_THAT(profiled.out, HasSubstr("  profiled duration: 12.48 us ("));
  EXPECT_THAT(profiled.out, HasSubstr("stored with the row"));

  RunResult after = run({"results", "transpose", "--shape", "256x256"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  std::cout << after.out;
  EXPECT_THAT(after.out, HasSubstr("profiled (Nsight Compute, `cutune profile`):\n"));
  EXPECT_THAT(after.out, HasSubstr("bank conflicts 1024 · DRAM 87.4% · occupancy 71.9% · L2 hit "
                                   "50.0% · 30 regs · 12.48 us (ncu 2025.3.1.0)\n"));
  RunResult json = run({"results", "transpose", "--shape", "256x256", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"ncu_version\""));

  TempDir dir;
  const std::string html = (dir.path() / "report.html").string();
  RunResult report =
      run({"report", "transpose", "--shape", "256x256", "--x", "rows", "--y", "pad", "-o", html});
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_THAT(report.out, HasSubstr("profiled (Nsight Compute, `cutune profile`):\n"));
  EXPECT_THAT(report.out, HasSubstr(": bank conflicts 1024 · DRAM 87.4%"));
  const std::string page = ReadFileOrDie(html);
  EXPECT_THAT(page, HasSubstr("<h2>Profiled (Nsight Compute)</h2>"));
  EXPECT_THAT(page, HasSubstr("bank conflicts 1024 · DRAM 87.4% · occupancy 71.9%"));

  // --params and --winner exclude each other; a bad --params is a usage error.
  EXPECT_EQ(run({"profile", "transpose", "--shape", "256x256", "--winner", "--params", "pad=1"})
                .exit_code,
            2);
  EXPECT_EQ(run({"profile", "transpose", "--shape", "256x256", "--params", "pad"}).exit_code, 2);
}

TEST(CliProfileTest, WithoutNcuItSaysWhereItLooked) {
  auto daemon = Daemon::Start({"--worker", FakeWorker(), "--ncu", "/nonexistent/ncu"});
  ASSERT_NE(daemon, nullptr);
  RunResult r = RunProgram(Cutune(), {"profile", "transpose", "--shape", "256x256", "--server",
                                      daemon->target()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("Nsight Compute (ncu) not found: looked at /nonexistent/ncu"));
}

}  // namespace
}  // namespace cutune::testing
