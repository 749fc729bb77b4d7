#include "server/service/daemon_flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/core/version.h"

namespace cutune::service {

void AddDaemonFlags(CLI::App& app, DaemonFlags& flags) {
  app.get_help_ptr()->configurable(false);
  app.set_config("--config", "",
                 "Read flags from FILE (TOML or INI: `listen = \"127.0.0.1:50051\"`, one flag "
                 "name without '--' per key); flags given here override it")
      ->type_name("FILE");
  app.add_option("--listen", flags.listen,
                 "Address: host:port, or unix:PATH. Plaintext only on loopback/unix unless "
                 "--allow-insecure-remote")
      ->capture_default_str();
  app.add_option("--http-listen", flags.http_listen,
                 "Serve HTTP on ADDR (host:port): Prometheus metrics at /metrics and the "
                 "read-only dashboard at /; the same TLS, token and exposure rules as --listen. "
                 "Off by default")
      ->type_name("ADDR");
  // The flag's first name, kept so that old command lines and config files still work.
  app.add_option("--metrics-listen", flags.http_listen, "Old name of --http-listen (an alias)")
      ->type_name("ADDR");
  app.add_option("--log-format", flags.log_format, "Log lines as logfmt-style text or as JSON")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--log-level", flags.log_level, "Least severe log lines written")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}))
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
                 "File of read-only bearer tokens (lookups, listings, export, metrics)");
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
  app.add_option("--ncu", flags.ncu,
                 "Nsight Compute CLI for ProfileCandidate (default: $CUTUNE_NCU, else "
                 "/usr/local/cuda/bin/ncu, else ncu on PATH)")
      ->type_name("PATH");
  app.add_option("--cache-dir", flags.cache_dir,
                 "Compile cache directory (default $CUTUNE_CACHE_DIR or ~/.cache/cutune/nvrtc)");
  app.add_option("--grace-seconds", flags.grace_seconds, "Shutdown grace period on SIGTERM")
      ->capture_default_str();
  app.add_option("--candidate-timeout-ms", flags.candidate_timeout_ms,
                 "A candidate running longer is killed and recorded as a timeout")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

namespace {

constexpr std::string_view kUnknownKey = "INI was not able to parse ";

// Whether the command line itself gave `flag` ("--max-threads"), as "--flag", "--flag=..." or
// the negation of a flag.
bool OnCommandLine(const std::vector<std::string>& args, std::string_view flag) {
  return std::any_of(args.begin() + 1, args.end(), [&](const std::string& arg) {
    return arg == flag || arg.starts_with(absl::StrCat(std::string(flag), "="));
  });
}

// The flag a CLI11 conversion or validation message names ("--max-threads: Value 2 not in
// range ...", "Could not convert: --reflection = maybe").
std::string FlagOf(std::string_view message) {
  const size_t begin = message.find("--");
  if (begin == std::string_view::npos) return "";
  const size_t end = message.find_first_of(": =", begin);
  return std::string(message.substr(begin, end - begin));
}

}  // namespace

std::optional<int> ParseDaemonFlags(const std::vector<std::string>& args, DaemonFlags& flags,
                                    std::ostream& out, std::ostream& err) {
  CLI::App app{"cutuned: CUDA kernel autotuner daemon (gRPC service cutune.v1.Tuner)"};
  app.set_version_flag("--version", "cutuned " + std::string(Version()))->configurable(false);
  AddDaemonFlags(app, flags);
  app.allow_config_extras(CLI::config_extras_mode::error);
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    if (const CLI::Option* config = app.get_config_ptr();
        config != nullptr && config->count() > 0) {
      flags.config = config->as<std::string>();
    }
    if (app.get_option("--metrics-listen")->count() > 0) flags.http_listen_flag = "--metrics-listen";
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    // CLI11's messages name the flag; say so when it, or the key, came from the file.
    std::string message = e.what();
    const CLI::Option* config = app.get_config_ptr();
    if (config != nullptr && config->count() > 0) {
      flags.config = config->as<std::string>();
      const std::string flag = FlagOf(message);
      if (message.starts_with(kUnknownKey)) {
        // CLI11's words for a key no flag has, whatever the file's format.
        message = absl::StrCat("--config ", flags.config, ": unknown key '",
                               message.substr(kUnknownKey.size()),
                               "' (a key is a flag's name without '--'; cutuned --help lists "
                               "them)");
      } else if (dynamic_cast<const CLI::ConfigError*>(&e) != nullptr ||
                 dynamic_cast<const CLI::FileError*>(&e) != nullptr ||
                 (!flag.empty() && !OnCommandLine(args, flag))) {
        message = absl::StrCat("--config ", flags.config, ": ", message);
      }
    }
    err << "cutuned: " << message << "\nRun with --help for more information.\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace cutune::service
