// Defects of the running service found by trying it as an outside client would (issue 13): lookups
// that waited on the GPU, a second daemon on a taken port, unbounded streams, shutdowns held by
// open streams, the loopback rule, and the smaller findings. Each test failed before its fix.
#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/service/address.h"
#include "server/service/call_limit.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace health = ::grpc::health::v1;

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// A port nothing listens on right now (the kernel's choice, released again).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  close(fd);
  return ntohs(sin.sin_port);
}

int Threads(pid_t pid) {
  int count = 0;
  if (DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
    closedir(dir);
  }
  return count;
}

// --- 3: lookups never wait on a worker ---------------------------------------------------------

TEST(HardeningTest, LookupsAndListingsDoNotWaitForACandidateInFlight) {
  ScopedEnv slow("FAKE_WORKER_RUN_MS", "1500");
  TestServer server;
  pb::StartTuningResponse started;
  ASSERT_TRUE(server.stub().StartTuning(Context().get(), SmallJob(256, 256, {2, 4, 8}), &started).ok());
  ASSERT_TRUE(WaitUntil([&] {
    return JobNow(server.stub(), started.job_id()).state() == pb::JobProgress::STATE_RUNNING;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a candidate is in the worker

  std::vector<double> lookup_ms, devices_ms;
  const auto until = Clock::now() + std::chrono::milliseconds(2000);  // spans a whole candidate
  while (Clock::now() < until) {
    auto t0 = Clock::now();
    pb::GetBestConfigResponse answer;
    ASSERT_TRUE(server.stub().GetBestConfig(Context().get(), Lookup("transpose", {512, 512}), &answer).ok());
    auto t1 = Clock::now();
    pb::ListDevicesResponse devices;
    ASSERT_TRUE(server.stub().ListDevices(Context().get(), {}, &devices).ok());
    auto t2 = Clock::now();
    lookup_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    devices_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    ASSERT_EQ(devices.devices(0).state(), pb::Device::STATE_BUSY);
  }
  std::cerr << lookup_ms.size() << " lookups during a 1.5 s candidate: p50 "
            << Percentile(lookup_ms, 0.5) << " ms, p99 " << Percentile(lookup_ms, 0.99)
            << " ms; ListDevices p99 " << Percentile(devices_ms, 0.99) << " ms\n";
  // Before the fix every call waited for the candidate (~1500 ms). The target is p99 <= 5 ms
  // (bench/results/hardening.md); the bound here leaves room for a loaded CI machine.
  EXPECT_LT(Percentile(lookup_ms, 0.99), 50.0);
  EXPECT_LT(Percentile(devices_ms, 0.99), 50.0);
  pb::CancelJobRequest cancel;
  cancel.set_job_id(started.job_id());
  pb::CancelJobResponse cancelled;
  (void)server.stub().CancelJob(Context().get(), cancel, &cancelled);
}

// --- 4: one port, one daemon --------------------------------------------------------------------

TEST(HardeningTest, ASecondDaemonOnATakenTcpPortExitsWithAClearMessage) {
  TempDir dir;
  const std::string listen = "127.0.0.1:" + std::to_string(FreePort());
  auto first = Daemon::Start({"--db", dir.File("a.db"), "--worker", FakeWorker()}, {}, listen);
  ASSERT_NE(first, nullptr);
  std::string output;
  const std::optional<int> code = Daemon::RunToExit(
      {"--listen", listen, "--db", dir.File("b.db"), "--worker", FakeWorker(), "--cache-dir",
       dir.File("cache")},
      &output);
  EXPECT_THAT(code, ::testing::Optional(::testing::Ne(0))) << output;
  EXPECT_THAT(output, HasSubstr("cannot listen on '" + listen + "'"));
  EXPECT_THAT(output, Not(HasSubstr("daemon.started")));
}

TEST(HardeningTest, ASecondDaemonOnALiveUnixSocketExitsAndLeavesItToTheFirst) {
  TempDir dir;
  const std::string listen = "unix:" + dir.File("s.sock");
  auto first = Daemon::Start({"--db", dir.File("a.db"), "--worker", FakeWorker()}, {}, listen);
  ASSERT_NE(first, nullptr);
  std::string output;
  const std::optional<int> code = Daemon::RunToExit(
      {"--listen", listen, "--db", dir.File("b.db"), "--worker", FakeWorker()}, &output);
  EXPECT_THAT(code, ::testing::Optional(::testing::Ne(0))) << output;
  EXPECT_THAT(output, HasSubstr("is in use: another cutuned"));
  pb::ListDevicesResponse devices;
  EXPECT_TRUE(first->stub().ListDevices(Context().get(), {}, &devices).ok());
}

// --- 5: bounded streams, prompt shutdown -----------------------------------------------------

TEST(HardeningTest, WatchStreamsPastTheLimitAreRefusedAndThreadsStayBounded) {
  TempDir dir;
  auto daemon = Daemon::Start({"--db", dir.File("w.db"), "--worker", FakeWorker(), "--max-streams",
                               "16", "--grace-seconds", "2"},
                              {"FAKE_WORKER_RUN_MS=300"});
  ASSERT_NE(daemon, nullptr);
  pb::StartTuningResponse started;
  ASSERT_TRUE(daemon->stub().StartTuning(Context().get(), SmallJob(256, 256, {1, 2, 4, 8, 16, 32}),
                                         &started).ok());
  const int threads_before = Threads(daemon->pid());
  constexpr int kStreams = 100;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<pb::JobProgress>>> readers;
  int open = 0;
  pb::WatchJobRequest watch;
  watch.set_job_id(started.job_id());
  for (int i = 0; i < kStreams; ++i) {
    contexts.push_back(Context(std::chrono::seconds(30)));
    readers.push_back(daemon->stub().WatchJob(contexts.back().get(), watch));
    pb::JobProgress first;
    if (readers.back()->Read(&first)) {
      ++open;
    } else {
      EXPECT_THAT(readers.back()->Finish(),
                  HasStatus(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many open WatchJob streams"));
      readers.back().reset();
    }
  }
  const int threads_during = Threads(daemon->pid());
  std::cerr << "open streams: " << open << " of " << kStreams << "; daemon threads " << threads_before
            << " -> " << threads_during << "\n";
  EXPECT_EQ(open, 16);
  EXPECT_LT(threads_during, threads_before + 16 + 24);  // one per open stream, plus gRPC's own
  // Lookups still answer while the streams are held.
  pb::GetBestConfigResponse answer;
  EXPECT_TRUE(daemon->stub().GetBestConfig(Context().get(), Lookup("matmul", {64, 64, 64}), &answer).ok());
  for (auto& c : contexts) c->TryCancel();
  for (auto& r : readers) {
    if (r) (void)r->Finish();
  }
}

TEST(HardeningTest, SigtermEndsHealthWatchesAndJobStreamsAtOnce) {
  TempDir dir;
  auto daemon = Daemon::Start({"--db", dir.File("h.db"), "--worker", FakeWorker(), "--grace-seconds",
                               "20"},
                              {"FAKE_WORKER_RUN_MS=300"});
  ASSERT_NE(daemon, nullptr);
  pb::StartTuningResponse started;
  ASSERT_TRUE(daemon->stub().StartTuning(Context().get(), SmallJob(256, 256, {1, 2, 4, 8, 16, 32}),
                                         &started).ok());
  ASSERT_TRUE(WaitUntil([&] { return JobNow(daemon->stub(), started.job_id()).done() >= 1; }));

  // Watchers that never let go by themselves: a load balancer's health watch and a job watch.
  std::atomic<int> health_messages{0};
  grpc::Status health_end, job_end;
  auto health_context = Context(std::chrono::seconds(60));
  auto job_context = Context(std::chrono::seconds(60));
  std::thread health_watcher([&] {
    auto stub = health::Health::NewStub(daemon->channel());
    health::HealthCheckRequest request;
    request.set_service("cutune.v1.Tuner");
    auto reader = stub->Watch(health_context.get(), request);
    health::HealthCheckResponse response;
    while (reader->Read(&response)) ++health_messages;
    health_end = reader->Finish();

  });
  std::thread job_watcher([&] {
    pb::WatchJobRequest request;
    request.set_job_id(started.job_id());
    auto reader = daemon->stub().WatchJob(job_context.get(), request);
    pb::JobProgress progress;
    while (reader->Read(&progress)) {
    }
    job_end = reader->Finish();
  });
  ASSERT_TRUE(WaitUntil([&] { return health_messages >= 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));

  const auto sent = Clock::now();
  const std::optional<int> code = daemon->Stop(SIGTERM, std::chrono::seconds(22));
  const double took = std::chrono::duration<double>(Clock::now() - sent).count();
  health_watcher.join();
  job_watcher.join();
  EXPECT_EQ(code, 0) << daemon->log();
  std::cerr << "SIGTERM to exit with two open watches: " << took << " s (grace 20 s)\n";
  // Before the fix the open watches held the daemon for the whole grace period (and gRPC's own
  // drain, waiting for idle client connections, for seconds). Now: the candidate in flight
  // (300 ms), 200 ms for late calls, the checkpoint.
  EXPECT_LT(took, 3.0) << daemon->log();
  EXPECT_EQ(health_messages.load(), 2);  // SERVING, then NOT_SERVING
  EXPECT_TRUE(health_end.ok()) << health_end.error_message();
  EXPECT_THAT(job_end, HasStatus(grpc::StatusCode::UNAVAILABLE, "shutting down"));
}

// --- store errors inside a job are reported, not dropped ------------------------------------

TEST(HardeningTest, AFinalistTimeTheStoreCannotKeepFailsTheJobAndItsSweep) {
  TempDir dir;
  const std::string db = dir.File("broken.db");
  ASSERT_TRUE(store::Store::Open(db).ok());  // the schema
  // Rows can be written but never updated: what a finalist's re-measured time needs.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "CREATE TRIGGER no_updates BEFORE UPDATE ON rows "
                         "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  ServerOptions options;
  options.db_path = db;
  TestServer server(options);
  pb::StartTuningResponse started;
  ASSERT_TRUE(server.stub().StartTuning(Context().get(), SmallJob(256, 256), &started).ok());
  const pb::JobProgress end = WaitForJob(server.stub(), started.job_id());
  // Before the fix the error was discarded and the job "succeeded" with first-pass figures.
  EXPECT_EQ(end.state(), pb::JobProgress::STATE_FAILED);
  EXPECT_THAT(end.error(), HasSubstr("storing a finalist's re-measured time"));
  EXPECT_THAT(end.error(), HasSubstr("disk on fire"));
  auto sweeps = server.store().ListSweeps();
  ASSERT_TRUE(sweeps.ok());
  ASSERT_EQ(sweeps->size(), 1u);
  EXPECT_EQ(sweeps->front().status, store::SweepStatus::kFailed);
}

TEST(HardeningTest, CallLimitAdmitsUpToItsBoundAndGivesPlacesBack) {
  CallLimit limit(2, "table exports");
  auto a = limit.Enter();
  auto b = limit.Enter();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  auto c = limit.Enter();
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("too many table exports at once (the limit is 2)"));
  { auto moved = std::move(*a); }
  EXPECT_EQ(limit.in_use(), 1);
  EXPECT_TRUE(limit.Enter().ok());
  EXPECT_EQ(limit.in_use(), 1);
}

TEST(HardeningTest, TableCallsPastTheLimitAreRefused) {
  ServerOptions options;
  options.limits.max_table_calls = 0;
  TestServer server(options);
  pb::ExportTableResponse exported;
  EXPECT_THAT(server.stub().ExportTable(Context().get(), {}, &exported),
              HasStatus(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many table exports and imports"));
}

// --- the loopback rule and exposure ----------------------------------------------------------

TEST(HardeningTest, ListenAddressesAreParsedNotPrefixMatched) {
  struct Case {
    std::string text;
    bool loopback;
  };
  for (const Case& c : std::vector<Case>{{"127.0.0.1:50051", true},
                                         {"127.8.9.10:1", true},
                                         {"localhost:0", true},
                                         {"LOCALHOST:80", true},
                                         {"[::1]:50051", true},
                                         {"[::ffff:127.0.0.1]:5", true},
                                         {"unix:/tmp/x.sock", true},
                                         {"unix-abstract:cutune", true},
                                         {"127.0.0.1.example.invalid:50051", false},
                                         {"localhost.example.com:1", false},
                                         {"0.0.0.0:50051", false},
                                         {"[::]:50051", false},
                                         {":50051", false},
                                         {"10.0.0.1:50051", false},
                                         {"gpu-node-7:50051", false}}) {
    auto parsed = ParseListenAddress(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_EQ(parsed->loopback, c.loopback) << c.text;
  }
  for (std::string_view bad : {"", "50051", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                                 "127.0.0.1:5x", "::1:50051", "[::1:50051", "[nope]:1", "unix:",
                                 "a b:1"}) {
    EXPECT_EQ(ParseListenAddress(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseListenAddress("[::1]:0")->WithPort(4242), "[::1]:4242");
  EXPECT_EQ(ParseListenAddress("127.0.0.1:0")->WithPort(4242), "127.0.0.1:4242");
}

TEST(HardeningTest, ANonLoopbackNameThatLooksLoopbackNeedsTlsOrTheOptOut) {
  TempDir dir;
  std::string output;
  const auto code = Daemon::RunToExit({"--listen", "127.0.0.1.example.invalid:50051", "--db",
                                       dir.File("x.db"), "--worker", FakeWorker()},
                                      &output);
  EXPECT_EQ(code, 2) << output;
  EXPECT_THAT(output, HasSubstr("refusing plaintext on non-loopback address"));
}

TEST(HardeningTest, ANonLoopbackAddressNeedsTokensOrClientCertificatesOrTheOptOut) {
  TempDir dir;
  std::string output;
  const auto code = Daemon::RunToExit({"--listen", "0.0.0.0:0", "--allow-insecure-remote", "--db",
                                       dir.File("x.db"), "--worker", FakeWorker()},
                                      &output);
  EXPECT_EQ(code, 2) << output;
  EXPECT_THAT(output, HasSubstr("to anyone who reaches it"));
  EXPECT_THAT(output, HasSubstr("--allow-unauthenticated"));
}

TEST(HardeningTest, TokenFilesOthersCanReadAreAcceptedWithAWarning) {
  TempDir dir;
  const std::string tokens = dir.File("admin.tokens");
  std::ofstream(tokens) << "s3cret\n";
  chmod(tokens.c_str(), 0644);
  std::vector<std::string> warnings;
  auto authorizer = Authorizer::FromFiles(tokens, "", &warnings);
  ASSERT_TRUE(authorizer.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("is readable by every user (mode 0644); chmod 600 it"));
  chmod(tokens.c_str(), 0600);
  warnings.clear();
  ASSERT_TRUE(Authorizer::FromFiles(tokens, "", &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

// --- smaller findings ------------------------------------------------------------------------

TEST(HardeningTest, TheBearerSchemeIsCaseInsensitive) {
  TestServer server(ServerOptions::Auth(Authorizer::FromTokens({"adm"}, {"rd"})));
  for (std::string header : {"Bearer rd", "bearer rd", "BEARER rd", "Bearer   rd"}) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", header);
    pb::ListDevicesResponse devices;
    EXPECT_TRUE(server.stub().ListDevices(&context, {}, &devices).ok()) << header;
  }
  for (std::string header : {"Bearerrd", "Basic rd", "Bearer", "rd"}) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", header);
    pb::ListDevicesResponse devices;
    EXPECT_THAT(server.stub().ListDevices(&context, {}, &devices),
                HasStatus(grpc::StatusCode::UNAUTHENTICATED, "")) << header;
  }
}

TEST(HardeningTest, ATuningLookupWithAReadTokenIsDeniedBeforeItsProblemIsChecked) {
  TestServer server(ServerOptions::Auth(Authorizer::FromTokens({"adm"}, {"rd"})));
  auto request = Lookup("no-such-family", {0});
  request.set_on_miss(pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING);
  pb::GetBestConfigResponse answer;
  EXPECT_THAT(server.stub().GetBestConfig(Context(std::chrono::seconds(5), "rd").get(), request, &answer),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, "read-only"));
}

TEST(HardeningTest, BudgetsThatAreNotFiniteNumbersAreRefused) {
  TestServer server;
  for (double seconds : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    auto request = SmallJob(256, 256);
    request.mutable_budget()->set_max_seconds(seconds);
    pb::StartTuningResponse started;
    EXPECT_THAT(server.stub().StartTuning(Context().get(), request, &started),
                HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "budget.max_seconds must be a finite number"))
        << seconds;
  }
  EXPECT_TRUE(server.jobs().List().empty());
}

TEST(HardeningTest, ATableServerAnswersATuningLookupThatHitsAFreshExactWinner) {
  TempDir dir;
  const std::string no_driver =
      WriteScript(dir, "worker", "exec " + FakeWorker() + " \"$@\" --fail-start");
  // A winner tuned with this build's kernel source and NVRTC: fresh on a table server.
  const kernels::KernelFamily& family = kernels::TransposeFamily();
  std::filesystem::create_directories(dir.File("tables"));
  std::ofstream(dir.File("tables/fresh.json")) << absl::StrCat(
      R"({"format":"cutune-table","version":1,"devices":[{"model":"NVIDIA H200","cc_major":9,)",
      R"("cc_minor":0,"sm_count":132,"total_memory_bytes":150121594880,"winners":[{)",
      R"("family":"transpose","dtype":"f32","shape":[4096,4096],)",
      R"("params":{"smem":1,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0},)",
      R"("detail":"","resources":{"registers":30,"static_shared_bytes":4224,"stack_bytes":0,)",
      R"("spill_store_bytes":0,"spill_load_bytes":0,"constant_bytes":0},"samples":10,)",
      R"("time_us":40,"min_us":39,"rel_spread":0.01,"gbps":3300,"tflops":0,)",
      R"("percent_of_reference":90,"compile_ms":5,"reference":{"name":"device copy",)",
      R"("time_us":36},"measured_at":"2026-11-29T14:23:55.220Z","source_hash":")",
      family.source_hash(), R"(","space_version":)", family.space_version(),
      R"(,"driver_version":13000,"nvrtc_version":")", compiler::NvrtcVersion(), R"("}]}]})");
  auto daemon = Daemon::Start({"--db", dir.File("t.db"), "--worker", no_driver, "--tables",
                               dir.File("tables")});
  ASSERT_NE(daemon, nullptr);
  for (auto mode : {pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE,
                    pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING}) {
    auto hit = Lookup("transpose", {4096, 4096});
    hit.set_on_miss(mode);
    pb::GetBestConfigResponse answer;
    grpc::Status hit_status = daemon->stub().GetBestConfig(Context().get(), hit, &answer);
    ASSERT_TRUE(hit_status.ok()) << hit_status.error_message();
    EXPECT_EQ(answer.rung(), pb::GetBestConfigResponse::RUNG_EXACT);
    EXPECT_THAT(answer.stale(), ::testing::IsEmpty());
    EXPECT_TRUE(answer.job_id().empty());
    // A miss still needs a GPU this host does not have.
    auto miss = Lookup("transpose", {4000, 4096});
    miss.set_on_miss(mode);
    EXPECT_THAT(daemon->stub().GetBestConfig(Context().get(), miss, &answer),
                HasStatus(grpc::StatusCode::FAILED_PRECONDITION, "this host cannot tune"));
  }
}

TEST(HardeningTest, HugeNamesAreEchoedTruncated) {
  TestServer server;
  const std::string huge(1 << 20, 'x');
  pb::GetBestConfigResponse answer;
  auto dtype = Lookup("transpose", {64, 64});
  dtype.mutable_problem()->set_dtype(huge);
  grpc::Status status = server.stub().GetBestConfig(Context().get(), dtype, &answer);
  EXPECT_THAT(status, HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "(1048576 bytes)"));
  EXPECT_LT(status.error_message().size(), 300u);

  pb::WatchJobRequest watch;
  watch.set_job_id(huge);
  auto context = Context();
  auto reader = server.stub().WatchJob(context.get(), watch);
  pb::JobProgress progress;
  EXPECT_FALSE(reader->Read(&progress));
  status = reader->Finish();
  EXPECT_THAT(status, HasStatus(grpc::StatusCode::NOT_FOUND, "no job 'xxxx"));
  EXPECT_LT(status.error_message().size(), 300u);

  auto strategy = SmallJob(256, 256);
  strategy.set_strategy(std::string(100000, 'q') + std::string(1, '\0'));
  pb::StartTuningResponse started;
  status = server.stub().StartTuning(Context().get(), strategy, &started);
  EXPECT_THAT(status, HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "unknown strategy 'qqq"));
  EXPECT_LT(status.error_message().size(), 300u);
}

}  // namespace
}  // namespace cutune::service::testing
