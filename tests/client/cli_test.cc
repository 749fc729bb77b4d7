// End-to-end tests of the cutune CLI: the real binary against a real cutuned serving the
// fixture tables on a unix socket (no GPU needed). Each test checks the exit code and the
// exact line or figures a user or script relies on.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include <signal.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/report.h"
#include "cutune/v1/cli.pb.h"
#include "cutune/v1/cutune.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "nlohmann/json.hpp"
#include "server/core/version.h"
#include "server/tuner/strategy.h"
#include "tests/client/harness.h"
#include "tests/client/json_dialect.h"
#include "tests/client/png.h"

namespace cutune::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Json = nlohmann::json;
namespace pb = ::cutune::v1;

constexpr int kOk = 0, kFailure = 1, kUsage = 2, kUnavailable = 3, kNotFound = 4, kDiff = 6,
              kDenied = 7;

std::string Cutune() { return (BinDir() / "cutune").string(); }

// stderr is exactly one line starting "error: CODE: ".
::testing::AssertionResult OneErrorLine(const RunResult& r, const std::string& code) {
  const std::string prefix = "error: " + code + ": ";
  if (r.err.rfind(prefix, 0) != 0) return ::testing::AssertionFailure() << "stderr: " << r.err;
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1 || r.err.back() != '\n') {
    return ::testing::AssertionFailure() << "not one line: " << r.err;
  }
  return ::testing::AssertionSuccess();
}

// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        records.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        records.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\n') {
      records.emplace_back(1);
    } else {
      records.back().back() += c;
    }
  }
  if (records.back() == std::vector<std::string>(1)) records.pop_back();  // after the last \n
  return records;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = Daemon::Start().release(); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  // cutune ARGS --server <daemon>
  RunResult Run(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.push_back("--server");
    args.push_back(daemon_->target());
    return RunProgram(Cutune(), args, env);
  }
  // No daemon: `space compile` runs NVRTC over a whole space, minutes on a loaded 2-core
  // machine, so the hang guard is generous (a speed figure belongs in a benchmark).
  RunResult RunLocal(const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}) {
    return RunProgram(Cutune(), args, env, /*timeout_seconds=*/600);
  }

  static Daemon* daemon_;
  TempDir tmp_;
};

Daemon* CliTest::daemon_ = nullptr;

// --- help and usage ---------------------------------------------------------------------------

TEST_F(CliTest, HelpAtEveryLevelListsCommandsAndExitCodes) {
  RunResult top = RunLocal({"--help"});
  ASSERT_EQ(top.exit_code, kOk) << top.err;
  for (const char* command :
       {"devices", "get", "sweep", "results", "jobs", "cancel", "table", "report", "space"}) {
    EXPECT_THAT(top.out, HasSubstr(std::string("\n  ") + command + " ")) << command;
  }
  EXPECT_THAT(top.out, HasSubstr("Exit codes: 0 ok"));
  EXPECT_THAT(top.out, HasSubstr("CUTUNE_SERVER"));
  const std::vector<std::vector<std::string>> levels = {
      {"devices"}, {"get"},   {"sweep"},           {"results"},         {"jobs"},
      {"cancel"},  {"table"}, {"table", "export"}, {"table", "import"}, {"table", "diff"},
      {"report"},  {"space"}, {"space", "show"},   {"space", "compile"}};
  for (auto args : levels) {
    args.push_back("--help");
    RunResult r = RunLocal(args);
    EXPECT_EQ(r.exit_code, kOk) << args[0];
    EXPECT_THAT(r.out, AllOf(HasSubstr("Usage:"), HasSubstr("Exit codes:"))) << args[0];
  }
  EXPECT_THAT(RunLocal({"sweep", "--help"}).out,
              AllOf(HasSubstr("--param"), HasSubstr("--max-evals"), HasSubstr("--no-wait"),
                    HasSubstr("--server"), HasSubstr("--tls-ca"), HasSubstr("--token")));
}

TEST_F(CliTest, VersionOfBothBinariesExitsZero) {
  // No daemon there: this cutune's version, a one-line note, exit 0.
  const std::string nowhere = "unix:" + (tmp_.path() / "nobody.sock").string();
  RunResult cli = RunLocal({"--version", "--server", nowhere});
  EXPECT_EQ(cli.exit_code, kOk) << cli.err;
  EXPECT_EQ(cli.out, "cutune " CUTUNE_VERSION "\n");
  EXPECT_THAT(cli.err, StartsWith("note: no daemon version: UNAVAILABLE: cannot reach cutuned at " +
                                  nowhere));
  EXPECT_EQ(std::count(cli.err.begin(), cli.err.end(), '\n'), 1) << cli.err;
  RunResult daemon = RunProgram((BinDir() / "cutuned").string(), {"--version"});
  EXPECT_EQ(daemon.exit_code, 0) << daemon.err;
  EXPECT_EQ(daemon.out, "cutuned " CUTUNE_VERSION "\n");
}

