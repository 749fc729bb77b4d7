// cutune-lookup-load: cached GetBestConfig lookups from concurrent clients over loopback gRPC,
// printing requests/s and latency percentiles per client count. By default it serves itself:
// an in-process table server (store on a temp file, no GPU) holding winners for --keys problems;
// with --server it loads an existing cutuned instead (whose tables must answer --model).
// Every client thread has its own channel and TCP connection.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "cutune/v1/cutune.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/compiler/pool.h"
#include "server/service/job_manager.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"

namespace {

using namespace cutune;
namespace pb = ::cutune::v1;
using Clock = std::chrono::steady_clock;

constexpr char kModel[] = "NVIDIA H200";

// A problem with a stored winner: transpose [n, m] and matmul [n, m, k] over powers of two.
std::vector<std::pair<const kernels::KernelFamily*, Shape>> Problems(int count) {
  std::vector<std::pair<const kernels::KernelFamily*, Shape>> out;
  for (int i = 0; static_cast<int>(out.size()) < count; ++i) {
    const int64_t a = int64_t{256} << (i % 7);
    const int64_t b = int64_t{256} << ((i / 7) % 7);
    if (i % 2 == 0) {
      out.push_back({&kernels::TransposeFamily(), {a, b}});
    } else {
      out.push_back({&kernels::MatmulFamily(), {a, b, int64_t{512} << (i % 3)}});
    }
  }
  return out;
}

absl::Status Populate(store::Store& store, int keys) {
  const DeviceDescription device{kModel, "GPU-bench", 9, 0, 132, int64_t{141} << 30};
  if (auto s = store.UpsertDevice(device, 13000); !s.ok()) return s;
  int n = 0;
  for (const auto& [family, shape] : Problems(keys)) {
    const Provenance provenance{13000, compiler::NvrtcVersion(), family->source_hash(),
                                family->space_version(), ""};
    auto sweep = store.StartOrResumeSweep({device, std::string(family->name()), shape, DType::kF32},
                                          provenance, "{\"bench\": true}");
    if (!sweep.ok()) return sweep.status();
    Measurement m;
    m.params = family->baseline();
    m.outcome = Outcome::kOk;
    const double us = 100.0 + n++;
    m.timing = {25, us, us * 0.98, 0.004};
    if (auto s = store.RecordMeasurement(sweep->sweep_id, m); !s.ok()) return s;
    auto finished = store.FinishSweep(sweep->sweep_id, store::SweepStatus::kSucceeded,
                                      {"device copy", us * 0.9});
    if (!finished.ok()) return finished.status();
  }
  return absl::OkStatus();
}

// For --baseline: answers every GetBestConfig with one canned response of a real lookup's size,
// measuring what gRPC, the kernel and the clients cost on their own.
class CannedService final : public pb::Tuner::Service {
 public:
  explicit CannedService(pb::GetBestConfigResponse response) : response_(std::move(response)) {}
  grpc::Status GetBestConfig(grpc::ServerContext*, const pb::GetBestConfigRequest*,
                             pb::GetBestConfigResponse* response) override {
    *response = response_;
    return grpc::Status::OK;
  }

 private:
  const pb::GetBestConfigResponse response_;
};

// The service in this process, as a table server on 127.0.0.1 (port chosen by the kernel).
struct InProcessServer {
  std::filesystem::path dir;
  std::unique_ptr<store::Store> store;
  compiler::CachingCompiler compiler;
  std::unique_ptr<compiler::CompilePool> pool;
  std::unique_ptr<service::JobManager> jobs;
  std::unique_ptr<service::TunerService> service;
  std::unique_ptr<CannedService> canned;
  std::unique_ptr<grpc::Server> server;
  std::string target;

