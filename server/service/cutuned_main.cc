// cutuned: the cutune daemon. Serves cutune.v1.Tuner, grpc.health.v1 and (optionally) server
// reflection; tunes on this host's GPUs through one worker process each; keeps everything in
// SQLite. Without a GPU it is a table server: lookups from imported tables, no tuning. Logs one
// line per event (--log-format, --log-level) and serves Prometheus metrics on --metrics-listen.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

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
#include "server/core/log.h"
#include "server/core/strings.h"
#include "server/core/version.h"
#include "server/dashboard/dashboard.h"
#include "server/http/http_server.h"
#include "server/observe/log_observer.h"
#include "server/observe/metrics.h"
#include "server/service/address.h"
#include "server/service/daemon_flags.h"
#include "server/service/health.h"
#include "server/service/in_flight.h"
#include "server/service/job_manager.h"
#include "server/service/metrics_gauges.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"
#include "server/store/tables.h"

namespace {

using namespace cutune;
using Flags = service::DaemonFlags;

service::ExposureGuards GuardsOf(const Flags& flags) {
  return {.tls = !flags.tls_cert.empty(),
          .authenticated = !flags.admin_tokens.empty() || !flags.read_tokens.empty() ||
                           !flags.tls_client_ca.empty(),
          .allow_insecure_remote = flags.allow_insecure_remote,
          .allow_unauthenticated = flags.allow_unauthenticated};
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

absl::Status ImportTables(store::Store& store, const std::string& dir,
                          observe::Observer& observer) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("--tables: '", dir, "' is not a directory"));
  }
  for (const std::string& path : store::TableFilesIn(dir)) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    auto stats = store::ImportTable(store, *text,
                                    service::ImportRules(store::MergePolicy::kKeepFaster));
    observe::TableImport imported{path, static_cast<int64_t>(text->size())};
    if (!stats.ok()) {
      imported.error = ToStd(stats.status().message());
      observer.TableImported(imported);
      return absl::Status(stats.status().code(),
                          absl::StrCat(path, ": ", std::string(stats.status().message())));
    }
    imported.winners_added = stats->winners_added;
    imported.winners_replaced = stats->winners_replaced;
    imported.winners_kept = stats->winners_kept;
    imported.rows_added = stats->rows_added;
    observer.TableImported(imported);
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

// A start-up failure: logged, and exit 2 for a bad flag value (as for the flags CLI11 refuses),
// 1 for the rest.
int Fail(log::Logger& logger, const absl::Status& status) {
  logger.Error("daemon.failed", {{"code", absl::StatusCodeToString(status.code())},
                                 {"error", ToStd(status.message())}});
  return status.code() == absl::StatusCode::kInvalidArgument ? service::kExitUsage : 1;
}

// The HTTP server's address (/metrics and the dashboard): TCP only (Prometheus scrapes
// host:port), and the exposure rule of the gRPC address. Messages name the flag as given
// (--http-listen, or its old name --metrics-listen).
absl::StatusOr<service::ListenAddress> HttpAddress(const Flags& flags) {
  const std::string& flag = flags.http_listen_flag;
  auto address = service::ParseListenAddress(flags.http_listen);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", std::string(address.status().message())));
  }
  if (address->kind != service::ListenAddress::Kind::kTcp) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " '", flags.http_listen, "' is not HOST:PORT (Prometheus scrapes TCP)"));
  }
  if (auto s = service::CheckExposure(*address, flag, GuardsOf(flags)); !s.ok()) {
    return s;
  }
  return address;
}

}  // namespace


