#include "tests/service/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

namespace cutune::service::testing {

std::filesystem::path BinDir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path(); }

std::filesystem::path AssetsDir() { return CUTUNE_SERVICE_ASSETS; }

std::string FakeWorker() { return (BinDir() / "fake-worker").string(); }

std::string WriteScript(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.File(name);
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

ScopedEnv::ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) old_ = old;
  setenv(name_.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    setenv(name_.c_str(), old_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

TestServer::TestServer(ServerOptions options) {
  store::StoreOptions store_options = StoreRules();
  if (options.fit) store_options.fit = options.fit;
  auto store = store::Store::Open(
      options.db_path.empty() ? dir_.File("cutune.db") : options.db_path, store_options);
  if (!store.ok()) {
    ADD_FAILURE() << store.status();
    std::abort();
  }
  store_ = std::move(*store);
  compiler_ = std::make_unique<compiler::CachingCompiler>();
  pool_ = std::make_unique<compiler::CompilePool>(*compiler_, 2);
  JobManager::Options job_options;
  job_options.max_queue_per_gpu = options.max_queue_per_gpu;
  job_options.worker_path = options.worker_path.empty() ? FakeWorker() : options.worker_path;
  job_options.ncu_path = options.ncu_path;
  jobs_ = std::make_unique<JobManager>(job_options, *store_, *pool_);
  service_ = std::make_unique<TunerService>(*store_, *jobs_, *pool_, std::move(options.authorizer),
                                            options.limits);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    ADD_FAILURE() << "cannot start the in-process server";
    std::abort();
  }
  target_ = "127.0.0.1:" + std::to_string(port);
  stub_ = NewStub();
}

TestServer::~TestServer() {
  // Jobs first: running WatchJob handlers then see their jobs end and return.
  jobs_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_->Wait();
}

std::unique_ptr<pb::Tuner::Stub> TestServer::NewStub() const {
  return pb::Tuner::NewStub(grpc::CreateChannel(target_, grpc::InsecureChannelCredentials()));
}

pb::StartTuningRequest SmallJob(int64_t rows_dim, int64_t cols_dim, std::vector<int64_t> rows,
                                bool both_pads) {
  pb::StartTuningRequest request;
  request.mutable_problem()->set_family("transpose");
  request.mutable_problem()->add_shape(rows_dim);
  request.mutable_problem()->add_shape(cols_dim);
  request.mutable_problem()->set_dtype("f32");
  auto& space = *request.mutable_space()->mutable_values();
  auto pin = [&](const std::string& name, std::vector<int64_t> values) {
    for (int64_t v : values) space[name].add_values(v);
  };
  pin("smem", {1});
  pin("tile", {32});
  pin("rows", std::move(rows));
  pin("vec", {1});
  pin("pad", both_pads ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1});
  pin("swizzle", {0});
  pin("minb", {0});
  return request;
}

pb::GetBestConfigRequest Lookup(const std::string& family, std::vector<int64_t> shape,
                                const std::string& dtype) {
  pb::GetBestConfigRequest request;
  request.mutable_problem()->set_family(family);
  for (int64_t d : shape) request.mutable_problem()->add_shape(d);
  request.mutable_problem()->set_dtype(dtype);
  return request;
}

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds deadline,
                                             const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + deadline);
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  return context;
}

std::vector<std::string> TrailerValues(const grpc::ClientContext& context, std::string_view key) {
  std::vector<std::string> values;
  auto [begin, end] = context.GetServerTrailingMetadata().equal_range(
      grpc::string_ref(key.data(), key.size()));
  for (auto it = begin; it != end; ++it) values.emplace_back(it->second.data(), it->second.size());
  return values;
}

pb::JobProgress WaitForJob(pb::Tuner::Stub& stub, const std::string& job_id,
                           std::chrono::seconds timeout, std::vector<pb::JobProgress>* seen) {
  auto context = Context(timeout);
  pb::WatchJobRequest request;
  request.set_job_id(job_id);
  auto reader = stub.WatchJob(context.get(), request);
  pb::JobProgress progress, last;
  while (reader->Read(&progress)) {
    if (seen) seen->push_back(progress);
    last = progress;
  }
  grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << "WatchJob(" << job_id << "): " << status.error_code() << " "
                           << status.error_message();
  return last;
}

