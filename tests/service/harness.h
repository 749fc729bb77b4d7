// What the service tests share: a cutune.v1.Tuner server built in-process on 127.0.0.1:0 (real
// store, NVRTC pool, job manager and service; the GPU worker process is tests/worker's
// fake-worker), a real cutuned started as a child process, and small helpers for jobs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/v1/cutune.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "server/compiler/pool.h"
#include "server/service/auth.h"
#include "server/service/job_manager.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"
#include "tests/common/temp_dir.h"

namespace cutune::service::testing {

namespace pb = ::cutune::v1;

// A grpc::Status with this code and a message containing `substring`.
MATCHER_P2(HasStatus, code, substring, "") {
  if (arg.error_code() == code && arg.error_message().find(substring) != std::string::npos) {
    return true;
  }
  *result_listener << "status is " << arg.error_code() << ": \"" << arg.error_message() << "\"";
  return false;
}

// The directory of the running test binary; fake-worker and cutuned are built there too.
std::filesystem::path BinDir();
std::filesystem::path AssetsDir();  // tests/service/assets
std::string FakeWorker();

using ::cutune::testing::TempDir;

// Writes an executable /bin/sh script `name` with `body` into `dir`; returns its path.
std::string WriteScript(const TempDir& dir, const std::string& name, const std::string& body);

// Sets an environment variable for the lifetime of the object (worker processes inherit it).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

struct ServerOptions {
  std::string worker_path;  // empty: fake-worker
  int max_queue_per_gpu = 8;
  Authorizer authorizer;
  std::string db_path;  // empty: a fresh database in the server's temporary directory
  ServiceLimits limits;
  std::string ncu_path;  // JobManager::Options::ncu_path (empty: the daemon's search)
  store::FitFn fit;      // the store's fit hook in place of StoreRules()'s (empty: theirs)

  static ServerOptions Worker(std::string path) {
    ServerOptions o;
    o.worker_path = std::move(path);
    return o;
  }
  static ServerOptions MaxQueue(int jobs) {
    ServerOptions o;
    o.max_queue_per_gpu = jobs;
    return o;
  }
  static ServerOptions Auth(Authorizer authorizer) {
    ServerOptions o;
    o.authorizer = std::move(authorizer);
    return o;
  }
};

// The whole service in this process, on a real loopback TCP channel.
class TestServer {
 public:
  explicit TestServer(ServerOptions options = {});
  ~TestServer();

  pb::Tuner::Stub& stub() { return *stub_; }
  std::unique_ptr<pb::Tuner::Stub> NewStub() const;
  const std::string& target() const { return target_; }
  store::Store& store() { return *store_; }
  JobManager& jobs() { return *jobs_; }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<compiler::CachingCompiler> compiler_;
  std::unique_ptr<compiler::CompilePool> pool_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<TunerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string target_;
  std::unique_ptr<pb::Tuner::Stub> stub_;
};

// A small transpose job: every parameter pinned except `rows` (and `pad` when `both_pads`), so
// the sweep compiles rows.size() (x2) candidates only.
pb::StartTuningRequest SmallJob(int64_t rows_dim, int64_t cols_dim,
                                std::vector<int64_t> rows = {8, 16}, bool both_pads = true);

// A GetBestConfig request for one problem (no device: the daemon's only model answers).
pb::GetBestConfigRequest Lookup(const std::string& family, std::vector<int64_t> shape,
                                const std::string& dtype = "f32");

// A client context with a deadline, and optionally a bearer token.
std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds deadline = std::chrono::seconds(30),
                                             const std::string& token = "");

// The values of one key in the server's trailing metadata of a finished call.
std::vector<std::string> TrailerValues(const grpc::ClientContext& context, std::string_view key);

// Streams WatchJob until the job ends; every message seen is appended to `seen` when given.
pb::JobProgress WaitForJob(pb::Tuner::Stub& stub, const std::string& job_id,
                           std::chrono::seconds timeout = std::chrono::seconds(60),
                           std::vector<pb::JobProgress>* seen = nullptr);

// The job's state now, via ListJobs (STATE_UNSPECIFIED when not listed).
pb::JobProgress JobNow(pb::Tuner::Stub& stub, const std::string& job_id);

// Polls `ready` every 10 ms until it holds or `timeout` passes; returns whether it held.
bool WaitUntil(const std::function<bool()>& ready,
               std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A real cutuned child process listening on a unix socket in its own temporary directory; it is
// up once its log says daemon.started.
class Daemon {
 public:
  // Starts cutuned with `args` (plus --listen and --cache-dir) and `env` ("NAME=value" added to
  // this process's environment); waits until ListDevices answers.
  // `listen` empty: a unix socket in the daemon's own directory.
  static std::unique_ptr<Daemon> Start(const std::vector<std::string>& args,
                                       const std::vector<std::string>& env = {},
                                       const std::string& listen = "");
  // Starts cutuned with exactly `args` (nothing added: e.g. a --config file says where it
  // listens) and connects to `target`.
  static std::unique_ptr<Daemon> StartExactly(const std::vector<std::string>& args,
                                              const std::string& target,
                                              const std::vector<std::string>& env = {});

  // Runs cutuned with exactly `args` (nothing added) until it exits or `timeout` passes (then
  // kills it); returns the exit code (nullopt: killed or signalled) and sets `output`.
  static std::optional<int> RunToExit(const std::vector<std::string>& args, std::string* output,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(20));
  ~Daemon();  // SIGKILL if still running

  const std::string& target() const { return target_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  pb::Tuner::Stub& stub() { return *stub_; }
  pid_t pid() const { return pid_; }
  std::string log() const;
  // From the first text-format log line of `event` that has it, the value of `key` (unquoted
  // values only): e.g. LoggedValue("daemon.started", "metrics_listen").
  std::string LoggedValue(std::string_view event, std::string_view key) const;
  const TempDir& dir() const { return *dir_; }

  // Sends `signal` and waits up to `timeout` for the exit; the exit code, or nullopt if it did
  // not exit (or was killed by a signal).
  std::optional<int> Stop(int signal, std::chrono::milliseconds timeout);

 private:
  Daemon() = default;
  static std::unique_ptr<Daemon> Launch(std::unique_ptr<TempDir> dir,
                                        const std::vector<std::string>& args,
                                        const std::vector<std::string>& env,
                                        const std::string& target);
  std::unique_ptr<TempDir> dir_;
  std::string target_;
  pid_t pid_ = -1;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Tuner::Stub> stub_;
};

}  // namespace cutune::service::testing
