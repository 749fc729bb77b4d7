// cutuned: the cutune daemon. Serves cutune.v1.Tuner, grpc.health.v1 and (optionally) server
// reflection; tunes on this host's GPUs through one worker process each; keeps everything in
// SQLite. Without a GPU it is a table server: lookups from imported tables, no tuning.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "kernels/family.h"
#include "server/compiler/cache.h"
#include "server/compiler/pool.h"
#include "server/core/files.h"
#include "server/core/limits.h"
#include "server/core/version.h"
#include "server/service/address.h"
#include "server/service/health.h"
#include "server/service/in_flight.h"
#include "server/service/job_manager.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"
#include "server/store/tables.h"

namespace {

using namespace cutune;

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string db = std::string(store::Store::kDefaultPath);
  std::string tables;
  std::string tls_cert, tls_key, tls_client_ca;
  std::string admin_tokens, read_tokens;
  bool allow_insecure_remote = false;
  bool allow_unauthenticated = false;
  int max_threads = 256;
  int max_streams = 64;
  int max_table_calls = 2;
  bool reflection = true;
  int max_queue = 8;
  int compile_threads = 0;
  std::string worker;
  std::string cache_dir;
  double grace_seconds = 10;
  int candidate_timeout_ms = 10'000;
};

// What a non-loopback address needs: encryption (TLS) unless --allow-insecure-remote, and a way to
// tell clients apart (bearer tokens or client certificates) unless --allow-unauthenticated.
absl::Status CheckExposure(const Flags& flags, const service::ListenAddress& address) {
  if (address.loopback) return absl::OkStatus();
  if (flags.tls_cert.empty() && !flags.allow_insecure_remote) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing plaintext on non-loopback address '", flags.listen,
        "': give --tls-cert/--tls-key, listen on 127.0.0.1 or unix:PATH, or pass "
        "--allow-insecure-remote"));
  }
  const bool authenticated =
      !flags.admin_tokens.empty() || !flags.read_tokens.empty() || !flags.tls_client_ca.empty();
  if (!authenticated && !flags.allow_unauthenticated) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to serve non-loopback address '", flags.listen,
        "' to anyone who reaches it: give --admin-tokens/--read-tokens or --tls-client-ca, or "
        "pass --allow-unauthenticated"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const Flags& flags) {
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (flags.tls_cert.empty()) {
    if (!flags.tls_client_ca.empty()) {
      return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions options(
      flags.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                  : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  auto cert = ReadFile(flags.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadFile(flags.tls_key);
  if (!key.ok()) return key.status();
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!flags.tls_client_ca.empty()) {
    auto ca = ReadFile(flags.tls_client_ca);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  return grpc::SslServerCredentials(options);
}

absl::Status ImportTables(store::Store& store, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("--tables: '", dir, "' is not a directory"));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto text = ReadFile(file.string());
    if (!text.ok()) return text.status();
    auto stats = store::ImportTable(store, *text,
                                    service::ImportRules(store::MergePolicy::kKeepFaster));
    if (!stats.ok()) {
      return absl::Status(stats.status().code(),
                          absl::StrCat(file.string(), ": ", std::string(stats.status().message())));
    }
    std::cerr << "cutuned: imported " << file.string() << ": " << stats->winners_added
              << " winners added, " << stats->winners_replaced << " replaced, "
              << stats->winners_kept << " kept\n";
  }
  return absl::OkStatus();
}

// Linking grpc++_reflection registers its plugin at static initialization, so reflection would be
// on whether or not InitProtoReflectionServerBuilderPlugin is called; this option removes it.
class WithoutReflection final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    std::erase_if(*plugins, [](const auto& plugin) { return plugin->name() == "proto_server_reflection"; });
  }
};