pb::JobProgress JobNow(pb::Tuner::Stub& stub, const std::string& job_id) {
  auto context = Context();
  pb::ListJobsResponse response;
  grpc::Status status = stub.ListJobs(context.get(), {}, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  for (const pb::JobProgress& job : response.jobs()) {
    if (job.job_id() == job_id) return job;
  }
  return {};
}

bool WaitUntil(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

namespace {

// Starts cutuned with `args`, its output to `log`; returns the child's pid.
pid_t SpawnCutuned(const std::vector<std::string>& args, const std::vector<std::string>& env,
                   const std::string& log) {
  std::vector<std::string> argv = {(BinDir() / "cutuned").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const std::string& e : env) putenv(strdup(e.c_str()));
    std::vector<char*> raw;
    for (const std::string& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  return pid;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::optional<int> Daemon::RunToExit(const std::vector<std::string>& args, std::string* output,
                                     std::chrono::milliseconds timeout) {
  TempDir dir;
  const std::string log = dir.File("cutuned.log");
  const pid_t pid = SpawnCutuned(args, {}, log);
  int status = 0;
  const bool exited = WaitUntil([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  *output = ReadAll(log);
  if (!exited || !WIFEXITED(status)) return std::nullopt;
  return WEXITSTATUS(status);
}

std::unique_ptr<Daemon> Daemon::Start(const std::vector<std::string>& args,
                                      const std::vector<std::string>& env,
                                      const std::string& listen) {
  auto dir = std::make_unique<TempDir>();
  const std::string target = listen.empty() ? "unix:" + dir->File("cutuned.sock") : listen;
  std::vector<std::string> argv = {"--listen", target, "--cache-dir", dir->File("cache")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Launch(std::move(dir), argv, env, target);
}

std::unique_ptr<Daemon> Daemon::StartExactly(const std::vector<std::string>& args,
                                             const std::string& target,
                                             const std::vector<std::string>& env) {
  return Launch(std::make_unique<TempDir>(), args, env, target);
}

std::unique_ptr<Daemon> Daemon::Launch(std::unique_ptr<TempDir> dir,
                                       const std::vector<std::string>& args,
                                       const std::vector<std::string>& env,
                                       const std::string& target) {
  std::unique_ptr<Daemon> daemon(new Daemon);
  daemon->dir_ = std::move(dir);
  daemon->target_ = target;
  const pid_t pid = SpawnCutuned(args, env, daemon->dir_->File("cutuned.log"));
  daemon->pid_ = pid;
  // Serving once it says so: daemon.started is logged after both servers listen.
  const bool up = WaitUntil(
      [&] {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
          daemon->pid_ = -1;
          return true;  // exited: reported below
        }
        return daemon->log().find("daemon.started") != std::string::npos;
      },
      std::chrono::seconds(30));
  if (!up || daemon->pid_ < 0) {
    ADD_FAILURE() << "cutuned did not come up; its log:\n" << daemon->log();
    return nullptr;
  }
  daemon->channel_ = grpc::CreateChannel(daemon->target_, grpc::InsecureChannelCredentials());
  daemon->stub_ = pb::Tuner::NewStub(daemon->channel_);
  return daemon;
}

Daemon::~Daemon() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string Daemon::log() const { return ReadAll(dir_->File("cutuned.log")); }

std::string Daemon::LoggedValue(std::string_view event, std::string_view key) const {
  std::istringstream lines(log());
  std::string line;
  const std::string field = " " + std::string(key) + "=";
  while (std::getline(lines, line)) {
    if (line.find(" " + std::string(event) + " ") == std::string::npos) continue;
    const size_t at = line.find(field);
    if (at == std::string::npos) continue;
    const size_t begin = at + field.size();
    return line.substr(begin, line.find(' ', begin) - begin);
  }
  return "";
}

std::optional<int> Daemon::Stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  kill(pid_, signal);
  int status = 0;
  const bool exited = WaitUntil([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
  if (!exited) return std::nullopt;
  pid_ = -1;
  if (!WIFEXITED(status)) return std::nullopt;
  return WEXITSTATUS(status);
}

}  // namespace cutune::service::testing
