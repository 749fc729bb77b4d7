// What the real cutuned tells operators: its log lines (never a token or a table's body), the
// log of a sweep with a fault and a timeout injected through the fake worker, and Prometheus
// metrics on --metrics-listen with the same exposure and token rules as the gRPC address.
#include <signal.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "server/core/version.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAdminToken[] = "admin-SECRET-3f9a7c41d2";
constexpr char kReadToken[] = "read-SECRET-88e1b0c7aa";
constexpr char kWrongToken[] = "wrong-SECRET-5d4c3b2a19";

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// Token files as cutuned wants them (mode 600); returns the flags that name them.
std::vector<std::string> TokenFlags(const TempDir& dir) {
  const std::string admin = dir.File("admin-tokens"), read = dir.File("read-tokens");
  std::ofstream(admin) << kAdminToken << "\n";
  std::ofstream(read) << kReadToken << "\n";
  std::filesystem::permissions(
      admin, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(
      read, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return {"--admin-tokens", admin, "--read-tokens", read};
}

// The value of the sample `series` (name with labels, exactly as rendered) in a scrape; -1 if
// absent.
double Sample(const std::string& scrape, const std::string& series) {
  std::istringstream lines(scrape);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

struct Scrape {
  int status = 0;
  std::string content_type;
  std::string body;
  std::string www_authenticate;
};

template <typename Client>  // httplib::Client or httplib::SSLClient
Scrape Get(Client& client, const std::string& path, const std::string& token = "") {
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  auto result = client.Get(path.c_str(), headers);
  if (!result) return {};
  return {result->status, result->get_header_value("Content-Type"), result->body,
          result->get_header_value("WWW-Authenticate")};
}

// host:port of the daemon's metrics server, from its daemon.started line.
std::pair<std::string, int> MetricsAddress(const Daemon& daemon) {
  const std::string address = daemon.LoggedValue("daemon.started", "metrics_listen");
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return {"", 0};
  return {address.substr(0, colon), std::stoi(address.substr(colon + 1))};
}

TEST(DaemonLogTest, NeverShowsATokenOrATableBody) {
  TempDir dir;
  std::vector<std::string> args = {"--db",        dir.File("l.db"), "--worker",     FakeWorker(),
                                   "--log-level", "debug",          "--log-format", "json"};
  for (const std::string& flag : TokenFlags(dir)) args.push_back(flag);
  auto daemon = Daemon::Start(args);
  ASSERT_NE(daemon, nullptr);
  pb::ListDevicesResponse devices;
  EXPECT_THAT(
      daemon->stub().ListDevices(Context(std::chrono::seconds(5), kWrongToken).get(), {}, &devices),
      HasStatus(grpc::StatusCode::UNAUTHENTICATED, "unknown token"));
  EXPECT_TRUE(daemon->stub()
                  .ListDevices(Context(std::chrono::seconds(5), kReadToken).get(), {}, &devices)
                  .ok());
  const std::string table = ReadText(AssetsDir() / "tables" / "fixture_h200.json");
  pb::ImportTableRequest import;
  import.set_json(table);
  pb::ImportTableResponse imported;
  EXPECT_THAT(daemon->stub().ImportTable(Context(std::chrono::seconds(10), kReadToken).get(),
                                         import, &imported),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, "read-only"));
  ASSERT_TRUE(
      daemon->stub()
          .ImportTable(Context(std::chrono::seconds(10), kAdminToken).get(), import, &imported)
          .ok());
  pb::ExportTableResponse exported;
  ASSERT_TRUE(daemon->stub()
                  .ExportTable(Context(std::chrono::seconds(10), kReadToken).get(), {}, &exported)
                  .ok());
  ASSERT_EQ(daemon->Stop(SIGTERM, std::chrono::seconds(15)), 0);

  const std::string log = daemon->log();
  std::istringstream lines(log);
  std::string line;
  std::vector<nlohmann::json> events;
  while (std::getline(lines, line)) {
    events.push_back(nlohmann::json::parse(line));  // every line is one JSON object
    for (const char* key : {"ts", "level", "event"})
      EXPECT_TRUE(events.back().contains(key)) << line;
  }
  auto find = [&](const std::string& event) {
    std::vector<nlohmann::json> out;
    for (const auto& e : events) {
      if (e["event"] == event) out.push_back(e);
    }
    return out;
  };
  const auto refusals = find("auth.refused");
  ASSERT_EQ(refusals.size(), 2u) << log;
  EXPECT_EQ(refusals[0]["method"], "cutune.v1.Tuner/ListDevices");
  EXPECT_EQ(refusals[0]["code"], "UNAUTHENTICATED");
  EXPECT_EQ(refusals[0]["reason"], "unknown token");
  EXPECT_EQ(refusals[1]["method"], "cutune.v1.Tuner/ImportTable");
  EXPECT_EQ(refusals[1]["code"], "PERMISSION_DENIED");
  EXPECT_THAT(refusals[0]["peer"].get<std::string>(), HasSubstr("unix"));
  const auto imports = find("table.imported");
  ASSERT_EQ(imports.size(), 1u) << log;
  EXPECT_EQ(imports[0]["source"], "ImportTable");
  EXPECT_EQ(imports[0]["bytes"], static_cast<int64_t>(table.size()));
  EXPECT_EQ(imports[0]["winners_added"], 2);
  EXPECT_EQ(find("table.exported").size(), 1u) << log;
  EXPECT_EQ(find("daemon.started").size(), 1u);
  EXPECT_EQ(find("daemon.stopped").size(), 1u);
  EXPECT_FALSE(find("rpc.finished").empty());  // debug: every call

  // No token, not even in part (each has "SECRET" in it), nor the table's text (any 40 bytes of
  // it), nor the exported table's.
  EXPECT_THAT(log, Not(HasSubstr("SECRET")));
  for (const std::string& body : {table, exported.json()}) {
    for (size_t at = 0; at + 40 <= body.size(); at += 40) {
      ASSERT_THAT(log, Not(HasSubstr(body.substr(at, 40)))) << "table text at byte " << at;
    }
  }
}

TEST(DaemonLogTest, ASweepLogsItsJobFaultTimeoutAndRestarts) {
  TempDir dir;
  // The first candidate kills its worker (the file is consumed), the second hangs its
  // replacement past the candidate timeout, the others run.
  const std::string crash = dir.File("crash"), hang = dir.File("hang");
  std::ofstream(crash) << "";
  std::ofstream(hang) << "";
  auto daemon = Daemon::Start(
      {"--db", dir.File("s.db"), "--worker", FakeWorker(), "--candidate-timeout-ms", "500"},
      {"FAKE_WORKER_CRASH_FILE=" + crash, "FAKE_WORKER_HANG_FILE=" + hang});
  ASSERT_NE(daemon, nullptr);
  pb::StartTuningResponse started;
  ASSERT_TRUE(
      daemon->stub().StartTuning(Context().get(), SmallJob(64, 64, {8, 16, 32}), &started).ok());
  const pb::JobProgress end = WaitForJob(daemon->stub(), started.job_id());
  EXPECT_EQ(end.state(), pb::JobProgress::STATE_SUCCEEDED);
  const std::string log = daemon->log();
  const std::string id = started.job_id();
  EXPECT_THAT(log,
              HasSubstr(" INFO job.queued job=" + id +
                        " family=transpose shape=64x64 dtype=f32 device=0 strategy=brute_force\n"));
  EXPECT_THAT(log, HasSubstr(" INFO job.started job=" + id + " family=transpose "));
  EXPECT_THAT(log, ContainsRegex(" WARNING candidate.fault job=" + id +
                                 " device=0 params=[^ ]+ detail=\"the worker process died"));
  EXPECT_THAT(log, ContainsRegex(" WARNING worker.restarted device=0 reason=fault "));
  EXPECT_THAT(log, ContainsRegex(" WARNING candidate.timeout job=" + id +
                                 " device=0 params=[^ ]+ detail=\"no result within 500 ms"));
  EXPECT_THAT(log, ContainsRegex(" WARNING worker.restarted device=0 reason=timeout "));
  // Six candidates (rows x pad): one fault, one timeout, four measured.
  EXPECT_THAT(log, ContainsRegex(" INFO job.finished job=" + id +
                                 " family=transpose shape=64x64 dtype=f32 device=0 "
                                 "strategy=brute_force state=succeeded candidates=6 ok=4 "
                                 "rejected=2 best_us=[0-9.]+ best=[^ ]+ wall_s=[0-9.e-]+\n"));
}

TEST(DaemonMetricsTest, ScrapesMoveWithLookupsAndSweeps) {
  TempDir dir;
  auto daemon = Daemon::Start(
      {"--db", dir.File("m.db"), "--worker", FakeWorker(), "--metrics-listen", "127.0.0.1:0"});
  ASSERT_NE(daemon, nullptr);
  const auto [host, port] = MetricsAddress(*daemon);
  ASSERT_EQ(host, "127.0.0.1") << daemon->log();
  httplib::Client client(host, port);
  const Scrape before = Get(client, "/metrics");
  ASSERT_EQ(before.status, 200);
  EXPECT_EQ(before.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(before.body, HasSubstr("# HELP cutune_lookups_total "));
  EXPECT_THAT(before.body, HasSubstr("# TYPE cutune_lookups_total counter\n"));
  EXPECT_THAT(before.body, HasSubstr("# TYPE cutune_lookup_duration_seconds histogram\n"));
  EXPECT_THAT(before.body,
              HasSubstr("cutune_build_info{version=\"" + std::string(Version()) + "\"} 1\n"));
  EXPECT_EQ(Sample(before.body, "cutune_lookups_total{rung=\"family_default\"}"), 0);
  EXPECT_EQ(Sample(before.body, "cutune_candidates_total{outcome=\"ok\"}"), 0);
  EXPECT_EQ(Sample(before.body, "cutune_gpu_state{gpu=\"0\",model=\"Fake GPU\",state=\"ready\"}"),
            1);
  EXPECT_EQ(Sample(before.body, "cutune_jobs{state=\"succeeded\"}"), 0);
  EXPECT_GT(Sample(before.body, "cutune_store_size_bytes"), 0);

  pb::GetBestConfigRequest lookup;
  lookup.mutable_problem()->set_family("transpose");
  lookup.mutable_problem()->add_shape(64);
  lookup.mutable_problem()->add_shape(64);
  pb::GetBestConfigResponse answer;
  ASSERT_TRUE(daemon->stub().GetBestConfig(Context().get(), lookup, &answer).ok());
  EXPECT_EQ(answer.rung(), pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT);
  pb::StartTuningResponse started;
  ASSERT_TRUE(daemon->stub().StartTuning(Context().get(), SmallJob(64, 64), &started).ok());
  EXPECT_EQ(WaitForJob(daemon->stub(), started.job_id()).state(), pb::JobProgress::STATE_SUCCEEDED);
  ASSERT_TRUE(daemon->stub().GetBestConfig(Context().get(), lookup, &answer).ok());
  EXPECT_EQ(answer.rung(), pb::GetBestConfigResponse::RUNG_EXACT);

  const Scrape after = Get(client, "/metrics");
  ASSERT_EQ(after.status, 200);
  EXPECT_EQ(Sample(after.body, "cutune_lookups_total{rung=\"family_default\"}"), 1);
  EXPECT_EQ(Sample(after.body, "cutune_lookups_total{rung=\"exact\"}"), 1);
  EXPECT_EQ(Sample(after.body, "cutune_lookup_duration_seconds_count"), 2);
  EXPECT_EQ(Sample(after.body, "cutune_candidates_total{outcome=\"ok\"}"), 4);  // rows x pad
  EXPECT_EQ(Sample(after.body, "cutune_jobs{state=\"succeeded\"}"), 1);
  EXPECT_EQ(Sample(after.body, "cutune_jobs_finished_total{state=\"succeeded\"}"), 1);
  EXPECT_EQ(Sample(after.body,
                   "cutune_rpcs_total{service=\"cutune.v1.Tuner\","
                   "method=\"GetBestConfig\",code=\"OK\"}"),
            2);
  EXPECT_EQ(Sample(after.body,
                   "cutune_rpcs_total{service=\"cutune.v1.Tuner\","
                   "method=\"StartTuning\",code=\"OK\"}"),
            1);
  EXPECT_GE(Sample(after.body, "cutune_store_size_bytes"),
            Sample(before.body, "cutune_store_size_bytes"));
  EXPECT_EQ(Get(client, "/nothing-here").status, 404);
}

TEST(DaemonMetricsTest, ConfiguredTokensGuardMetricsAsTheyGuardRpcs) {
  TempDir dir;
  std::vector<std::string> args = {"--db",       dir.File("t.db"),   "--worker",
                                   FakeWorker(), "--metrics-listen", "127.0.0.1:0"};
  for (const std::string& flag : TokenFlags(dir)) args.push_back(flag);
  auto daemon = Daemon::Start(args);
  ASSERT_NE(daemon, nullptr);
  const auto [host, port] = MetricsAddress(*daemon);
  httplib::Client client(host, port);
  const Scrape anonymous = Get(client, "/metrics");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.www_authenticate, "Bearer");
  EXPECT_THAT(anonymous.body, HasSubstr("missing 'authorization: Bearer <token>'"));
  EXPECT_EQ(Get(client, "/metrics", kWrongToken).status, 401);
  const Scrape read = Get(client, "/metrics", kReadToken);  // the read role suffices
  EXPECT_EQ(read.status, 200);
  EXPECT_GE(
      Sample(read.body, "cutune_auth_refusals_total{transport=\"http\",code=\"UNAUTHENTICATED\"}"),
      2);
  EXPECT_EQ(Get(client, "/metrics", kAdminToken).status, 200);
  EXPECT_THAT(daemon->log(), HasSubstr("auth.refused transport=http peer=127.0.0.1:"));
  EXPECT_THAT(daemon->log(),
              HasSubstr("method=\"GET /metrics\" code=UNAUTHENTICATED reason=\"unknown token\""));
  EXPECT_THAT(daemon->log(), Not(HasSubstr(kWrongToken)));
}

TEST(DaemonMetricsTest, ServesOverTlsWithTheDaemonsCertificate) {
  signal(SIGPIPE, SIG_IGN);  // the plaintext attempt below meets a closing TLS socket
  TempDir dir;
  const std::filesystem::path tls = CUTUNE_TLS_ASSETS;
  auto daemon = Daemon::Start({"--db", dir.File("s.db"), "--worker", FakeWorker(), "--tls-cert",
                               (tls / "server.pem").string(), "--tls-key",
                               (tls / "server.key").string(), "--metrics-listen", "127.0.0.1:0"});
  ASSERT_NE(daemon, nullptr);
  const auto [host, port] = MetricsAddress(*daemon);
  httplib::SSLClient client("localhost", port);
  client.set_ca_cert_path((tls / "ca.pem").string().c_str());
  client.enable_server_certificate_verification(true);
  const Scrape scrape = Get(client, "/metrics");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_THAT(scrape.body, HasSubstr("cutune_build_info"));
  httplib::Client plain(host, port);  // plaintext to a TLS port gets no answer
  EXPECT_NE(Get(plain, "/metrics").status, 200);
}

TEST(DaemonMetricsTest, AClientCaMeansScrapersPresentCertificatesToo) {
  // The refused handshake closes the connection under the client's TLS writes.
  signal(SIGPIPE, SIG_IGN);
  TempDir dir;
  const std::filesystem::path tls = CUTUNE_TLS_ASSETS;
  auto daemon = Daemon::Start({"--db", dir.File("s.db"), "--worker", FakeWorker(), "--tls-cert",
                               (tls / "server.pem").string(), "--tls-key",
                               (tls / "server.key").string(), "--tls-client-ca",
                               (tls / "ca.pem").string(), "--metrics-listen", "127.0.0.1:0"});
  ASSERT_NE(daemon, nullptr);
  const int port = MetricsAddress(*daemon).second;
  httplib::SSLClient with_cert("localhost", port, (tls / "client.pem").string(),
                               (tls / "client.key").string());
  with_cert.set_ca_cert_path((tls / "ca.pem").string().c_str());
  with_cert.enable_server_certificate_verification(true);
  EXPECT_EQ(Get(with_cert, "/metrics").status, 200);
  httplib::SSLClient without("localhost", port);
  without.set_ca_cert_path((tls / "ca.pem").string().c_str());
  without.enable_server_certificate_verification(true);
  EXPECT_NE(Get(without, "/metrics").status, 200);
}

TEST(DaemonMetricsTest, ANonLoopbackMetricsAddressFollowsTheExposureRule) {
  TempDir dir;
  const std::vector<std::string> base = {
      "--listen", "unix:" + dir.File("c.sock"), "--db", dir.File("x.db"), "--worker", FakeWorker()};
  auto run = [&](std::vector<std::string> extra, std::string* output) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return Daemon::RunToExit(args, output);
  };
  std::string output;
  EXPECT_EQ(run({"--metrics-listen", "0.0.0.0:0"}, &output), 2) << output;
  EXPECT_THAT(output, HasSubstr("refusing plaintext on non-loopback address '0.0.0.0:0' "
                                "(--metrics-listen)"));
  EXPECT_THAT(output, Not(HasSubstr("daemon.started")));
  EXPECT_EQ(run({"--metrics-listen", "0.0.0.0:0", "--allow-insecure-remote"}, &output), 2)
      << output;
  EXPECT_THAT(output, HasSubstr("(--metrics-listen) to anyone who reaches it"));
  EXPECT_EQ(run({"--metrics-listen", "unix:" + dir.File("m.sock")}, &output), 2) << output;
  EXPECT_THAT(output, HasSubstr("is not HOST:PORT (Prometheus scrapes TCP)"));
  EXPECT_EQ(run({"--metrics-listen", "nowhere"}, &output), 2) << output;
  EXPECT_THAT(output, HasSubstr("--metrics-listen: bad listen address 'nowhere'"));
}

TEST(DaemonMetricsTest, OptOutsAndTokensOpenANonLoopbackMetricsAddress) {
  TempDir dir;
  std::vector<std::string> args = {
      "--db",      dir.File("o.db"),         "--worker", FakeWorker(), "--metrics-listen",
      "0.0.0.0:0", "--allow-insecure-remote"};
  for (const std::string& flag : TokenFlags(dir)) args.push_back(flag);
  auto daemon = Daemon::Start(args);
  ASSERT_NE(daemon, nullptr);
  const auto [host, port] = MetricsAddress(*daemon);
  EXPECT_EQ(host, "0.0.0.0");
  httplib::Client client("127.0.0.1", port);
  EXPECT_EQ(Get(client, "/metrics").status, 401);
  EXPECT_EQ(Get(client, "/metrics", kReadToken).status, 200);
}

TEST(DaemonMetricsTest, ASecondDaemonCannotTakeATakenMetricsPort) {
  TempDir dir;
  auto first = Daemon::Start(
      {"--db", dir.File("a.db"), "--worker", FakeWorker(), "--metrics-listen", "127.0.0.1:0"});
  ASSERT_NE(first, nullptr);
  const auto [host, port] = MetricsAddress(*first);
  std::string output;
  const auto code = Daemon::RunToExit(
      {"--listen", "unix:" + dir.File("b.sock"), "--db", dir.File("b.db"), "--worker", FakeWorker(),
       "--metrics-listen", host + ":" + std::to_string(port)},
      &output);
  EXPECT_EQ(code, 1) << output;
  EXPECT_THAT(output,
              HasSubstr("cannot listen on '127.0.0.1:" + std::to_string(port) + "' for HTTP"));
}

}  // namespace
}  // namespace cutune::service::testing