int main(int argc, char** argv) {
  Flags flags;
  if (auto exit = service::ParseDaemonFlags(std::vector<std::string>(argv, argv + argc), flags,
                                            std::cout, std::cerr)) {
    return *exit;
  }
  // Valid by now: the flags only accept these names.
  log::Logger logger(*log::ParseFormat(flags.log_format), *log::ParseLevel(flags.log_level));
  observe::LogObserver log_events(logger);
  observe::Metrics metrics{std::string(Version())};
  observe::Fanout events({&log_events, &metrics});

  // Debian builds abseil with mutex deadlock detection on: graph bookkeeping on every gRPC mutex
  // acquisition, a measurable share of a cached lookup's cost.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // A scraper that hangs up mid-answer must not end the daemon: OpenSSL writes TLS records with
  // write(2), which raises SIGPIPE (plain sockets are written with MSG_NOSIGNAL).
  signal(SIGPIPE, SIG_IGN);
  // Signals are taken by one thread with sigwait; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto address = service::ParseListenAddress(flags.listen);
  if (!address.ok()) return Fail(logger, address.status());
  if (auto s = service::CheckExposure(*address, "--listen", GuardsOf(flags)); !s.ok()) {
    return Fail(logger, s);
  }
  std::optional<service::ListenAddress> http_address;
  if (!flags.http_listen.empty()) {
    auto parsed = HttpAddress(flags);
    if (!parsed.ok()) return Fail(logger, parsed.status());
    http_address = *parsed;
  }
  auto credentials = Credentials(flags);
  if (!credentials.ok()) return Fail(logger, credentials.status());
  std::vector<std::string> warnings;
  auto authorizer =
      service::Authorizer::FromFiles(flags.admin_tokens, flags.read_tokens, &warnings);
  if (!authorizer.ok()) return Fail(logger, authorizer.status());
  for (const std::string& warning : warnings) {
    logger.Warning("auth.warning", {{"warning", warning}});
  }
  if (auto s = CheckUnixSocketFree(*address); !s.ok()) return Fail(logger, s);
  store::StoreOptions store_options = service::StoreRules();
  store_options.on_deferral_change = [&events](const store::DeferralChange& change) {
    events.ModelChoiceChanged({change.own.device_model, change.own.family,
                               DTypeName(change.own.dtype), change.other,
                               static_cast<int64_t>(change.comparison.shapes),
                               change.comparison.own, change.comparison.other});
  };
  auto store = store::Store::Open(flags.db, store_options);
  if (!store.ok()) return Fail(logger, store.status());
  if (!flags.tables.empty()) {
    if (auto s = ImportTables(**store, flags.tables, events); !s.ok()) return Fail(logger, s);
  }

  std::optional<compiler::CompileCache> cache;
  auto cache_dir = flags.cache_dir.empty() ? compiler::DefaultCacheDirectory()
                                           : absl::StatusOr<std::filesystem::path>(flags.cache_dir);
  if (cache_dir.ok()) {
    auto opened = compiler::CompileCache::Open(*cache_dir);
    if (opened.ok()) {
      cache = std::move(*opened);
    } else {
      logger.Warning("compile_cache.off", {{"error", ToStd(opened.status().message())}});
    }
  }
  compiler::CachingCompiler compiler(std::move(cache));
  compiler::CompilePool pool(compiler, flags.compile_threads);
  service::JobManager jobs(
      {.max_queue_per_gpu = flags.max_queue,
       .compile_threads = flags.compile_threads,
       .worker_path = flags.worker,
       .candidate_timeout = std::chrono::milliseconds(flags.candidate_timeout_ms),
       .observer = &events,
       .ncu_path = flags.ncu},
      **store, pool);
  // The HTTP side checks tokens with the same authorizer as the gRPC side.
  auto http_authorizer = std::make_shared<const service::Authorizer>(*authorizer);
  service::TunerService service(**store, jobs, pool, std::move(*authorizer),
                                {.max_streams = flags.max_streams,
                                 .max_table_calls = flags.max_table_calls},
                                &events);
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
  service::InFlightCalls in_flight(&events);
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
    return Fail(logger, absl::UnavailableError(absl::StrCat(
                            "cannot listen on '", flags.listen,
                            "' (in use by another cutuned or program? a host this machine does "
                            "not have?)")));
  }

  // The daemon's one HTTP server: /metrics and the read-only dashboard's pages.
  dashboard::Dashboard dashboard(service, **store, std::string(Version()), !flags.tls_cert.empty());
  std::optional<http::Server> http_server;
  std::string metrics_bound;
  if (http_address) {
    service::AddServiceGauges(metrics, jobs, flags.db, in_flight);
    http_server.emplace(http::ServerOptions{
        .host = http_address->host,
        .port = http_address->port,
        .tls_cert = flags.tls_cert,
        .tls_key = flags.tls_key,
        .tls_client_ca = flags.tls_client_ca,
        .authorize =
            [http_authorizer, &events](const http::Request& request) {
              absl::Status allowed =
                  http_authorizer->CheckBearer(http::BearerOf(request), service::Role::kRead);
              if (!allowed.ok()) {
                events.AuthRefused({"http", request.peer, request.method + " " + request.path,
                                    absl::StatusCodeToString(allowed.code()),
                                    ToStd(allowed.message())});
              }
              return allowed;
            },
        .refusal = &dashboard::Dashboard::Refusal,
    });
    http_server->Route("/metrics", [&metrics](const http::Request&) {
      return http::Response{200, std::string(observe::prometheus::kContentType), metrics.Render(),
                            {}};
    });
    dashboard.AddRoutes(*http_server);
    if (auto s = http_server->Start(); !s.ok()) {
      server->Shutdown(std::chrono::system_clock::now());
      jobs.Shutdown();
      return Fail(logger, s);
    }
    metrics_bound = http_address->WithPort(http_server->port());
  }

  auto set_gpu_health = [&health](int ordinal, bool serving) {
    health.SetServingStatus(absl::StrCat("cutune.v1.Tuner/gpu", ordinal), serving);
  };
  health.SetServingStatus("cutune.v1.Tuner", true);
  observe::DaemonStart started{std::string(Version()), address->WithPort(port), metrics_bound,
                               flags.db};
  for (const service::GpuInfo& gpu : jobs.Gpus()) {
    set_gpu_health(gpu.ordinal, !gpu.quarantined);
    started.gpus.push_back({gpu.ordinal, gpu.device ? gpu.device->name() : "", gpu.quarantined});
  }
  jobs.SetHealthCallback(set_gpu_health);
  started.no_gpu_reason = jobs.no_gpu_reason();
  // With port 0 the kernel picks one: the line says which, so scripts can connect.
  events.DaemonStarted(started);

  int received = 0;
  sigwait(&signals, &received);
  events.DaemonStopping(received == SIGTERM ? "SIGTERM" : "SIGINT");
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
  if (http_server) http_server->Stop();
  if (auto s = (*store)->Checkpoint(); !s.ok()) {
    logger.Error("store.checkpoint_failed", {{"error", ToStd(s.message())}});
  }
  events.DaemonStopped();
  return 0;
}
