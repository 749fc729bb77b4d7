// The client library (cutune::client) on a host without a GPU: answers from a real cutuned table
// server, the in-process cache, the offline table fallback, fresh_only, and its errors.
#include <filesystem>
#include <string>

#include "cutune/client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/cuda/driver.h"
#include "tests/client/harness.h"

namespace cutune::testing {
namespace {

using ::cutune::client::Answer;
using ::cutune::client::Client;
using ::cutune::client::ClientOptions;
using ::cutune::client::Error;
using ::cutune::client::ErrorCode;
using ::cutune::client::Problem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kModel = "NVIDIA H200";

std::string Shipped() { return std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json"; }
std::string Fixture() { return (AssetsDir() / "tables" / "h200_fixture.json").string(); }

ClientOptions Online(const Daemon& daemon) {
  ClientOptions o;
  o.server = daemon.target();
  o.device_model = kModel;
  return o;
}

ClientOptions OfflineOnly(const std::string& table) {
  ClientOptions o;
  o.offline = true;
  o.table = table;
  o.device_model = kModel;
  return o;
}

// The error `call` throws (its code and message); fails the test if it throws none.
template <typename F>
Error Thrown(F call) {
  try {
    call();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no cutune::client::Error thrown";
  return Error(ErrorCode::kInternal, "");
}

TEST(ClientLibTest, AnswersCarryTheLaunchContract) {
  auto daemon = Daemon::Start();
  Client client(Online(*daemon));
  const Answer a = client.Get({"matmul", {4096, 4096, 4096}});
  EXPECT_EQ(a.rung, "exact");
  EXPECT_FALSE(a.from_table);
  EXPECT_EQ(a.device_model, kModel);
  EXPECT_EQ(a.problem.family, "matmul");
  EXPECT_THAT(a.problem.shape, ElementsAre(4096, 4096, 4096));
  EXPECT_EQ(a.kernel, "cutune_kernel");
  ASSERT_EQ(a.arguments.size(), 6u);
  EXPECT_EQ(a.arguments[0].name, "A");
  EXPECT_EQ(a.arguments[0].role, "input");
  EXPECT_THAT(a.arguments[0].extent, ElementsAre("M", "K"));
  EXPECT_EQ(a.arguments[2].role, "output");
  EXPECT_EQ(a.arguments[5].role, "dimension");
  EXPECT_EQ(a.pointer_alignment, 16u);
  EXPECT_GT(a.grid[0] * a.grid[1] * a.grid[2], 1u);
  EXPECT_FALSE(a.params.empty());
  EXPECT_FALSE(a.compile_options.empty());
}

TEST(ClientLibTest, ARepeatedRequestCostsNoRpc) {
  auto daemon = Daemon::Start();
  Client client(Online(*daemon));
  const Answer first = client.Get({"transpose", {8192, 8192}});
  daemon.reset();  // the daemon is gone: only the cache can answer now
  const Answer again = client.Get({"transpose", {8192, 8192}});
  EXPECT_EQ(again.params, first.params);
  EXPECT_EQ(again.rung, first.rung);
  // A problem not asked before needs the daemon, which is not there (and no table is given).
  const Error e = Thrown([&] { client.Get({"transpose", {1000, 1000}}); });
  EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
  EXPECT_THAT(e.what(), HasSubstr("cutuned"));
}

TEST(ClientLibTest, AnUnreachableDaemonFallsBackToTheTableWithTheSameAnswer) {
  auto daemon = Daemon::Start();
  Client online(Online(*daemon));
  ClientOptions o = OfflineOnly(Fixture());
  o.offline = false;
  o.server = "unix:" + (std::filesystem::temp_directory_path() / "no-cutuned-here.sock").string();
  Client fallback(o);
  for (const Problem& p : {Problem{"matmul", {4096, 4096, 4096}}, Problem{"matmul", {1000, 3000, 500}},
                           Problem{"transpose", {8192, 8192}}, Problem{"transpose", {5000, 7000}}}) {
    const Answer served = online.Get(p);
    const Answer local = fallback.Get(p);
    EXPECT_TRUE(local.from_table);
    EXPECT_EQ(local.rung, served.rung) << p.family;
    EXPECT_EQ(local.params, served.params) << p.family;
    EXPECT_EQ(local.compile_options, served.compile_options) << p.family;
    EXPECT_EQ(local.tuned_shape, served.tuned_shape) << p.family;
    EXPECT_EQ(local.stale, served.stale) << p.family;
  }
}

TEST(ClientLibTest, TheShippedTablePredictsUntunedShapesOffline) {
  Client client(OfflineOnly(Shipped()));
  const Answer a = client.Get({"matmul", {768, 3072, 1024}});
  EXPECT_EQ(a.rung, "predicted");
  EXPECT_GE(a.expected_slowdown, 1.0);
  EXPECT_GT(a.predicted_time_us, 0);
  EXPECT_FALSE(a.measured_at_asked_shape);
  EXPECT_TRUE(a.stale.empty());
  const Answer split = client.Get({"matmul", {16, 16, 16384}});
  EXPECT_EQ(split.rung, "exact");
  EXPECT_GT(split.params.at("splitk"), 1);
  EXPECT_TRUE(split.one_module_per_stream) << "split-K answers say so";
  const Answer stream_k = client.Get({"matmul", {8192, 8192, 8192}});
  EXPECT_GT(stream_k.params.at("sk"), 0);
  EXPECT_TRUE(stream_k.one_module_per_stream) << "stream-K answers say so";
  const Answer plain = client.Get({"matmul", {2048, 2048, 2048}});
  EXPECT_EQ(plain.params.at("splitk"), 1);
  EXPECT_EQ(plain.params.at("sk"), 0);
  EXPECT_FALSE(plain.one_module_per_stream);
}

TEST(ClientLibTest, FreshOnlyRefusesAStaleAnswer) {
  ClientOptions o = OfflineOnly(Fixture());  // its kernel source hashes are not this build's
  Client lenient(o);
  EXPECT_FALSE(lenient.Get({"transpose", {8192, 8192}}).stale.empty());
  o.fresh_only = true;
  Client strict(o);
  const Error e = Thrown([&] { strict.Get({"transpose", {8192, 8192}}); });
  EXPECT_EQ(e.code(), ErrorCode::kStale);
  EXPECT_THAT(e.what(), HasSubstr("source hash"));
  EXPECT_THAT(e.what(), HasSubstr("fresh_only"));
  Client fresh(OfflineOnly(Shipped()));  // fresh: no driver is known here, sources match
  EXPECT_TRUE(fresh.Get({"transpose", {8192, 8192}}).stale.empty());
}

TEST(ClientLibTest, ErrorsSayWhatIsWrong) {
  auto daemon = Daemon::Start();
  Client client(Online(*daemon));
  Error e = Thrown([&] { client.Get({"conv", {8, 8}}); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_THAT(e.what(), HasSubstr("matmul"));
  e = Thrown([&] { client.Get({"matmul", {8, 8}}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);

  ClientOptions unknown_model = Online(*daemon);
  unknown_model.device_model = "NVIDIA H201";
  Client other(unknown_model);
  e = Thrown([&] { other.Get({"matmul", {64, 64, 64}}); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  EXPECT_THAT(e.what(), HasSubstr("NVIDIA H200")) << "the known models are named";

  Client offline(OfflineOnly(Shipped()));
  e = Thrown([&] { offline.Get({"matmul", {0, 8, 8}}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);

  e = Thrown([] { Client c(ClientOptions{.offline = true}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("table"));

  e = Thrown([] { Client c(OfflineOnly("/nonexistent/table.json")); c.Get({"matmul", {8, 8, 8}}); });
  EXPECT_EQ(e.code(), ErrorCode::kNotFound);

  ClientOptions bad_table = OfflineOnly((AssetsDir() / "bad_table.json").string());
  e = Thrown([&] { Client c(bad_table); c.Get({"matmul", {8, 8, 8}}); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("bad_table.json"));
}

TEST(ClientLibTest, AKernelOnAHostWithoutADriverIsAClearError) {
  if (cuda::Driver().ok()) GTEST_SKIP() << "this host has a CUDA driver";
  Client client(OfflineOnly(Shipped()));
  const Error e = Thrown([&] { client.kernel({"matmul", {64, 64, 64}}); });
  EXPECT_EQ(e.code(), ErrorCode::kNoGpu);
  EXPECT_THAT(e.what(), HasSubstr("CUDA driver"));
  // Get without a device model needs the GPU to know the model.
  ClientOptions o = OfflineOnly(Shipped());
  o.device_model.clear();
  Client no_model(o);
  EXPECT_EQ(Thrown([&] { no_model.Get({"matmul", {64, 64, 64}}); }).code(), ErrorCode::kNoGpu);
}

// `cutune get --table FILE` answers from the file in-process, as the library's offline path
// does, and compiles a cubin here when asked.
TEST(ClientLibTest, TheCliAnswersFromATableFileWithoutADaemon) {
  TempDir dir;
  const std::string cubin = (dir.path() / "kernel.cubin").string();
  RunResult r = RunProgram((BinDir() / "cutune").string(),
                           {"get", "matmul", "--shape", "768x3072x1024", "--model", kModel,
                            "--table", Shipped(), "--cubin", cubin, "--json"},
                           {"CUTUNE_SERVER=unix:/nonexistent/cutuned.sock"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rung"], "RUNG_PREDICTED");
  Client client(OfflineOnly(Shipped()));
  const Answer a = client.Get({"matmul", {768, 3072, 1024}});
  for (const auto& [name, value] : a.params) {
    const nlohmann::json& v = j["params"][name];  // int64: a string in protobuf's JSON mapping
    EXPECT_EQ(v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>(), value) << name;
  }
  EXPECT_EQ(ReadFileOrDie(cubin).substr(0, 4), "\x7f" "ELF");

  r = RunProgram((BinDir() / "cutune").string(),
                 {"get", "matmul", "--shape", "64x64x64", "--table", Shipped(), "--tune"});
  EXPECT_NE(r.exit_code, 0) << "a table file cannot tune";
}

// A GPU the table does not hold but of its architecture (an H100 PCIe, 114 SMs, asking the H200
// table) gets the H200's answer, labelled as the H200's and launched for 114 SMs; not described,
// it is NOT_FOUND with a pointer to --arch.
TEST(ClientLibTest, TheCliAnswersAnotherGpuOfTheTablesArchitecture) {
  const std::vector<std::string> h100 = {"--model", "NVIDIA H100 PCIe", "--arch", "sm_90",
                                         "--sm-count", "114"};
  auto get = [](const std::vector<std::string>& device) {
    std::vector<std::string> args = {"get", "matmul", "--shape", "8192x8192x8192", "--table",
                                     Shipped(), "--json"};
    args.insert(args.end(), device.begin(), device.end());
    return RunProgram((BinDir() / "cutune").string(), args,
                      {"CUTUNE_SERVER=unix:/nonexistent/cutuned.sock"});
  };
  RunResult own = get({"--model", kModel});
  RunResult other = get(h100);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const nlohmann::json a = nlohmann::json::parse(own.out), b = nlohmann::json::parse(other.out);
  EXPECT_EQ(b["rung"], "RUNG_SAME_ARCHITECTURE");
  EXPECT_EQ(b["device_model"], kModel);
  EXPECT_EQ(b["params"], a["params"]);
  ASSERT_GT(std::stoll(b["params"]["sk"].get<std::string>()), 0) << "a stream-K answer";
  EXPECT_EQ(b["geometry"]["grid"][0].get<int64_t>() % 114, 0) << b["geometry"].dump();
  EXPECT_NE(a["geometry"]["grid"][0], b["geometry"]["grid"][0]) << "132 SMs against 114";

  RunResult bare = get({"--model", "NVIDIA H100 PCIe"});
  EXPECT_NE(bare.exit_code, 0);
  EXPECT_THAT(bare.err, HasSubstr("--arch"));
}

}  // namespace
}  // namespace cutune::testing
