// cutuned's flags, declared in one place for the daemon and its tests: every flag can also be
// set in a TOML or INI file given with --config FILE (CLI11's own reader; a key is the flag's
// name without its leading "--", e.g. `listen = "127.0.0.1:50051"`), and a flag given on the
// command line overrides the file.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "server/store/store.h"

namespace cutune::service {

struct DaemonFlags {
  std::string config;
  std::string listen = "127.0.0.1:50051";
  // The one HTTP server (/metrics and the read-only dashboard); --metrics-listen is its old
  // name, kept as an alias. Empty: no HTTP server.
  std::string http_listen;
  std::string http_listen_flag = "--http-listen";  // the name it was given by, for messages
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
  std::string ncu;  // Nsight Compute for ProfileCandidate; empty: profile::FindNcu's search
  std::string cache_dir;
  double grace_seconds = 10;
  int candidate_timeout_ms = 10'000;
  std::string log_format = "text";
  std::string log_level = "info";
};

// cutuned's exit code for a bad flag, config key or value, or a refused exposure.
inline constexpr int kExitUsage = 2;

// Declares every flag on `app`, bound to `flags`, and --config.
void AddDaemonFlags(CLI::App& app, DaemonFlags& flags);

// Parses the command line (and the --config file) into `flags`. nullopt: go on; otherwise exit
// with the code returned: 0 after --help or --version (printed to `out`), kExitUsage after a bad
// flag, key or value (the reason printed to `err`, naming the flag or key and, for the file's,
// the file).
std::optional<int> ParseDaemonFlags(const std::vector<std::string>& args, DaemonFlags& flags,
                                    std::ostream& out, std::ostream& err);

}  // namespace cutune::service