  ~InProcessServer() {
    if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    if (jobs) jobs->Shutdown();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

absl::StatusOr<std::unique_ptr<InProcessServer>> StartServer(int keys, bool baseline) {
  auto s = std::make_unique<InProcessServer>();
  std::string tmpl = (std::filesystem::temp_directory_path() / "cutune-load-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  s->dir = tmpl;
  auto store = store::Store::Open((s->dir / "bench.db").string());
  if (!store.ok()) return store.status();
  s->store = std::move(*store);
  if (auto st = Populate(*s->store, keys); !st.ok()) return st;
  s->pool = std::make_unique<compiler::CompilePool>(s->compiler, 1);
  service::JobManager::Options options;
  options.worker_path = (s->dir / "no-worker").string();  // a table server: lookups only
  s->jobs = std::make_unique<service::JobManager>(options, *s->store, *s->pool);
  s->service = std::make_unique<service::TunerService>(*s->store, *s->jobs, *s->pool,
                                                       service::Authorizer());
  if (baseline) {
    pb::GetBestConfigRequest request;
    request.mutable_problem()->set_family("transpose");
    request.mutable_problem()->add_shape(256);
    request.mutable_problem()->add_shape(256);
    request.mutable_device()->set_model(kModel);
    pb::GetBestConfigResponse response;
    grpc::ServerContext context;
    grpc::Status status = s->service->GetBestConfig(&context, &request, &response);
    if (!status.ok()) return absl::InternalError(status.error_message());
    s->canned = std::make_unique<CannedService>(std::move(response));
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  if (baseline) {
    builder.RegisterService(s->canned.get());
  } else {
    builder.RegisterService(s->service.get());
  }
  s->server = builder.BuildAndStart();
  if (!s->server || port == 0) return absl::UnavailableError("cannot listen on 127.0.0.1");
  s->target = "127.0.0.1:" + std::to_string(port);
  return s;
}

struct Round {
  int clients = 0;
  double seconds = 0;
  std::vector<uint32_t> latencies_ns;  // one per successful request, sorted
  int64_t errors = 0;
  std::string first_error;
};

Round Run(const std::string& target, int clients, double warmup_s, double seconds,
          const std::vector<pb::GetBestConfigRequest>& requests) {
  std::vector<std::vector<uint32_t>> per_thread(clients);
  std::atomic<int64_t> errors{0};
  std::mutex error_mu;
  std::string first_error;
  std::atomic<bool> measuring{false}, stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
      auto stub = pb::Tuner::NewStub(
          grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
      std::vector<uint32_t>& mine = per_thread[c];
      mine.reserve(1 << 20);
      size_t next = static_cast<size_t>(c);
      while (!stop.load(std::memory_order_relaxed)) {
        const pb::GetBestConfigRequest& request = requests[next++ % requests.size()];
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        pb::GetBestConfigResponse response;
        const auto began = Clock::now();
        grpc::Status status = stub->GetBestConfig(&context, request, &response);
        const auto took = Clock::now() - began;
        if (!measuring.load(std::memory_order_relaxed)) continue;
        if (!status.ok() || response.rung() != pb::GetBestConfigResponse::RUNG_EXACT) {
          if (errors++ == 0) {
            std::lock_guard lock(error_mu);
            first_error = status.ok() ? "rung " + pb::GetBestConfigResponse::Rung_Name(response.rung())
                                      : status.error_message();
          }
          continue;
        }
        mine.push_back(static_cast<uint32_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup_s));
  measuring = true;
  const auto began = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measuring = false;
  const double measured = std::chrono::duration<double>(Clock::now() - began).count();
  stop = true;
  for (auto& t : threads) t.join();
  Round round;
  round.clients = clients;
  round.seconds = measured;
  for (auto& v : per_thread) round.latencies_ns.insert(round.latencies_ns.end(), v.begin(), v.end());
  std::sort(round.latencies_ns.begin(), round.latencies_ns.end());
  round.errors = errors;
  round.first_error = first_error;
  return round;
}

double PercentileUs(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p / 100.0 * sorted.size()));
  return sorted[i] / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server_target;
  std::vector<int> client_counts = {1, 2, 4, 8, 16};
  double seconds = 5;
  double warmup = 1;
  int keys = 64;
  std::string model = kModel;
  bool baseline = false;
  CLI::App app{"cutune-lookup-load: cached GetBestConfig lookups from concurrent clients"};
  app.add_option("--server", server_target, "Load this cutuned (default: an in-process server)");
  app.add_option("--clients", client_counts, "Client thread counts, one round each")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--seconds", seconds, "Measured seconds per round")->capture_default_str();
  app.add_option("--warmup", warmup, "Unmeasured seconds before each round")->capture_default_str();
  app.add_option("--keys", keys, "Distinct cached problems (in-process server)")->capture_default_str();
  app.add_option("--model", model, "Device model the lookups name")->capture_default_str();
  app.add_flag("--baseline", baseline,
               "Serve one canned response instead of the service: the cost of gRPC alone");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<InProcessServer> in_process;
  if (server_target.empty()) {
    auto started = StartServer(keys, baseline);
    if (!started.ok()) {
      std::cerr << "cutune-lookup-load: " << started.status() << "\n";
      return 1;
    }
    in_process = std::move(*started);
    server_target = in_process->target;
  }
  std::vector<pb::GetBestConfigRequest> requests;
  for (const auto& [family, shape] : Problems(keys)) {
    pb::GetBestConfigRequest r;
    r.mutable_problem()->set_family(std::string(family->name()));
    for (int64_t d : shape) r.mutable_problem()->add_shape(d);
    r.mutable_problem()->set_dtype("f32");
    r.mutable_device()->set_model(model);
    requests.push_back(std::move(r));
  }

  std::printf("cutune-lookup-load: %s server %s, %d cached keys, %u hardware threads, %.0f s per round\n",
              in_process ? (baseline ? "in-process BASELINE (canned answer, no lookup)" : "in-process")
                         : "external",
              server_target.c_str(), keys,
              std::thread::hardware_concurrency(), seconds);
  std::printf("%7s %10s %10s %8s %8s %8s %8s %7s\n", "clients", "requests", "req/s", "p50_us",
              "p90_us", "p99_us", "max_us", "errors");
  bool met = false;
  for (int clients : client_counts) {
    Round r = Run(server_target, clients, warmup, seconds, requests);
    const double rate = r.latencies_ns.size() / r.seconds;
    const double p99 = PercentileUs(r.latencies_ns, 99);
    std::printf("%7d %10zu %10.0f %8.0f %8.0f %8.0f %8.0f %7lld\n", clients, r.latencies_ns.size(),
                rate, PercentileUs(r.latencies_ns, 50), PercentileUs(r.latencies_ns, 90), p99,
                r.latencies_ns.empty() ? 0.0 : r.latencies_ns.back() / 1000.0,
                static_cast<long long>(r.errors));
    if (r.errors > 0) std::printf("        first error: %s\n", r.first_error.c_str());
    met |= r.errors == 0 && rate >= 10'000 && p99 <= 1000;
    std::fflush(stdout);
  }
  std::printf("target (some client count with >= 10000 req/s and p99 <= 1000 us): %s\n",
              met ? "met" : "NOT met");
  return 0;
}