TEST_F(CliTest, VersionAsksTheDaemonForItsVersionAndApiLevel) {
  RunResult r = Run({"--version"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_EQ(r.out, "cutune " CUTUNE_VERSION "\ncutuned " CUTUNE_VERSION " at " + daemon_->target() +
                       absl::StrCat(": API level ", kApiLevel,
                                    ", role admin (no tokens required), no GPU (serves tables)\n"));
  EXPECT_EQ(r.err, "");
}

// As git and kubectl: `cutune --server H devices` is `cutune devices --server H`.
TEST_F(CliTest, ConnectionOptionsGoBeforeOrAfterTheCommand) {
  const std::string nowhere = "unix:" + (tmp_.path() / "nobody.sock").string();
  RunResult before = RunLocal({"--server", daemon_->target(), "--timeout", "5", "devices"});
  EXPECT_EQ(before.exit_code, kOk) << before.err;
  EXPECT_THAT(before.out, HasSubstr("cutuned at " + daemon_->target()));
  RunResult nested = RunLocal({"--server", daemon_->target(), "table", "export", "-o",
                               (tmp_.path() / "t.json").string()});
  EXPECT_EQ(nested.exit_code, kOk) << nested.err;
  // Both given: the one after the command wins.
  EXPECT_EQ(RunLocal({"--server", nowhere, "devices", "--server", daemon_->target()}).exit_code,
            kOk);
  EXPECT_EQ(RunLocal({"--server", daemon_->target(), "devices", "--server", nowhere}).exit_code,
            kUnavailable);
  // A local command talks to no daemon, and a command's own exclusions hold.
  RunResult local = RunLocal({"--server", daemon_->target(), "space", "show", "transpose"});
  EXPECT_EQ(local.exit_code, kUsage);
  EXPECT_THAT(local.err, HasSubstr("--server: `space show` runs here and talks to no daemon"));
  RunResult excluded =
      RunLocal({"--server", daemon_->target(), "get", "transpose", "--shape", "8192x8192",
                "--table", (AssetsDir() / "tables" / "h200_fixture.json").string()});
  EXPECT_EQ(excluded.exit_code, kUsage);
  EXPECT_THAT(excluded.err, HasSubstr("excludes"));
}

TEST_F(CliTest, TimeoutMustBeAtLeastAMillisecond) {
  for (const char* bad : {"0", "-1", "0.0000001", "abc", "1e300"}) {
    for (bool top : {false, true}) {
      std::vector<std::string> args = {"devices"};
      args.insert(top ? args.begin() : args.end(), {"--timeout", bad});
      RunResult r = RunLocal(args);
      EXPECT_EQ(r.exit_code, kUsage) << bad;
      EXPECT_THAT(r.err, StartsWith("--timeout: ")) << bad;
      EXPECT_LT(r.err.size(), 200u) << r.err;  // no 300-digit range
    }
  }
  EXPECT_THAT(RunLocal({"devices", "--timeout", "0"}).err,
              HasSubstr("must be a positive number of seconds, got 0"));
  EXPECT_THAT(RunLocal({"devices", "--timeout", "0.0000001"}).err,
              HasSubstr("must be at least 0.001 s (1 ms)"));
  EXPECT_EQ(Run({"devices", "--timeout", "0.5"}).exit_code, kOk);
}

TEST_F(CliTest, AnUnknownCommandIsNamedAndTheCommandsListed) {
  RunResult r = RunLocal({"frobnicate"});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_THAT(r.err, StartsWith("unknown command 'frobnicate' (commands: devices, get, results, "
                                "jobs, cancel, sweep, table, report, profile, space)\n"));
  RunResult nested = RunLocal({"table", "frob"});
  EXPECT_EQ(nested.exit_code, kUsage);
  EXPECT_THAT(nested.err, StartsWith("unknown command 'table frob' (commands: export, import, "
                                     "diff)\n"));
  EXPECT_THAT(RunLocal({}).err, StartsWith("a command is required (commands: devices, "));
  EXPECT_THAT(RunLocal({"space"}).err, StartsWith("`space` needs a command (commands: show, "));
  // A command's own stray argument is still CLI11's message about that argument.
  EXPECT_THAT(RunLocal({"space", "show", "transpose", "extra"}).err,
              HasSubstr("not expected: extra"));
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunLocal({}).exit_code, kUsage);
  EXPECT_EQ(RunLocal({"frobnicate"}).exit_code, kUsage);
  EXPECT_EQ(RunLocal({"get", "transpose"}).exit_code, kUsage);  // --shape is required
  RunResult bad_shape = RunLocal({"get", "transpose", "--shape", "8192x"});
  EXPECT_EQ(bad_shape.exit_code, kUsage);
  EXPECT_THAT(bad_shape.err, HasSubstr("bad shape '8192x'"));
  EXPECT_EQ(RunLocal({"sweep", "transpose", "--shape", "64x64", "--param", "tile"}).exit_code,
            kUsage);
  EXPECT_EQ(RunLocal({"sweep", "transpose", "--shape", "64x64", "--param", "tile=32,x"}).exit_code,
            kUsage);
  EXPECT_EQ(RunLocal({"table", "import", "x.json", "--policy", "whatever"}).exit_code, kUsage);
  EXPECT_EQ(
      RunLocal({"get", "matmul", "--shape", "8x8x8", "--device", "0", "--model", "m"}).exit_code,
      kUsage);
}

TEST_F(CliTest, ShapeWithWrongDimensionsIsOneServerLine) {
  RunResult r = Run({"get", "transpose", "--shape", "8192x8192x8192"});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_TRUE(OneErrorLine(r, "INVALID_ARGUMENT"));
}

// --- connection ---------------------------------------------------------------------------------

TEST_F(CliTest, ServerDownIsUnavailable) {
  const std::string nowhere = "unix:" + (tmp_.path() / "nobody.sock").string();
  RunResult r = RunLocal({"devices", "--server", nowhere});
  EXPECT_EQ(r.exit_code, kUnavailable);
  EXPECT_TRUE(OneErrorLine(r, "UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("cannot reach cutuned at " + nowhere));
}

TEST_F(CliTest, ServerComesFromFlagThenEnvironment) {
  const std::string env = "CUTUNE_SERVER=" + daemon_->target();
  EXPECT_EQ(RunLocal({"devices"}, {env}).exit_code, kOk);
  const std::string bogus = "CUTUNE_SERVER=unix:" + (tmp_.path() / "nobody.sock").string();
  EXPECT_EQ(RunLocal({"devices"}, {bogus}).exit_code, kUnavailable);
  EXPECT_EQ(RunLocal({"devices", "--server", daemon_->target()}, {bogus}).exit_code, kOk);
}

// --- devices, get -------------------------------------------------------------------------------

TEST_F(CliTest, DevicesOnATableServer) {
  RunResult r = Run({"devices"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no GPU: serving tables only"));
  RunResult j = Run({"devices", "--json"});
  ASSERT_EQ(j.exit_code, kOk) << j.err;
  EXPECT_TRUE(InJsonDialect<pb::ListDevicesResponse>(j.out));
  Json parsed = Json::parse(j.out);
  EXPECT_TRUE(parsed["devices"].empty());
  EXPECT_FALSE(parsed["no_gpu_reason"].get<std::string>().empty());
  // What a table server answers for: the device models of its tables.
  EXPECT_THAT(r.out, HasSubstr("tuning tables hold (ask with --model NAME):\n"));
  EXPECT_THAT(r.out, HasSubstr("\nNVIDIA H200  9.0  132"));
  EXPECT_THAT(r.out, HasSubstr("        3  matmul, transpose\n"));
  ASSERT_EQ(parsed["table_models"].size(), 1u);
  EXPECT_EQ(parsed["table_models"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(parsed["table_models"][0]["compute_capability"], "9.0");
  EXPECT_EQ(parsed["table_models"][0]["winners"], "3");
  EXPECT_EQ(parsed["table_models"][0]["families"], Json::array({"matmul", "transpose"}));
}

TEST_F(CliTest, GetExactAnswerFromTheFixtureTable) {
  RunResult r = Run({"get", "transpose", "--shape", "8192x8192"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("match:     exact (tuned for this shape on NVIDIA H200)"));
  EXPECT_THAT(r.out, HasSubstr("params:    minb=0,pad=1,rows=8,smem=1,swizzle=0,tile=64,vec=1"));
  EXPECT_THAT(r.out, HasSubstr("time:      145.12 us"));
  EXPECT_THAT(r.out, HasSubstr("% of reference"));
  // 128 columns of tiles, 129 tile rows: the padded kernel's output windows shift back by up to
  // 7 elements, so one more tile row covers every row's end.
  EXPECT_THAT(r.out, HasSubstr("geometry:  grid 16512x1x1, block 64x8x1"));
  // The fixture was "tuned" with another kernel source: that must be said, not hidden.
  EXPECT_THAT(r.out, HasSubstr("warning:   stale: kernel source hash differs"));
}

TEST_F(CliTest, GetNearestShapeSaysHowFar) {
  RunResult r = Run({"get", "transpose", "--shape", "8192x4096", "--model", "NVIDIA H200"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("nearest shape (tuned for 8192x8192 on NVIDIA H200; distance 1.00)"));
  RunResult j = Run({"get", "matmul", "--shape", "4096x4096x4096", "--json"});
  ASSERT_EQ(j.exit_code, kOk) << j.err;
  EXPECT_TRUE(InJsonDialect<pb::GetBestConfigResponse>(j.out));
  Json parsed = Json::parse(j.out);
  EXPECT_EQ(parsed["rung"], "RUNG_EXACT");
  EXPECT_EQ(parsed["params"]["bm"], "128");  // int64: a string, as in every protobuf JSON
  EXPECT_EQ(parsed["tuned_shape"], Json::array({"4096", "4096", "4096"}));
  EXPECT_DOUBLE_EQ(parsed["time_us"].get<double>(), 2870.0);
  EXPECT_EQ(parsed["problem"]["shape"], parsed["tuned_shape"]);  // the asked shape, echoed
  EXPECT_EQ(parsed["launch"]["kernel"], "cutune_kernel");
  EXPECT_EQ(parsed["source"], "");  // not asked for
}

TEST_F(CliTest, GetWritesSourceAndCubin) {
  const auto source = tmp_.path() / "kernel.cu";
  const auto cubin = tmp_.path() / "kernel.cubin";
  RunResult r = Run({"get", "transpose", "--shape", "8192x8192", "--source", source.string(),
                     "--cubin", cubin.string()});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_THAT(ReadFileOrDie(source), HasSubstr("cutune_kernel"));
  EXPECT_THAT(ReadFileOrDie(cubin), StartsWith("\x7f"
                                               "ELF"));

  // With --json the files are written as well, and the JSON is the answer as it came: the
  // source and the cubin (base64) themselves, never the paths they went to.
  RunResult j = Run({"get", "transpose", "--shape", "8192x8192", "--source", source.string(),
                     "--cubin", cubin.string(), "--json"});
  ASSERT_EQ(j.exit_code, kOk) << j.err;
  EXPECT_TRUE(InJsonDialect<pb::GetBestConfigResponse>(j.out));
  const pb::GetBestConfigResponse answer = ParseJsonAs<pb::GetBestConfigResponse>(j.out);
  EXPECT_EQ(answer.source(), ReadFileOrDie(source));
  EXPECT_EQ(answer.cubin(), ReadFileOrDie(cubin));
  EXPECT_EQ(Json::parse(j.out)["cubin"], absl::Base64Escape(ReadFileOrDie(cubin)));
  EXPECT_THAT(j.out, Not(HasSubstr(source.string())));
  EXPECT_THAT(j.err, AllOf(HasSubstr("wrote source to " + source.string()),
                           HasSubstr(") to " + cubin.string())));
}

TEST_F(CliTest, UnknownFamilyIsNotFoundInOneLine) {
  RunResult r = Run({"get", "foo", "--shape", "8x8"});
  EXPECT_EQ(r.exit_code, kNotFound);
  EXPECT_EQ(r.err, "error: NOT_FOUND: unknown kernel family 'foo' (known: transpose, matmul)\n");
  EXPECT_EQ(Run({"results", "foo", "--shape", "8x8"}).exit_code, kNotFound);
  EXPECT_EQ(Run({"get", "transpose", "--shape", "8x8", "--model", "NVIDIA B200"}).exit_code,
            kNotFound);
}

// --- tuning on a host without a GPU -------------------------------------------------------------

TEST_F(CliTest, SweepWithoutGpuIsAClearFailedPrecondition) {
  RunResult r = Run({"sweep", "transpose", "--shape", "8192x8192", "--param", "tile=32,64"});
  EXPECT_EQ(r.exit_code, kUnavailable);
  EXPECT_TRUE(OneErrorLine(r, "FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("cannot tune"));
  EXPECT_THAT(r.out, Not(HasSubstr("\033[K")));  // no progress bar without a terminal
  RunResult tune = Run({"get", "transpose", "--shape", "1024x1024", "--tune"});
  EXPECT_EQ(tune.exit_code, kUnavailable);
  EXPECT_TRUE(OneErrorLine(tune, "FAILED_PRECONDITION"));
}

TEST_F(CliTest, JobsAndCancel) {
  RunResult jobs = Run({"jobs"});
  ASSERT_EQ(jobs.exit_code, kOk) << jobs.err;
  EXPECT_EQ(jobs.out, "no jobs\n");
  RunResult json = Run({"jobs", "--json"});
  ASSERT_EQ(json.exit_code, kOk);
  EXPECT_TRUE(InJsonDialect<pb::ListJobsResponse>(json.out));
  EXPECT_TRUE(Json::parse(json.out)["jobs"].empty());
  RunResult cancel = Run({"cancel", "no-such-job"});
  EXPECT_EQ(cancel.exit_code, kNotFound);
  EXPECT_TRUE(OneErrorLine(cancel, "NOT_FOUND"));
}

// --- results
// --------------------------------------------------------------------------------------

TEST_F(CliTest, ResultsRankedTableAndRejectedByReason) {
  RunResult r = Run({"results", "transpose", "--shape", "8192x8192", "--top", "3"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_GT(lines.size(), 6u);
  EXPECT_EQ(lines[0], "transpose 8192x8192 f32 on NVIDIA H200: 36 rows");
  EXPECT_THAT(lines[2], AllOf(HasSubstr("parameters"), HasSubstr("GB/s"), HasSubstr("% of ref")));
  EXPECT_THAT(lines[4], AllOf(StartsWith("1  "), HasSubstr("rows=8,smem=1,swizzle=0,tile=64"),
                              HasSubstr("145.12")));
  EXPECT_THAT(lines[6], StartsWith("3  "));
  EXPECT_EQ(lines[7], "");  // --top 3: the ranked table ends there
  EXPECT_THAT(r.out, HasSubstr("rejected: 7 candidates"));
  EXPECT_THAT(r.out, HasSubstr("exceed the limit of 65536"));
  EXPECT_THAT(r.out, HasSubstr("wrong_answer"));
  EXPECT_THAT(r.out, HasSubstr("72 registers x 1024 threads"));

  RunResult matmul = Run({"results", "matmul", "--shape", "4096x4096x4096"});
  ASSERT_EQ(matmul.exit_code, kOk) << matmul.err;
  EXPECT_THAT(matmul.out, HasSubstr("TFLOP/s"));
  EXPECT_THAT(matmul.out, HasSubstr("compile_failed"));
  EXPECT_THAT(matmul.out, Not(HasSubstr("ptxas fatal")));  // first line of the detail only

  RunResult json = Run({"results", "transpose", "--shape", "8192x8192", "--json"});
  ASSERT_EQ(json.exit_code, kOk);
  EXPECT_TRUE(InJsonDialect<pb::ResultsReport>(json.out));
  Json parsed = Json::parse(json.out);
  EXPECT_EQ(parsed["rows"].size(), 36u);
  EXPECT_EQ(parsed["device_model"], "NVIDIA H200");
  EXPECT_EQ(parsed["problem"]["family"], "transpose");
  // One enum spelling: rows and rejected groups both say OUTCOME_*.
  EXPECT_EQ(parsed["rows"][0]["outcome"], "OUTCOME_OK");
  std::map<std::string, int64_t> rejected;
  for (const Json& g : parsed["rejected"]) {
    rejected[g["outcome"].get<std::string>()] += std::stoll(g["count"].get<std::string>());
  }
  EXPECT_EQ(rejected,
            (std::map<std::string, int64_t>{{"OUTCOME_PRUNED", 6}, {"OUTCOME_WRONG_ANSWER", 1}}));
  // Spills under the names the store, the tables and `space compile` use.
  EXPECT_TRUE(parsed["rows"][0].contains("spill_store_bytes"));
  EXPECT_TRUE(parsed["rows"][0].contains("spill_load_bytes"));
  EXPECT_FALSE(parsed["rows"][0].contains("spill_bytes"));
}

TEST_F(CliTest, ResultsCsvHasAHeaderAndOneRowPerCandidateInParameterOrder) {
  RunResult r = Run({"results", "transpose", "--shape", "8192x8192", "--csv"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  const auto records = ParseCsv(r.out);
  ASSERT_EQ(records.size(), 37u);  // the header and the 36 rows, whatever --top says
  EXPECT_EQ(absl::StrJoin(records[0], ","),
            "minb,pad,rows,smem,swizzle,tile,vec,rank,outcome,time_us,rel_spread,gbps,tflops,"
            "percent_of_reference,registers,shared_bytes,spill_store_bytes,spill_load_bytes,"
            "samples,compile_ms,reason");
  std::vector<std::vector<int64_t>> params;
  int winners = 0;
  for (size_t i = 1; i < records.size(); ++i) {
    ASSERT_EQ(records[i].size(), records[0].size()) << i;
    std::vector<int64_t> values;
    for (int p = 0; p < 7; ++p) values.push_back(std::stoll(records[i][p]));
    params.push_back(values);
    if (records[i][7] == "1") {  // the winner of the ranked table
      ++winners;
      EXPECT_EQ(absl::StrJoin(std::vector<std::string>(records[i].begin(), records[i].begin() + 7),
                              ","),
                "0,1,8,1,0,64,1");
      EXPECT_EQ(records[i][8], "ok");
      EXPECT_EQ(records[i][9], "145.12");
    }
    if (records[i][8] != "ok") {
      EXPECT_EQ(records[i][7], "") << "a rejected row has no rank";
      EXPECT_FALSE(records[i].back().empty());
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_TRUE(std::is_sorted(params.begin(), params.end()));
  // The same text every time: diff-friendly.
  EXPECT_EQ(Run({"results", "transpose", "--shape", "8192x8192", "--csv"}).out, r.out);
  EXPECT_EQ(Run({"results", "transpose", "--shape", "8192x8192", "--csv", "--json"}).exit_code,
            kUsage);
}

// The fixture's 16384x16384 winner came from a table without its sweep: no rows here, yet
// `get` answers it exactly; `results` shows that winner, said to be imported, with provenance.
TEST_F(CliTest, ResultsOfAnImportedWinnerWithoutRowsShowsTheWinner) {
  RunResult r = Run({"results", "transpose", "--shape", "16384x16384"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_EQ(r.out,
            "transpose 16384x16384 f32 on NVIDIA H200: 0 rows\n"
            "no rows measured here; the tuning table's winner for this shape (what `cutune get` "
            "answers):\n"
            "params:   minb=0,pad=1,rows=8,smem=1,swizzle=0,tile=64,vec=1\n"
            "time:     571.77 us, 3755.9 GB/s, 95.1% of reference\n"
            "winner:   from an imported table; tuned with driver 13000, NVRTC 13.0, source "
            "fixture-transpos, space version 1\n"
            "warning:  stale: kernel source hash differs (tuned fixture-tran, current " +
                kernels::TransposeFamily().source_hash().substr(0, 12) + ")\n"
            "warning:  stale: space version 1 != " +
                std::to_string(kernels::TransposeFamily().space_version()) + "\n");
  RunResult j = Run({"results", "transpose", "--shape", "16384x16384", "--json"});
  ASSERT_EQ(j.exit_code, kOk) << j.err;
  EXPECT_TRUE(InJsonDialect<pb::ResultsReport>(j.out));
  const pb::ResultsReport report = ParseJsonAs<pb::ResultsReport>(j.out);
  EXPECT_EQ(report.rows_size(), 0);
  EXPECT_TRUE(report.winner().from_table());
  EXPECT_EQ(report.winner().provenance().driver_version(), 13000);
  EXPECT_EQ(report.winner().provenance().nvrtc_version(), "13.0");
  EXPECT_EQ(report.winner().stale_size(), 2);
  // A shape only a nearer one answers still has nothing of its own.
  RunResult none = Run({"results", "transpose", "--shape", "1024x1024"});
  EXPECT_THAT(none.out, HasSubstr("nothing measured for this problem"));
  // With rows, the provenance of the winner follows the tables.
  EXPECT_THAT(Run({"results", "transpose", "--shape", "8192x8192"}).out,
              AllOf(HasSubstr("\nwinner:   from an imported table; tuned with driver 13000"),
                    HasSubstr("warning:  stale: kernel source hash differs")));
}

// --- tables
// ---------------------------------------------------------------------------------------

TEST_F(CliTest, TableExportImportDiffRoundTrip) {
  const auto exported = (tmp_.path() / "export.json").string();
  RunResult ex = Run({"table", "export", "--rows", "-o", exported});
  ASSERT_EQ(ex.exit_code, kOk) << ex.err;
  Json table = Json::parse(ReadFileOrDie(exported));
  EXPECT_EQ(table["format"], "cutune-table");
  EXPECT_EQ(table["devices"][0]["winners"].size(), 3u);
  EXPECT_EQ(table["devices"][0]["sweeps"].size(), 2u);

  // Same winners as the fixture the daemon imported.
  RunResult same =
      RunLocal({"table", "diff", (AssetsDir() / "tables/h200_fixture.json").string(), exported});
  EXPECT_EQ(same.exit_code, kOk) << same.out << same.err;

  RunResult again = Run({"table", "import", exported});
  ASSERT_EQ(again.exit_code, kOk) << again.err;
  EXPECT_THAT(again.out, HasSubstr("0 winners added, 0 replaced, 3 kept"));

  const std::string slower = (AssetsDir() / "h200_fixture_slower.json").string();
  RunResult conflict = Run({"table", "import", slower, "--policy", "fail-on-conflict"});
  EXPECT_EQ(conflict.exit_code, kFailure);
  EXPECT_TRUE(OneErrorLine(conflict, "ALREADY_EXISTS"));
  RunResult newer = Run({"table", "import", slower, "--policy", "keep-newer", "--json"});
  ASSERT_EQ(newer.exit_code, kOk) << newer.err;
  EXPECT_TRUE(InJsonDialect<pb::ImportTableResponse>(newer.out));
  Json stats = Json::parse(newer.out);
  EXPECT_EQ(stats["winners_added"], 1);
  EXPECT_EQ(stats["winners_replaced"], 1);
  RunResult get = Run({"get", "transpose", "--shape", "8192x8192"});
  EXPECT_THAT(get.out, HasSubstr("rows=4"));  // the newer winner now answers

  RunResult model = Run({"table", "export", "--model", "NVIDIA B200"});
  EXPECT_EQ(model.exit_code, kNotFound);
  EXPECT_TRUE(OneErrorLine(model, "NOT_FOUND"));
}

// Far beyond gRPC's default 4 MiB message: the CLI sends and receives what the daemon accepts, and
// a table the daemon exported imports again (issue 13: `table export --rows` failed above 4 MiB).
TEST_F(CliTest, TablesLargerThanGrpcsDefaultMessageRoundTrip) {
  const kernels::KernelFamily& family = kernels::TransposeFamily();
  const tuner::ValidCandidates valid = tuner::EnumerateValid(family.default_space());
  Json sweeps = Json::array();
  for (int i = 0; i < 30; ++i) {
    Json rows = Json::array();
    for (const Params& params : valid.candidates) {
      Json p = Json::object();
      for (const auto& [name, value] : params) p[name] = value;
      rows.push_back({{"outcome", "ok"}, {"measured_at", "2026-11-29T10:00:00.000Z"},
                      {"params", p}, {"detail", "a row of a large table"},
                      {"resources", {{"registers", 30}, {"static_shared_bytes", 4224},
                                     {"stack_bytes", 0}, {"spill_store_bytes", 0},
                                     {"spill_load_bytes", 0}, {"constant_bytes", 360}}},
                      {"samples", 25}, {"time_us", 100.5 + rows.size()}, {"min_us", 99.0},
                      {"rel_spread", 0.004}, {"gbps", 3000.0}, {"tflops", 0.0},
                      {"percent_of_reference", 90.0}, {"compile_ms", 55.0}});
    }
    sweeps.push_back({{"family", "transpose"}, {"dtype", "f32"}, {"shape", {1000 + i, 2000}},
                      {"status", "succeeded"}, {"started_at", "2026-11-29T09:00:00.000Z"},
                      {"finished_at", "2026-11-29T09:30:00.000Z"},
                      {"reference", {{"name", "device copy"}, {"time_us", 90.0}}},
                      {"request", "{}"}, {"rows", rows}, {"source_hash", family.source_hash()},
                      {"space_version", family.space_version()}, {"driver_version", 13000},
                      {"nvrtc_version", "13.0"}});
  }
  Json table = {{"format", "cutune-table"}, {"version", 1},
                {"devices", {{{"model", "Big GPU"}, {"cc_major", 9}, {"cc_minor", 0},
                              {"sm_count", 132}, {"total_memory_bytes", 85899345920},
                              {"winners", Json::array()}, {"sweeps", sweeps}}}}};
  const auto big = (tmp_.path() / "big.json").string();
  std::ofstream(big) << table.dump();
  ASSERT_GT(std::filesystem::file_size(big), 5u << 20);

  // A daemon of its own: a second device model in the suite's daemon would make every later
  // test that names none ambiguous (run as one process, the report tests failed after this one).
  auto own = Daemon::Start();
  auto on = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--server", own->target()});
    return RunProgram(Cutune(), args);
  };
  RunResult imported = on({"table", "import", big});
  ASSERT_EQ(imported.exit_code, kOk) << imported.err;
  const auto exported = (tmp_.path() / "big-export.json").string();
  RunResult ex = on({"table", "export", "--rows", "--model", "Big GPU", "-o", exported});
  ASSERT_EQ(ex.exit_code, kOk) << ex.err;
  EXPECT_GT(std::filesystem::file_size(exported), 4u << 20);
  auto fresh = Daemon::Start();
  RunResult again = RunProgram((BinDir() / "cutune").string(),
                               {"table", "import", exported, "--server", fresh->target()});
  ASSERT_EQ(again.exit_code, kOk) << again.err;
  EXPECT_THAT(again.out, HasSubstr("12690 rows added"));  // 30 sweeps x every valid candidate
}

TEST_F(CliTest, ImportOfABadTableNamesTheProblem) {
  const std::string bad = (AssetsDir() / "bad_table.json").string();
  RunResult r = Run({"table", "import", bad});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_TRUE(OneErrorLine(r, "INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, AllOf(HasSubstr("bad_table.json"),
                           HasSubstr("/devices/0/winners/1/time_us: missing required field")));
  RunResult missing = Run({"table", "import", (tmp_.path() / "none.json").string()});
  EXPECT_EQ(missing.exit_code, kFailure);
  EXPECT_THAT(missing.err, HasSubstr("cannot read"));
}

TEST_F(CliTest, TableDiffNamesItsTwoFiles) {
  const std::string a = (AssetsDir() / "tables/h200_fixture.json").string();
  RunResult r = RunLocal({"table", "diff", a});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_THAT(r.err, StartsWith("NEW is required"));
  EXPECT_THAT(RunLocal({"table", "diff", "--help"}).out, HasSubstr("OLD NEW"));
}

TEST_F(CliTest, TableDiffExitCodes) {
  const std::string a = (AssetsDir() / "tables/h200_fixture.json").string();
  const std::string b = (AssetsDir() / "h200_fixture_slower.json").string();
  RunResult differ = RunLocal({"table", "diff", a, b});
  EXPECT_EQ(differ.exit_code, kDiff);
  EXPECT_THAT(differ.out, HasSubstr("1 winner changed"));
  EXPECT_THAT(differ.out, HasSubstr("(+12.00%)"));
  EXPECT_EQ(RunLocal({"table", "diff", a, b, "--fail-on-regression", "20"}).exit_code, kOk);
  EXPECT_EQ(RunLocal({"table", "diff", a, b, "--fail-on-regression", "5"}).exit_code, kDiff);
  EXPECT_EQ(RunLocal({"table", "diff", a, a}).exit_code, kOk);
  RunResult json = RunLocal({"table", "diff", a, b, "--json"});
  EXPECT_EQ(json.exit_code, kDiff);
  EXPECT_TRUE(InJsonDialect<pb::TableDiffReport>(json.out));
  Json diff = Json::parse(json.out);
  EXPECT_EQ(diff["format"], "cutune-table-diff");
  EXPECT_EQ(diff["version"], 3);
  std::map<std::string, std::string> changes;  // shape -> change
  for (const Json& e : diff["entries"]) {
    changes[e["shape"].dump()] = e["change"].get<std::string>();
  }
  EXPECT_EQ(changes[R"(["8192","8192"])"], "CHANGE_WINNER_CHANGED");
  EXPECT_EQ(changes[R"(["4096","4096"])"], "CHANGE_ONLY_IN_B");
  EXPECT_EQ(changes[R"(["4096","4096","4096"])"], "CHANGE_SAME");
  for (const Json& e : diff["entries"]) {
    if (e["change"] == "CHANGE_ONLY_IN_B") {
      EXPECT_FALSE(e.contains("a"));  // the table without the key has no winner
    } else if (e["change"] == "CHANGE_WINNER_CHANGED") {
      EXPECT_EQ(e["a"]["params"]["rows"], "8");
      EXPECT_EQ(e["b"]["params"]["rows"], "4");
      EXPECT_DOUBLE_EQ(e["time_change_percent"].get<double>(), 11.997);
    }
  }
  RunResult bad = RunLocal({"table", "diff", a, (AssetsDir() / "bad_table.json").string()});
  EXPECT_EQ(bad.exit_code, kFailure);
  EXPECT_TRUE(OneErrorLine(bad, "INVALID_ARGUMENT"));
  EXPECT_THAT(bad.err, HasSubstr("bad_table.json: table /devices/0/winners/1/time_us"));
}

TEST_F(CliTest, TableDiffReportsATieWithoutFailing) {
  // B's first winner is another configuration, listed among A's ties, 0.3% slower (within the
  // 0.4% spread): a tie, not a change. A's second winner moves to one it is not tied with.
  Json a = Json::parse(ReadFileOrDie(AssetsDir() / "tables/h200_fixture.json"));
  a["version"] = 2;
  Json b = a;
  Json& first = b["devices"][0]["winners"][0];
  first["params"]["rows"] = 4;
  first["time_us"] = 145.55;
  a["devices"][0]["winners"][0]["ties"] = Json::array({first["params"]});
  const auto a_path = (tmp_.path() / "a.json").string();
  const auto b_path = (tmp_.path() / "b.json").string();
  std::ofstream(a_path) << a.dump();
  std::ofstream(b_path) << b.dump();
  RunResult tie = RunLocal({"table", "diff", a_path, b_path});
  EXPECT_EQ(tie.exit_code, kOk) << tie.out << tie.err;
  EXPECT_THAT(tie.out, HasSubstr("3 keys: 2 same winner, 1 tied, 0 winner changed"));
  EXPECT_THAT(tie.out, HasSubstr("| transpose f32 8192x8192 | tie | "));
  EXPECT_THAT(tie.out, HasSubstr("(+0.30%) | in A's ties\n"));
  RunResult json = RunLocal({"table", "diff", a_path, b_path, "--json"});
  EXPECT_EQ(json.exit_code, kOk);
  EXPECT_TRUE(InJsonDialect<pb::TableDiffReport>(json.out));
  Json entries = Json::parse(json.out)["entries"];
  EXPECT_EQ(entries[1]["change"], "CHANGE_TIE");
  EXPECT_EQ(entries[1]["tie_basis"], "TIE_BASIS_IN_TIES_OF_A");
  EXPECT_EQ(entries[0]["tie_basis"], "TIE_BASIS_UNSPECIFIED");  // not a tie

  // A real change next to the tie still fails the diff.
  b["devices"][0]["winners"][1]["params"]["rows"] = 4;
  b["devices"][0]["winners"][1]["time_us"] = 500.0;
  std::ofstream(b_path, std::ios::trunc) << b.dump();
  RunResult changed = RunLocal({"table", "diff", a_path, b_path});
  EXPECT_EQ(changed.exit_code, kDiff) << changed.out;
  EXPECT_THAT(changed.out, HasSubstr("1 tied, 1 winner changed"));
}

// --- space (local)
// --------------------------------------------------------------------------------

TEST_F(CliTest, SpaceShowAndCompile) {
  RunResult show = RunLocal({"space", "show", "transpose"});
  ASSERT_EQ(show.exit_code, kOk) << show.err;
  EXPECT_THAT(show.out, AllOf(HasSubstr("tile"), HasSubstr("constraints:"), HasSubstr("valid")));
  RunResult json = RunLocal({"space", "show", "matmul", "--json"});
  ASSERT_EQ(json.exit_code, kOk);
  EXPECT_TRUE(InJsonDialect<pb::SpaceReport>(json.out));
  Json space = Json::parse(json.out);
  EXPECT_EQ(space["family"]["name"], "matmul");  // the Family that ListFamilies answers
  EXPECT_EQ(space["family"]["dims"], Json::array({"M", "N", "K"}));
  EXPECT_GT(std::stoll(space["valid_size"].get<std::string>()), 0);
  EXPECT_EQ(RunLocal({"space", "show", "foo"}).exit_code, kNotFound);

  RunResult compile = RunLocal({"space", "compile", "transpose", "--arch", "sm_90", "--json"},
                               {"CUTUNE_CACHE_DIR=" + (tmp_.path() / "cache").string()});
  ASSERT_EQ(compile.exit_code, kOk) << compile.err;
  EXPECT_TRUE(InJsonDialect<pb::SpaceCompileReport>(compile.out));
  Json compiled = Json::parse(compile.out);
  EXPECT_GT(std::stoll(compiled["summary"]["outcome_counts"]["OUTCOME_OK"].get<std::string>()), 10);
  const Json& first = compiled["candidates"][0];
  EXPECT_EQ(first["outcome"], "OUTCOME_OK");
  EXPECT_TRUE(first.contains("spill_store_bytes"));
  EXPECT_TRUE(first.contains("spill_load_bytes"));
  EXPECT_EQ(compile.err.find("\033[K"), std::string::npos);  // no bar when not a terminal

  // --top N: the first N candidates in space order, in every format; the summary counts all.
  RunResult csv = RunLocal({"space", "compile", "transpose", "--arch", "sm_90", "--csv", "--top",
                            "5"},
                           {"CUTUNE_CACHE_DIR=" + (tmp_.path() / "cache").string()});
  ASSERT_EQ(csv.exit_code, kOk) << csv.err;
  const auto records = ParseCsv(csv.out);
  ASSERT_EQ(records.size(), 6u) << csv.out;
  EXPECT_EQ(absl::StrJoin(records[0], ","),
            "index,minb,pad,rows,smem,swizzle,tile,vec,outcome,registers,shared_bytes,stack_bytes,"
            "spill_store_bytes,spill_load_bytes,reason");
  for (int i = 0; i < 5; ++i) {
    const Json& candidate = compiled["candidates"][i];
    EXPECT_EQ(records[i + 1][0], std::to_string(i));
    EXPECT_EQ(records[i + 1][6], candidate["params"]["tile"].get<std::string>());
    EXPECT_EQ(records[i + 1][9], std::to_string(candidate["registers"].get<int>()));
  }
  RunResult top = RunLocal({"space", "compile", "transpose", "--arch", "sm_90", "--top", "2",
                            "--json"},
                           {"CUTUNE_CACHE_DIR=" + (tmp_.path() / "cache").string()});
  ASSERT_EQ(top.exit_code, kOk) << top.err;
  Json two = Json::parse(top.out);
  EXPECT_EQ(two["candidates"].size(), 2u);
  EXPECT_EQ(two["candidates"][1]["params"], compiled["candidates"][1]["params"]);
  EXPECT_EQ(two["summary"]["candidates"], compiled["summary"]["candidates"]);
}

// --- report
// ---------------------------------------------------------------------------------------

TEST_F(CliTest, ReportErrors) {
  RunResult unknown = Run({"report", "transpose", "--shape", "8192x8192", "--x", "tile", "--y",
                           "warp", "-o", (tmp_.path() / "r.html").string()});
  EXPECT_EQ(unknown.exit_code, kUsage);
  EXPECT_TRUE(OneErrorLine(unknown, "INVALID_ARGUMENT"));
  EXPECT_THAT(unknown.err, HasSubstr("no parameter 'warp'"));
  RunResult empty = Run({"report", "transpose", "--shape", "1024x1024", "--x", "tile", "--y",
                         "rows", "-o", (tmp_.path() / "r.html").string()});
  EXPECT_EQ(empty.exit_code, kNotFound);
  EXPECT_TRUE(OneErrorLine(empty, "NOT_FOUND"));
}

TEST_F(CliTest, ReportSvgIsSelfContained) {
  const auto svg = tmp_.path() / "report.svg";
  RunResult r = Run({"report", "matmul", "--shape", "4096x4096x4096", "--x", "bm", "--y", "bn",
                     "-o", svg.string()});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  const std::string text = ReadFileOrDie(svg);
  EXPECT_THAT(text, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(text, AllOf(HasSubstr("matmul 4096x4096x4096 f32 on NVIDIA H200"),
                          HasSubstr(">bm</text>"), HasSubstr(">bn</text>"),
                          HasSubstr("Top 4 candidates"), HasSubstr(cli::kBestColour)));
  EXPECT_THAT(text, Not(HasSubstr("http://www.w3.org/1999/xlink")));
  EXPECT_THAT(text, Not(HasSubstr("<script")));
}

// Renders the HTML report in headless Chromium and checks the screenshot shows the heatmap:
// the colours of the best and worst cells cover cell-sized areas, and the page is not blank.
TEST_F(CliTest, ReportHtmlShowsTheHeatmapInChromium) {
  const auto html = tmp_.path() / "report.html";
  RunResult r = Run({"report", "transpose", "--shape", "8192x8192", "--x", "tile", "--y", "rows",
                     "-o", html.string()});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  const std::string page = ReadFileOrDie(html);
  EXPECT_THAT(page, AllOf(StartsWith("<!DOCTYPE html>"), HasSubstr("<svg"),
                          HasSubstr("Rejected candidates"), Not(HasSubstr("<script"))));

  const std::string chromium = "/usr/bin/chromium";
  ASSERT_TRUE(std::filesystem::exists(chromium))
      << "chromium is required for this test (scripts/install-deps.sh installs it)";
  const auto png = tmp_.path() / "report.png";
  TempDir profile;
  RunResult shot =
      RunProgram(chromium,
                 {"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--force-color-profile=srgb",
                  "--user-data-dir=" + profile.path().string(), "--screenshot=" + png.string(),
                  "--window-size=1200,900", "file://" + html.string()},
                 {"HOME=" + profile.path().string()}, 120);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << shot.err;
  if (const char* keep = std::getenv("CUTUNE_KEEP_SCREENSHOT")) {
    std::filesystem::copy_file(png, keep, std::filesystem::copy_options::overwrite_existing);
  }
  auto image = DecodePng(ReadFileOrDie(png));
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 1200);
  EXPECT_EQ(image->height, 900);
  std::map<uint32_t, int64_t> histogram;
  for (uint32_t p : image->pixels) ++histogram[p];
  auto count = [&](const char* hex) { return histogram[std::stoul(hex + 1, nullptr, 16)]; };
  // A heatmap cell is 100+ x 60+ pixels; text inside takes a few hundred of them.
  EXPECT_GT(count(cli::kBestColour), 3000) << "best cell not visible";
  EXPECT_GT(count(cli::kWorstColour), 3000) << "worst cell not visible";
  EXPECT_GT(histogram.size(), 40u) << "too few colours: is the page blank?";
  EXPECT_LT(histogram[0xffffff], static_cast<int64_t>(image->pixels.size()) * 9 / 10);
}

// --- batch sweeps (a daemon whose GPU is the fake worker) -----------------------------------

// Two candidates a shape: every parameter pinned but rows.
const std::vector<std::string> kNarrow = {"--param", "tile=32", "--param", "rows=8,16",
                                          "--param", "pad=0",   "--param", "vec=1",
                                          "--param", "minb=0",  "--param", "swizzle=0",
                                          "--param", "smem=1"};

class CliBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runs_ = (tmp_.path() / "runs.log").string();
    poison_ = (tmp_.path() / "poison").string();
    daemon_ = Daemon::Start({"--worker", FakeWorker()}, {},
                            {"FAKE_WORKER_RUN_LOG=" + runs_, "FAKE_WORKER_POISON_FILE=" + poison_});
    shapes_ = (tmp_.path() / "shapes.txt").string();
    std::ofstream(shapes_) << "# CI shapes\n256x256\n\n512x256   # skinny\n  1024x512\n";
  }
  RunResult Batch(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"sweep", "transpose", "--shapes", shapes_};
    args.insert(args.end(), kNarrow.begin(), kNarrow.end());
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--server");
    args.push_back(daemon_->target());
    return RunProgram(Cutune(), args, {}, 120);
  }
  int64_t Measured() const {  // candidates the fake worker has run so far
    std::ifstream in(runs_);
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  }
  size_t StoredRows(const std::string& shape) {
    RunResult r = RunProgram(Cutune(), {"results", "transpose", "--shape", shape, "--top", "0",
                                        "--json", "--server", daemon_->target()});
    EXPECT_EQ(r.exit_code, kOk) << r.err;
    return Json::parse(r.out)["rows"].size();
  }
  size_t Jobs() {
    RunResult r = RunProgram(Cutune(), {"jobs", "--json", "--server", daemon_->target()});
    EXPECT_EQ(r.exit_code, kOk) << r.err;
    return Json::parse(r.out)["jobs"].size();
  }

  TempDir tmp_;
  std::string runs_, poison_, shapes_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(CliBatchTest, ThreeShapesWithCommentsRunAndEndInOneSummary) {
  RunResult r = Batch({"--top", "1"});
  ASSERT_EQ(r.exit_code, kOk) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("[1/3] job job-"), HasSubstr(": transpose 256x256 f32\n"),
                           HasSubstr("[3/3] transpose 1024x512 f32 on Fake GPU: 2 of 2 candidates")));
  const size_t summary = r.out.find("shape     state");
  ASSERT_NE(summary, std::string::npos) << r.out;
  std::vector<std::string> lines = absl::StrSplit(r.out.substr(summary), '\n');
  ASSERT_EQ(lines.size(), 7u) << r.out;  // header, rule, 3 shapes, counts, ""
  EXPECT_THAT(lines[0], AllOf(HasSubstr("winner"), HasSubstr("time us"), HasSubstr("% of ref"),
                              HasSubstr("candidates"), HasSubstr("seconds")));
  EXPECT_THAT(lines[2], AllOf(StartsWith("256x256   succeeded  minb=0,pad=0,rows="),
                              HasSubstr("  2  ")));
  EXPECT_THAT(lines[3], StartsWith("512x256   succeeded"));
  EXPECT_THAT(lines[4], StartsWith("1024x512  succeeded"));
  EXPECT_EQ(lines[5], "transpose: 3 shapes: 3 succeeded, 0 failed, 0 not finished");
  EXPECT_EQ(r.err.find("\033[K"), std::string::npos);  // no bar without a terminal
}

TEST_F(CliBatchTest, AMistypedModelIsNotFoundWithTheKnownModels) {
  // On a GPU host the GPUs' models answer too: the message names them beside the tables'.
  for (const char* command : {"get", "results"}) {
    RunResult r = RunProgram(Cutune(), {command, "transpose", "--shape", "256x256", "--model",
                                        "Fake GPUU", "--server", daemon_->target()});
    EXPECT_EQ(r.exit_code, kNotFound) << command;
    EXPECT_EQ(r.err,
              "error: NOT_FOUND: no GPU and no tuning data for device model 'Fake GPUU' (GPUs "
              "here: Fake GPU; tables hold: NVIDIA H200); a request that gives the GPU's compute "
              "capability (device.cc_major, cc_minor; `cutune get --arch`) is answered from a "
              "model of the same architecture\n")
        << command;
  }
}

// Every combination of these breaks the threads-per-block constraint (64 x 32 > 1024).
const std::vector<std::string> kNoCandidate = {"--param", "tile=64", "--param", "rows=32",
                                               "--param", "vec=1"};

TEST_F(CliBatchTest, ASweepWithoutAValidCandidateSaysWhyAndFails) {
  std::vector<std::string> args = {"sweep", "transpose", "--shape", "256x256"};
  args.insert(args.end(), kNoCandidate.begin(), kNoCandidate.end());
  args.insert(args.end(), {"--server", daemon_->target()});
  RunResult r = RunProgram(Cutune(), args);
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, AllOf(StartsWith("error: sweep job job-"),
                           HasSubstr(" found no valid candidate: the space has no candidate "
                                     "(every combination of --param values breaks a constraint")));
  EXPECT_THAT(r.out, Not(HasSubstr("rejected: none")));
  // `jobs` does not list it as succeeded.
  RunResult jobs = RunProgram(Cutune(), {"jobs", "--server", daemon_->target()});
  EXPECT_EQ(jobs.exit_code, kOk) << jobs.err;
  EXPECT_THAT(jobs.out, AllOf(HasSubstr("no valid candidate"), Not(HasSubstr("succeeded"))));
  // In a batch the shape fails, with the same reason, and so does the batch.
  std::ofstream(shapes_, std::ios::trunc) << "256x256\n";
  std::vector<std::string> batch = {"sweep", "transpose", "--shapes", shapes_};
  batch.insert(batch.end(), kNoCandidate.begin(), kNoCandidate.end());
  batch.insert(batch.end(), {"--server", daemon_->target()});
  RunResult b = RunProgram(Cutune(), batch);
  EXPECT_EQ(b.exit_code, kFailure) << b.out << b.err;
  EXPECT_THAT(b.out, AllOf(HasSubstr("256x256  failed"),
                           HasSubstr("found no valid candidate: the space has no candidate")));
}

TEST(CliInterruptTest, CtrlCCancelsTheSweepWaitsForItAndSaysHowToResume) {
  TempDir dir;
  const std::string runs = (dir.path() / "runs.log").string();
  auto daemon = Daemon::Start({"--worker", FakeWorker()}, {},
                              {"FAKE_WORKER_RUN_LOG=" + runs, "FAKE_WORKER_RUN_MS=100"});
  const std::vector<std::string> args = {"sweep",   "transpose", "--shape",   "512x512",
                                         "--param", "tile=32,64", "--param", "rows=8,16",
                                         "--server", daemon->target()};
  auto measured = [&] {
    std::ifstream in(runs);
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  Running sweep(Cutune(), args);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (measured() < 5 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(measured(), 5);
  kill(sweep.pid(), SIGINT);
  RunResult r = sweep.Wait();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("interrupted: job job-"), HasSubstr(" cancelled after "),
                           HasSubstr("its rows are kept: run the same command with --resume")));
  EXPECT_THAT(r.err, Not(HasSubstr("running")));
  RunResult jobs = RunProgram(Cutune(), {"jobs", "--json", "--server", daemon->target()});
  EXPECT_EQ(Json::parse(jobs.out)["jobs"][0]["state"], "STATE_CANCELLED");
  // --resume measures only what the cancelled sweep had not.
  std::vector<std::string> resume = args;
  resume.insert(resume.end(), {"--resume", "--json"});
  RunResult again = RunProgram(Cutune(), resume, {}, 120);
  ASSERT_EQ(again.exit_code, kOk) << again.err;
  const pb::SweepReport report = ParseJsonAs<pb::SweepReport>(again.out);
  EXPECT_GE(report.job().resumed(), 5);
  EXPECT_LT(report.job().resumed(), report.job().total());
  EXPECT_EQ(report.job().done(), report.job().total());
}

// Every line the terminal shows, between the carriage returns that redraw the bar.
std::vector<std::string> TerminalSegments(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, absl::ByAnyChar("\r\n"))) {
    std::string segment(line);
    if (absl::StartsWith(segment, "\033[K")) segment = segment.substr(3);
    out.push_back(segment);
  }
  return out;
}

TEST_F(CliBatchTest, OnAnEightyColumnTerminalTheBarRedrawsInPlaceAndTablesFit) {
  // 0: a terminal that does not say its width (80 assumed) as well as one that says 80.
  for (int columns : {80, 0}) {
    std::vector<std::string> args = {"sweep", "transpose", "--shape", "256x256", "--param",
                                     "tile=32,64", "--param", "rows=8,16", "--top", "5",
                                     "--server", daemon_->target()};
    RunResult r = RunInTerminal(Cutune(), args, columns, {"COLUMNS="});
    ASSERT_EQ(r.exit_code, kOk) << r.out;
    const std::vector<std::string> segments = TerminalSegments(r.out);
    size_t bars = 0;
    for (const std::string& segment : segments) {
      EXPECT_LE(segment.size(), 80u) << columns << ": " << segment;
      bars += absl::StartsWith(segment, "[");
    }
    EXPECT_GT(bars, 10u) << r.out;  // redrawn, each time after a "\r"
    // The bar never ends a line: every redraw starts from "\r", none scrolls.
    EXPECT_EQ(r.out.find("129  ok 129\r\n["), std::string::npos);
    EXPECT_THAT(r.out, HasSubstr("parameters: minb,pad,rows,smem,swizzle,tile,vec\r\n"));
    EXPECT_THAT(r.out, HasSubstr("#  params  "));
  }
  // A wide terminal gets the whole table, as a pipe does.
  RunResult wide = RunInTerminal(Cutune(), {"results", "transpose", "--shape", "256x256",
                                            "--server", daemon_->target()}, 200);
  EXPECT_THAT(wide.out, HasSubstr("#  parameters  "));
  // The batch summary fits too.
  RunResult batch = RunInTerminal(
      Cutune(), {"sweep", "transpose", "--shapes", shapes_, "--param", "tile=32,64", "--param",
                 "rows=8,16", "--top", "1", "--server", daemon_->target()}, 80, {}, 120);
  ASSERT_EQ(batch.exit_code, kOk) << batch.out;
  for (const std::string& segment : TerminalSegments(batch.out)) {
    EXPECT_LE(segment.size(), 80u) << segment;
  }
  EXPECT_THAT(batch.out, HasSubstr("transpose: 3 shapes: 3 succeeded"));
}

TEST_F(CliBatchTest, ABadLineIsAnErrorBeforeAnythingIsQueued) {
  std::ofstream(shapes_, std::ios::trunc) << "256x256\n# fine so far\n512x\n1024x512\n";
  RunResult bad = Batch();
  EXPECT_EQ(bad.exit_code, kUsage);
  EXPECT_TRUE(OneErrorLine(bad, "INVALID_ARGUMENT"));
  EXPECT_THAT(bad.err, HasSubstr(shapes_ + ":3: bad shape '512x'"));
  std::ofstream(shapes_, std::ios::trunc) << "256x256\n256x256x256\n";
  RunResult dims = Batch();
  EXPECT_EQ(dims.exit_code, kUsage);
  EXPECT_THAT(dims.err, HasSubstr(shapes_ + ":2: transpose 256x256x256: "));
  std::ofstream(shapes_, std::ios::trunc) << "256x256\n512x256\n256x256\n";
  EXPECT_THAT(Batch().err, HasSubstr(":3: 256x256 is listed twice (first on line 1)"));
  EXPECT_EQ(Jobs(), 0u);
  EXPECT_EQ(Measured(), 0);
  // --shape and --shapes together, and neither, are usage errors too.
  RunResult both = Batch({"--shape", "64x64"});
  EXPECT_EQ(both.exit_code, kUsage);
  EXPECT_THAT(both.err, HasSubstr("excludes"));
  EXPECT_EQ(RunProgram(Cutune(), {"sweep", "transpose", "--server", daemon_->target()}).exit_code,
            kUsage);
}

TEST_F(CliBatchTest, RunningItAgainMeasuresNothingTwice) {
  ASSERT_EQ(Batch().exit_code, kOk);
  const int64_t measured = Measured();
  EXPECT_GT(measured, 0);
  RunResult again = Batch({"--json"});
  ASSERT_EQ(again.exit_code, kOk) << again.err;
  EXPECT_EQ(Measured(), measured);
  const pb::BatchSweepReport report = ParseJsonAs<pb::BatchSweepReport>(again.out);
  ASSERT_EQ(report.shapes_size(), 3);
  for (const pb::BatchSweepShape& shape : report.shapes()) {
    EXPECT_EQ(shape.state(), pb::BatchSweepShape::STATE_SUCCEEDED);
    EXPECT_EQ(shape.sweep().job().done(), 2);
    EXPECT_EQ(shape.sweep().job().resumed(), 2);  // both from the first run
  }
  for (const char* shape : {"256x256", "512x256", "1024x512"}) EXPECT_EQ(StoredRows(shape), 2u);
  EXPECT_THAT(Batch().out, HasSubstr("256x256   done before"));
}

TEST_F(CliBatchTest, JsonIsOneBatchSweepReport) {
  RunResult r = Batch({"--json", "--top", "1"});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  EXPECT_TRUE(InJsonDialect<pb::BatchSweepReport>(r.out));
  Json parsed = Json::parse(r.out);
  EXPECT_EQ(parsed["family"], "transpose");
  EXPECT_EQ(parsed["shapes_file"], shapes_);
  EXPECT_EQ(parsed["succeeded"], "3");
  ASSERT_EQ(parsed["shapes"].size(), 3u);
  EXPECT_EQ(parsed["shapes"][1]["problem"]["shape"], Json::array({"512", "256"}));
  EXPECT_EQ(parsed["shapes"][1]["line"], 4);
  EXPECT_EQ(parsed["shapes"][1]["state"], "STATE_SUCCEEDED");
  EXPECT_EQ(parsed["shapes"][1]["sweep"]["top"].size(), 1u);  // --top applies to each shape
  EXPECT_EQ(parsed["shapes"][1]["sweep"]["device_model"], "Fake GPU");
  EXPECT_EQ(parsed["shapes"][1]["sweep"]["job"]["state"], "STATE_SUCCEEDED");
}

TEST_F(CliBatchTest, AFailingShapeFailsTheBatchButTheOthersRunAndTheSummaryComes) {
  // The fake worker answers the next run as a poisoned GPU does: the first shape's job fails.
  std::ofstream(poison_) << "1";
  RunResult r = Batch();
  EXPECT_EQ(r.exit_code, kFailure) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("256x256   failed"));
  EXPECT_THAT(r.out, HasSubstr("512x256   succeeded"));
  EXPECT_THAT(r.out, HasSubstr("1024x512  succeeded"));
  EXPECT_THAT(r.out, HasSubstr("failed: 256x256 (line 2): ABORTED: sweep job job-"));
  EXPECT_THAT(r.out, HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(r.out, HasSubstr("transpose: 3 shapes: 2 succeeded, 1 failed, 0 not finished"));
  // Fixed (the poison was used up), the same command tunes the failed shape only.
  RunResult again = Batch();
  EXPECT_EQ(again.exit_code, kOk) << again.out << again.err;
  EXPECT_THAT(again.out, AllOf(HasSubstr("256x256   succeeded"), HasSubstr("512x256   done before")));
}

// --- tokens
// ---------------------------------------------------------------------------------------

TEST(CliShardTest, DevicesShardsTheSweepAcrossGpusAndABadListIsAUsageError) {
  auto daemon = Daemon::Start({"--worker", FakeWorker()}, {},
                              {"FAKE_WORKER_DEVICES=2", "FAKE_WORKER_RUN_MS=20"});
  ASSERT_NE(daemon, nullptr);
  auto sweep = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"sweep", "transpose", "--shape", "256x256"};
    args.insert(args.end(), kNarrow.begin(), kNarrow.end());
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--server", daemon->target()});
    return RunProgram(Cutune(), args, {}, 120);
  };
  RunResult all = sweep({"--devices", "all"});
  ASSERT_EQ(all.exit_code, kOk) << all.out << all.err;
  EXPECT_THAT(all.out, HasSubstr("sharded across GPUs 0, 1 (GPU 0 measured the reference and the "
                                 "finalists)\n"));
  RunResult listed = sweep({"--devices", "1,0", "--json"});
  ASSERT_EQ(listed.exit_code, kOk) << listed.out << listed.err;
  EXPECT_EQ(Json::parse(listed.out)["job"]["devices"], Json::parse("[1, 0]")) << listed.out;
  RunResult bad = sweep({"--devices", "0,x"});
  EXPECT_EQ(bad.exit_code, kUsage);
  EXPECT_THAT(bad.err, HasSubstr("expected 'all' or GPU ordinals such as 0,1; got '0,x'"));
}

TEST(CliAuthTest, TokensAndRoles) {
  TempDir dir;
  {
    std::ofstream(dir.path() / "admin") << "admin-secret\n";
    std::ofstream(dir.path() / "read") << "# readers\nread-secret\n";
  }
  auto daemon = Daemon::Start({"--admin-tokens", (dir.path() / "admin").string(), "--read-tokens",
                               (dir.path() / "read").string()});
  const std::string server = daemon->target();
  const std::string table = (AssetsDir() / "h200_fixture_slower.json").string();
  auto run = [&](std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.push_back("--server");
    args.push_back(server);
    return RunProgram(Cutune(), args, env);
  };
  RunResult none = run({"get", "transpose", "--shape", "8192x8192"});
  EXPECT_EQ(none.exit_code, kDenied);
  EXPECT_TRUE(OneErrorLine(none, "UNAUTHENTICATED"));
  EXPECT_EQ(
      run({"get", "transpose", "--shape", "8192x8192"}, {"CUTUNE_TOKEN=read-secret"}).exit_code,
      kOk);
  RunResult reader = run({"table", "import", table}, {"CUTUNE_TOKEN=read-secret"});
  EXPECT_EQ(reader.exit_code, kDenied);
  EXPECT_TRUE(OneErrorLine(reader, "PERMISSION_DENIED"));
  // --token wins over the environment.
  EXPECT_EQ(run({"table", "import", table, "--token", "admin-secret"}, {"CUTUNE_TOKEN=read-secret"})
                .exit_code,
            kOk);
  EXPECT_EQ(run({"jobs", "--token", "wrong"}).exit_code, kDenied);
  // --version says what the token may do, and without one still exits 0.
  RunResult version = run({"--version", "--token", "read-secret"});
  EXPECT_EQ(version.exit_code, kOk) << version.err;
  EXPECT_THAT(version.out, HasSubstr(absl::StrCat(": API level ", kApiLevel, ", role read, no GPU")));
  RunResult anonymous = run({"--version"});
  EXPECT_EQ(anonymous.exit_code, kOk);
  EXPECT_EQ(anonymous.out, "cutune " CUTUNE_VERSION "\n");
  EXPECT_THAT(anonymous.err, StartsWith("note: no daemon version: UNAUTHENTICATED"));
}

// --- TLS
// ------------------------------------------------------------------------------------------

// Mutual TLS on a unix socket with the fixture certificates (tests/client/assets/tls: a test CA,
// a server certificate for "localhost" and a client certificate, none of them secret).
TEST(CliTlsTest, MutualTls) {
  const auto tls = AssetsDir() / "tls";
  const std::vector<std::string> client = {"--tls-ca",   (tls / "ca.pem").string(),
                                           "--tls-cert", (tls / "client.pem").string(),
                                           "--tls-key",  (tls / "client.key").string()};
  auto daemon =
      Daemon::Start({"--tls-cert", (tls / "server.pem").string(), "--tls-key",
                     (tls / "server.key").string(), "--tls-client-ca", (tls / "ca.pem").string()},
                    client);
  auto run = [&](std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(daemon->target());
    return RunProgram(Cutune(), args);
  };
  std::vector<std::string> get = {"get", "transpose", "--shape", "8192x8192"};
  get.insert(get.end(), client.begin(), client.end());
  RunResult ok = run(get);
  EXPECT_EQ(ok.exit_code, kOk) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("exact"));
  // Without a client certificate, or in plaintext, the handshake fails: one line, exit 3.
  RunResult no_cert = run({"devices", "--tls-ca", (tls / "ca.pem").string()});
  EXPECT_EQ(no_cert.exit_code, kUnavailable);
  EXPECT_TRUE(OneErrorLine(no_cert, "UNAVAILABLE"));
  EXPECT_EQ(run({"devices"}).exit_code, kUnavailable);
  // A key without its certificate is a usage error, caught before dialling.
  RunResult half = run({"devices", "--tls-key", (tls / "client.key").string()});
  EXPECT_EQ(half.exit_code, kUsage);
  EXPECT_THAT(half.err, HasSubstr("--tls-cert and --tls-key go together"));
}

}  // namespace
}  // namespace cutune::testing