// gRPC removes a unix socket file before binding it, so a second daemon would silently take the
// path over from a live one; a socket that accepts a connection is therefore in use.
absl::Status CheckUnixSocketFree(const service::ListenAddress& address) {
  if (address.kind != service::ListenAddress::Kind::kUnix || address.abstract) {
    return absl::OkStatus();
  }
  sockaddr_un sun{};
  if (address.path.size() >= sizeof(sun.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("unix socket path '", address.path,
                                                   "' is longer than ", sizeof(sun.sun_path) - 1,
                                                   " bytes"));
  }
  sun.sun_family = AF_UNIX;
  std::memcpy(sun.sun_path, address.path.c_str(), address.path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&sun), sizeof sun) == 0;
  close(fd);
  if (live) {
    return absl::AlreadyExistsError(absl::StrCat(
        "unix:", address.path, " is in use: another cutuned (or another program) serves it"));
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::cerr << "cutuned: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"cutuned: CUDA kernel autotuner daemon (gRPC service cutune.v1.Tuner)"};
  app.set_version_flag("--version", "cutuned " + std::string(Version()));
  app.add_option("--listen", flags.listen,
                 "Address: host:port, or unix:PATH. Plaintext only on loopback/unix unless "
                 "--allow-insecure-remote")
      ->capture_default_str();
  app.add_option("--db", flags.db, "SQLite database (created if missing)")->capture_default_str();
  app.add_option("--tables", flags.tables, "Import every *.json tuning table in DIR at start");
  app.add_option("--tls-cert", flags.tls_cert, "Server certificate (PEM)");
  app.add_option("--tls-key", flags.tls_key, "Server private key (PEM)");
  app.add_option("--tls-client-ca", flags.tls_client_ca,
                 "CA bundle (PEM) for client certificates: enables mutual TLS");
  app.add_option("--admin-tokens", flags.admin_tokens,
                 "File of bearer tokens (one per line) allowed to tune, cancel and import");
  app.add_option("--read-tokens", flags.read_tokens,
                 "File of read-only bearer tokens (lookups, listings, export)");
  app.add_flag("--allow-insecure-remote", flags.allow_insecure_remote,
               "Allow plaintext on a non-loopback address");
  app.add_flag("--allow-unauthenticated", flags.allow_unauthenticated,
               "Serve a non-loopback address without tokens or client certificates");
  app.add_option("--max-threads", flags.max_threads,
                 "Server threads for RPCs; past them a call gets RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::Range(8, 65536));
  app.add_option("--max-streams", flags.max_streams,
                 "WatchJob streams and WAIT_FOR_TUNING calls open at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-table-calls", flags.max_table_calls,
                 "ExportTable and ImportTable calls running at once (each may hold a whole table "
                 "in memory)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_flag("--reflection,!--no-reflection", flags.reflection,
               "gRPC server reflection (default on)");
  app.add_option("--max-queue", flags.max_queue, "Queued jobs per GPU before RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--compile-threads", flags.compile_threads, "NVRTC threads (0: one per core)");
  app.add_option("--worker", flags.worker, "Path of cutune-worker (default: beside cutuned)");
  app.add_option("--cache-dir", flags.cache_dir,
                 "Compile cache directory (default $CUTUNE_CACHE_DIR or ~/.cache/cutune/nvrtc)");
  app.add_option("--grace-seconds", flags.grace_seconds, "Shutdown grace period on SIGTERM")
      ->capture_default_str();
  app.add_option("--candidate-timeout-ms", flags.candidate_timeout_ms,
                 "A candidate running longer is killed and recorded as a timeout")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  // Debian builds abseil with mutex deadlock detection on: graph bookkeeping on every gRPC mutex
  // acquisition, a measurable share of a cached lookup's cost.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Signals are taken by one thread with sigwait; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto address = service::ParseListenAddress(flags.listen);
  if (!address.ok()) return Fail(address.status());
  if (auto s = CheckExposure(flags, *address); !s.ok()) return Fail(s);
  auto credentials = Credentials(flags);
  if (!credentials.ok()) return Fail(credentials.status());
  std::vector<std::string> warnings;
  auto authorizer =
      service::Authorizer::FromFiles(flags.admin_tokens, flags.read_tokens, &warnings);
  if (!authorizer.ok()) return Fail(authorizer.status());
  for (const std::string& warning : warnings) std::cerr << "cutuned: warning: " << warning << "\n";
  if (auto s = CheckUnixSocketFree(*address); !s.ok()) return Fail(s);
  auto store = store::Store::Open(flags.db, service::StoreRules());
  if (!store.ok()) return Fail(store.status());
  if (!flags.tables.empty()) {
    if (auto s = ImportTables(**store, flags.tables); !s.ok()) return Fail(s);
  }

  std::optional<compiler::CompileCache> cache;
  auto cache_dir = flags.cache_dir.empty() ? compiler::DefaultCacheDirectory()
                                           : absl::StatusOr<std::filesystem::path>(flags.cache_dir);
  if (cache_dir.ok()) {
    auto opened = compiler::CompileCache::Open(*cache_dir);
    if (opened.ok()) {
      cache = std::move(*opened);
    } else {
      std::cerr << "cutuned: compile cache off: " << opened.status().message() << "\n";
    }
  }
  compiler::CachingCompiler compiler(std::move(cache));
  compiler::CompilePool pool(compiler, flags.compile_threads);
  service::JobManager jobs({.max_queue_per_gpu = flags.max_queue,
                            .compile_threads = flags.compile_threads,
                            .worker_path = flags.worker,
                            .candidate_timeout = std::chrono::milliseconds(flags.candidate_timeout_ms)},
                           **store, pool);
  service::TunerService service(**store, jobs, pool, std::move(*authorizer),
                                {.max_streams = flags.max_streams,
                                 .max_table_calls = flags.max_table_calls});
  service::HealthService health;

  grpc::EnableDefaultHealthCheckService(false);  // ours (health.h) ends its streams on SIGTERM
  if (flags.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.listen, *credentials, &port);
  // gRPC turns SO_REUSEPORT on by default: a second daemon on the same port would then start
  // and share the clients at random.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  builder.RegisterService(&health);
  service::InFlightCalls in_flight;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(in_flight.Factory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  if (!flags.reflection) builder.SetOption(std::make_unique<WithoutReflection>());
  // The largest request is a table import; a table the daemon exported always fits.
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  grpc::ResourceQuota quota("cutuned");
  quota.SetMaxThreads(flags.max_threads);
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (port == 0 && address->kind == service::ListenAddress::Kind::kTcp)) {
    return Fail(absl::UnavailableError(absl::StrCat(
        "cannot listen on '", flags.listen,
        "' (in use by another cutuned or program? a host this machine does not have?)")));
  }
  auto set_gpu_health = [&health](int ordinal, bool serving) {
    health.SetServingStatus(absl::StrCat("cutune.v1.Tuner/gpu", ordinal), serving);
  };
  health.SetServingStatus("cutune.v1.Tuner", true);
  for (const service::GpuInfo& gpu : jobs.Gpus()) set_gpu_health(gpu.ordinal, !gpu.quarantined);
  jobs.SetHealthCallback(set_gpu_health);

  // With port 0 the kernel picks one: say which, so scripts can connect.
  std::cerr << "cutuned: listening on " << address->WithPort(port) << " (db " << flags.db
            << ")\n";
  if (!jobs.no_gpu_reason().empty()) {
    std::cerr << "cutuned: no GPU, serving tables only: " << jobs.no_gpu_reason() << "\n";
  }
  for (const service::GpuInfo& gpu : jobs.Gpus()) {
    std::cerr << "cutuned: GPU " << gpu.ordinal << ": "
              << (gpu.device ? gpu.device->name() : std::string("not started"))
              << (gpu.quarantined ? " (quarantined)" : "") << "\n";
  }

  int received = 0;
  sigwait(&signals, &received);
  std::cerr << "cutuned: " << (received == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": shutting down\n";
  health.Shutdown();  // every service NOT_SERVING, every health watch ended
  std::thread stopper([&] { jobs.Shutdown(); });  // also ends WatchJob and WAIT_FOR_TUNING calls
  // Calls in flight may finish within the grace period; then the server stops at once (a short
  // deadline for calls that arrive meanwhile) instead of waiting for idle client connections.
  const auto grace_end = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(flags.grace_seconds * 1000));
  while (in_flight.count() > 0 && std::chrono::steady_clock::now() < grace_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  stopper.join();
  if (auto s = (*store)->Checkpoint(); !s.ok()) {
    std::cerr << "cutuned: checkpoint failed: " << s.message() << "\n";
  }
  std::cerr << "cutuned: stopped\n";
  return 0;
}
