// Each group of cutune subcommands registers itself on the CLI11 app. A subcommand's options
// live in a struct held by a shared_ptr that its callback captures; the callback stores the
// action to run, and main() runs it after parsing and exits with its code.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "client/lib/connection.h"
#include "cutune/v1/cutune.pb.h"

namespace cutune::cli {

namespace pb = ::cutune::v1;

struct Context {
  std::function<int()> action;  // set by the chosen subcommand
};

// --server, --tls*, --token, --timeout, shown under "Connection" in the command's --help.
void AddConnectionOptions(CLI::App* command, client::ConnectionOptions& options);
// The same options on the top level, as git and kubectl take them: `cutune --server H devices`
// is `cutune devices --server H`. They serve `--version` and the command that runs, where one
// given after the command name wins over the same option before it.
void AddTopLevelConnectionOptions(CLI::App& app, client::ConnectionOptions& options);
// The command that runs: the innermost subcommand given (the app itself when none was).
CLI::App* ChosenCommand(CLI::App& app);
// After parsing: hands the top-level connection options to the chosen command (throws a
// CLI::ParseError when that command talks to no daemon, or excludes one of them).
void ApplyTopLevelConnectionOptions(CLI::App& app);

// What a command asks about: FAMILY --shape --dtype, and which device (--device N, --uuid,
// --model; default: the daemon's first GPU, or the only model its tables hold).
struct ProblemOptions {
  std::string family;
  std::string shape;
  std::string dtype = "f32";
  std::optional<int> device;
  std::string uuid;
  std::string model;
  // With --model: the asking GPU's architecture ("sm_90") and SM count, for a model the tables
  // do not hold (answered from another model of that architecture).
  std::string arch;
  int sm_count = 0;
};
// Returns the --shape option (required), for a command that offers another way to give shapes.
CLI::Option* AddProblemOptions(CLI::App* command, ProblemOptions& options);
pb::Problem ToProblem(const ProblemOptions& options);  // the shape passed its --shape check
pb::DeviceSelector ToSelector(const ProblemOptions& options);
// "sm_90" -> {9, 0}, "sm_100" -> {10, 0}; INVALID_ARGUMENT for anything else.
absl::StatusOr<std::pair<int, int>> ArchCapability(std::string_view arch);
std::string Describe(const pb::Problem& problem);  // "matmul 4096x4096x4096 f32"

// `cutune --version`; it asks the daemon of the top-level connection options, whose --timeout
// defaults to 2 s for it.
void AddVersionFlag(CLI::App& app, bool& asked, client::ConnectionOptions& connection);
int PrintVersion(const client::ConnectionOptions& connection);
// "cutuned 0.1.0 at unix:/run/cutune.sock: API level 1, role admin (no tokens required), 1 GPU"
std::string DescribeServer(const std::string& target, const pb::GetServerInfoResponse& info);

void AddSpaceCommands(CLI::App& app, Context& context);
void AddQueryCommands(CLI::App& app, Context& context);  // devices, get, results, jobs, cancel
void AddSweepCommand(CLI::App& app, Context& context);
void AddTableCommands(CLI::App& app, Context& context);
void AddReportCommand(CLI::App& app, Context& context);
void AddProfileCommand(CLI::App& app, Context& context);  // profile_command.cc

}  // namespace cutune::cli
