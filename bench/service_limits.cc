// cutune-service-limits: what hostile-but-authorized load costs a real cutuned (no GPU needed;
// the GPU worker is the fake-worker test double). It writes a store of --sweeps finished
// transpose sweeps with every valid candidate's row, starts cutuned on it, and measures:
//   1. --exports concurrent ExportTable(include_rows): how many ran, how many were refused, the
//      daemon's peak resident memory (VmHWM) and the wall time;
//   2. --streams concurrent WatchJob streams on a running job: how many opened, how many were
//      refused, the daemon's threads, and a lookup's latency meanwhile;
//   3. SIGTERM with every stream and a health Watch still open: the time to exit.
// Extra arguments after "--" go to cutuned (e.g. --max-table-calls 16 --max-streams 2000 to see
// the daemon without its bounds).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "cutune/v1/cutune.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/core/limits.h"
#include "server/store/store.h"
#include "server/tuner/strategy.h"

namespace {

using namespace cutune;
namespace pb = ::cutune::v1;
namespace hpb = ::grpc::health::v1;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A /proc/PID/status field in kB ("VmHWM", "VmRSS") or a count ("Threads").
long ProcStatus(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

absl::Status Populate(const std::string& db, int sweeps) {
  auto opened = store::Store::Open(db);
  if (!opened.ok()) return opened.status();
  store::Store& store = **opened;
  const DeviceDescription device{"NVIDIA H200", "GPU-bench", 9, 0, 132, int64_t{141} << 30};
  if (auto s = store.UpsertDevice(device, 13000); !s.ok()) return s;
  const kernels::KernelFamily& family = kernels::TransposeFamily();
  const tuner::ValidCandidates valid = tuner::EnumerateValid(family.default_space());
  const Provenance provenance{13000, compiler::NvrtcVersion(), family.source_hash(),
                              family.space_version(), ""};
  for (int i = 0; i < sweeps; ++i) {
    const Shape shape{1024 + 8 * i, 2048 + 16 * i};
    auto sweep = store.StartOrResumeSweep({device, "transpose", shape, DType::kF32}, provenance,
                                          "{\"bench\": true}");
    if (!sweep.ok()) return sweep.status();
    std::vector<Measurement> rows;
    for (size_t c = 0; c < valid.candidates.size(); ++c) {
      Measurement m;
      m.params = valid.candidates[c];
      m.outcome = Outcome::kOk;
      const double us = 100.0 + static_cast<double>((c * 7919) % 1000) / 10;
      m.timing = {25, us, us * 0.98, 0.004};
      m.detail = "bench row";
      m.gbps = 4000 - us;
      rows.push_back(std::move(m));
    }
    if (auto s = store.RecordMeasurements(sweep->sweep_id, rows); !s.ok()) return s;
    auto finished =
        store.FinishSweep(sweep->sweep_id, store::SweepStatus::kSucceeded, {"device copy", 90});
    if (!finished.ok()) return finished.status();
  }
  return store.Checkpoint();
}

std::unique_ptr<grpc::ClientContext> Context(double seconds) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return c;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

int main(int argc, char** argv) {
  std::string cutuned, worker, dir_flag;
  int sweeps = 150, exports = 16, streams = 1000;
  std::vector<std::string> extra;
  CLI::App app{"cutune-service-limits: a real cutuned under concurrent exports and streams"};
  app.add_option("--cutuned", cutuned, "cutuned binary (default: beside this program)");
  app.add_option("--worker", worker, "fake-worker binary (default: beside this program)");
  app.add_option("--dir", dir_flag, "working directory (default: a new temporary one)");
  app.add_option("--sweeps", sweeps, "stored sweeps (every valid transpose candidate each)")
      ->capture_default_str();
  app.add_option("--exports", exports, "concurrent ExportTable(include_rows)")->capture_default_str();
  app.add_option("--streams", streams, "concurrent WatchJob streams")->capture_default_str();
  app.add_option("extra", extra, "arguments for cutuned (after --)");
  CLI11_PARSE(app, argc, argv);
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  if (cutuned.empty()) cutuned = (self / "cutuned").string();
  if (worker.empty()) worker = (self / "fake-worker").string();
  std::string dir = dir_flag;
  if (dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cutune-limits-XXXXXX").string();
    dir = mkdtemp(tmpl.data());
  }
  const std::string db = dir + "/limits.db";
  std::filesystem::remove(db);
  auto began = Clock::now();
  if (auto s = Populate(db, sweeps); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::printf("store: %d sweeps x every valid transpose candidate, %.1f MB, written in %.1f s\n",
              sweeps, std::filesystem::file_size(db) / 1e6, Seconds(began));

  const std::string target = "unix:" + dir + "/cutuned.sock";
  std::vector<std::string> args = {cutuned, "--listen", target, "--db", db, "--worker", worker,
                                   "--cache-dir", dir + "/cache", "--grace-seconds", "10"};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("FAKE_WORKER_RUN_MS", "500", 1);
    freopen((dir + "/cutuned.log").c_str(), "w", stderr);
    std::vector<char*> raw;
    for (auto& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  auto channel = Channel(target);
  auto stub = pb::Tuner::NewStub(channel);
  bool up = false;
  for (int i = 0; i < 300 && !up; ++i) {
    pb::ListDevicesResponse devices;
    up = stub->ListDevices(Context(0.2).get(), {}, &devices).ok();
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    std::cerr << "cutuned did not come up; see " << dir << "/cutuned.log\n";
    return 1;
  }
  std::printf("cutuned %s: RSS %ld MB, %ld threads at start\n",
              extra.empty() ? "(default limits)" : "(with the extra arguments)",
              ProcStatus(pid, "VmRSS") / 1024, ProcStatus(pid, "Threads"));

  // 1. Concurrent exports.
  {
    std::atomic<int> ok{0}, refused{0}, other{0};
    std::atomic<size_t> bytes{0};
    std::vector<std::thread> threads;
    began = Clock::now();
    for (int i = 0; i < exports; ++i) {
      threads.emplace_back([&] {
        auto own = pb::Tuner::NewStub(Channel(target));
        pb::ExportTableRequest request;
        request.set_include_rows(true);
        pb::ExportTableResponse response;
        grpc::Status s = own->ExportTable(Context(120).get(), request, &response);
        if (s.ok()) {
          ++ok;
          bytes = response.json().size();
        } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                   s.error_message().find("at once") != std::string::npos) {
          ++refused;  // the daemon's bound, not a message-size limit
        } else {
          ++other;
          std::cerr << "export: " << s.error_code() << " " << s.error_message().substr(0, 200) << "\n";
        }
      });
    }
    for (auto& t : threads) t.join();
    std::printf("%d concurrent ExportTable(include_rows): %d answered (%.1f MB each), %d refused "
                "by the daemon's bound, %d other; %.2f s; daemon peak RSS %ld MB\n",
                exports, ok.load(), bytes.load() / 1e6, refused.load(), other.load(),
                Seconds(began), ProcStatus(pid, "VmHWM") / 1024);
  }

  // 2. Concurrent WatchJob streams on a running job.
  pb::StartTuningRequest job;
  job.mutable_problem()->set_family("transpose");
  job.mutable_problem()->add_shape(512);
  job.mutable_problem()->add_shape(512);
  job.mutable_budget()->set_max_evaluations(200);  // 100 s of fake candidates
  pb::StartTuningResponse started;
  if (grpc::Status s = stub->StartTuning(Context(10).get(), job, &started); !s.ok()) {
    std::cerr << "StartTuning: " << s.error_message() << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<pb::JobProgress>>> readers;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  int open = 0, refused = 0, other = 0;
  began = Clock::now();
  pb::WatchJobRequest watch;
  watch.set_job_id(started.job_id());
  for (int i = 0; i < streams; ++i) {
    channels.push_back(i % 50 == 0 ? Channel(target) : channels.back());
    auto own = pb::Tuner::NewStub(channels.back());
    contexts.push_back(Context(300));
    readers.push_back(own->WatchJob(contexts.back().get(), watch));
    pb::JobProgress first;
    if (readers.back()->Read(&first)) {
      ++open;
    } else {
      grpc::Status s = readers.back()->Finish();
      (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? refused : other)++;
      readers.back().reset();
    }
  }
  const double opened_in = Seconds(began);
  std::vector<double> lookup_ms;
  for (int i = 0; i < 200; ++i) {
    pb::GetBestConfigRequest lookup;
    lookup.mutable_problem()->set_family("transpose");
    lookup.mutable_problem()->add_shape(1024);
    lookup.mutable_problem()->add_shape(2048);
    lookup.mutable_device()->set_model("NVIDIA H200");
    pb::GetBestConfigResponse answer;
    auto t0 = Clock::now();
    grpc::Status s = stub->GetBestConfig(Context(10).get(), lookup, &answer);
    lookup_ms.push_back(Seconds(t0) * 1000);
    if (!s.ok()) std::cerr << "lookup: " << s.error_message() << "\n";
  }
  std::sort(lookup_ms.begin(), lookup_ms.end());
  std::printf("%d concurrent WatchJob streams: %d open, %d refused (RESOURCE_EXHAUSTED), %d other "
              "in %.2f s; daemon threads %ld; lookups meanwhile p50 %.2f ms, p99 %.2f ms\n",
              streams, open, refused, other, opened_in, ProcStatus(pid, "Threads"),
              lookup_ms[lookup_ms.size() / 2], lookup_ms[lookup_ms.size() * 99 / 100]);

  // 3. SIGTERM with the streams and a health watch open.
  auto health = hpb::Health::NewStub(channel);
  hpb::HealthCheckRequest health_request;
  health_request.set_service("cutune.v1.Tuner");
  auto health_context = Context(300);
  auto health_reader = health->Watch(health_context.get(), health_request);
  hpb::HealthCheckResponse status;
  health_reader->Read(&status);
  began = Clock::now();
  kill(pid, SIGTERM);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  std::printf("SIGTERM with %d job streams and a health watch open (grace 10 s): exit %d after "
              "%.2f s\n",
              open, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, Seconds(began));
  for (auto& c : contexts) c->TryCancel();
  health_context->TryCancel();
  if (dir_flag.empty()) std::filesystem::remove_all(dir);
  return 0;
}
