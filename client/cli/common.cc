// Options shared by the commands that talk to cutuned.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "server/core/types.h"

namespace cutune::cli {
namespace {

constexpr char kConnectionGroup[] = "Connection";
// A year: far beyond any request (`get --wait` waits for a sweep), and far from the overflow of
// the milliseconds the deadline is kept in.
constexpr double kMaxTimeoutSeconds = 365.0 * 24 * 3600;

// --timeout's check: a deadline gRPC can keep. Below a millisecond it would round to 0, which
// means no deadline at all.
std::string CheckTimeout(const std::string& text) {
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds)) {
    return absl::StrCat("expected a number of seconds, got '", text, "'");
  }
  if (seconds <= 0) return absl::StrCat("must be a positive number of seconds, got ", text);
  if (seconds < 0.001) return absl::StrCat("must be at least 0.001 s (1 ms), got ", text);
  if (seconds > kMaxTimeoutSeconds) {
    return absl::StrCat("must be at most ", kMaxTimeoutSeconds, " s (a year), got ", text);
  }
  return "";
}

// "space show": the command's name under the top level.
std::string CommandPath(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* up = command.get_parent(); up && up->get_parent(); up = up->get_parent()) {
    path = absl::StrCat(up->get_name(), " ", path);
  }
  return path;
}

}  // namespace

CLI::App* ChosenCommand(CLI::App& app) {
  CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return command;
}

void AddConnectionOptions(CLI::App* command, client::ConnectionOptions& options) {
  const std::string group = kConnectionGroup;
  command
      ->add_option("--server", options.server,
                   absl::StrCat("Daemon address: host:port or unix:PATH (default $",
                                client::kServerEnv, ", else ", client::kDefaultTarget, ")"))
      ->group(group);
  command->add_flag("--tls", options.tls, "Use TLS, verifying the server with the system roots")
      ->group(group);
  command
      ->add_option("--tls-ca", options.tls_ca,
                   "CA bundle (PEM) to verify the server; implies --tls")
      ->check(CLI::ExistingFile)
      ->group(group);
  command->add_option("--tls-cert", options.tls_cert, "Client certificate (PEM) for mutual TLS")
      ->check(CLI::ExistingFile)
      ->group(group);
  command->add_option("--tls-key", options.tls_key, "Client private key (PEM) for mutual TLS")
      ->check(CLI::ExistingFile)
      ->group(group);
  command
      ->add_option("--tls-server-name", options.tls_server_name,
                   "Name expected in the server's certificate (default: the host of --server)")
      ->group(group);
  command
      ->add_option("--token", options.token,
                   absl::StrCat("Bearer token (default $", client::kTokenEnv, ")"))
      ->group(group);
  command
      ->add_option_function<double>(
          "--timeout",
          [&options](double seconds) {
            options.deadline = std::chrono::milliseconds(std::llround(seconds * 1000));
          },
          "Deadline of each request in seconds, at least 0.001 (default 30)")
      ->check(CLI::Validator(CheckTimeout, "SECONDS"))
      ->group(group);
}

void AddTopLevelConnectionOptions(CLI::App& app, client::ConnectionOptions& options) {
  AddConnectionOptions(&app, options);
  for (CLI::Option* option : app.get_options()) {
    if (option->get_group() == kConnectionGroup) {
      option->group("Connection (before or after the command; after it wins)");
    }
  }
}

void ApplyTopLevelConnectionOptions(CLI::App& app) {
  CLI::App* command = ChosenCommand(app);
  if (command == &app) return;  // --version reads them where they are
  for (CLI::Option* top : app.get_options()) {
    if (top->get_group().rfind(kConnectionGroup, 0) != 0 || top->count() == 0) continue;
    CLI::Option* own = command->get_option_no_throw(top->get_name());
    if (own == nullptr) {
      throw CLI::ValidationError(
          top->get_name(), absl::StrCat("`", CommandPath(*command),
                                        "` runs here and talks to no daemon"));
    }
    if (own->count() > 0) continue;  // given after the command too: that one wins
    for (CLI::Option* excluded : own->get_excludes()) {
      if (excluded->count() > 0) throw CLI::ExcludesError(own->get_name(), excluded->get_name());
    }
    own->add_result(top->results());
    own->run_callback();
  }
}

CLI::Option* AddProblemOptions(CLI::App* command, ProblemOptions& options) {
  command->add_option("family", options.family, "Kernel family (transpose, matmul)")->required();
  CLI::Option* shape =
      command
          ->add_option("--shape", options.shape,
                       "Problem shape: ROWSxCOLS (transpose), MxNxK (matmul), e.g. 4096x4096x4096")
          ->required()
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                auto parsed = ParseShape(text);
                return parsed.ok() ? "" : std::string(parsed.status().message());
              },
              "SHAPE"));
  command->add_option("--dtype", options.dtype, "Element type")->capture_default_str();
  auto* device =
      command->add_option("--device", options.device, "GPU ordinal on the daemon's host");
  auto* uuid = command->add_option("--uuid", options.uuid, "GPU by UUID");
  auto* model = command->add_option(
      "--model", options.model,
      "Device model, e.g. \"NVIDIA H200\" (answers from tables, no GPU needed)");
  device->excludes(uuid)->excludes(model);
  uuid->excludes(model);
  CLI::Option* arch =
      command
          ->add_option("--arch", options.arch,
                       "With --model: its architecture, e.g. sm_90; a model no table holds is "
                       "then answered from another model of that architecture")
          ->needs(model)
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                auto cc = ArchCapability(text);
                return cc.ok() ? "" : std::string(cc.status().message());
              },
              "sm_XY"));
  command
      ->add_option("--sm-count", options.sm_count,
                   "With --arch: the GPU's SM count, which sizes a persistent kernel's grid "
                   "(default: that of the answering model)")
      ->needs(arch)
      ->check(CLI::Range(1, 100000));
  return shape;
}

pb::Problem ToProblem(const ProblemOptions& options) {
  pb::Problem problem;
  problem.set_family(options.family);
  absl::StatusOr<Shape> shape = ParseShape(options.shape);
  if (shape.ok()) {
    for (int64_t d : *shape) problem.add_shape(d);
  }
  problem.set_dtype(options.dtype);
  return problem;
}

absl::StatusOr<std::pair<int, int>> ArchCapability(std::string_view arch) {
  const bool prefixed = arch.substr(0, 3) == "sm_";
  const std::string_view digits = prefixed ? arch.substr(3) : std::string_view();
  if (!prefixed || digits.size() < 2 || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.front() == '0') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(arch), "' is not an architecture like sm_90 or sm_100"));
  }
  int major = 0;
  for (char c : digits.substr(0, digits.size() - 1)) major = major * 10 + (c - '0');
  return std::pair<int, int>{major, digits.back() - '0'};
}

pb::DeviceSelector ToSelector(const ProblemOptions& options) {
  pb::DeviceSelector selector;
  if (options.device) {
    selector.set_ordinal(*options.device);
  } else if (!options.uuid.empty()) {
    selector.set_uuid(options.uuid);
  } else if (!options.model.empty()) {
    selector.set_model(options.model);
    if (auto cc = ArchCapability(options.arch); !options.arch.empty() && cc.ok()) {
      selector.set_cc_major(cc->first);
      selector.set_cc_minor(cc->second);
      selector.set_sm_count(options.sm_count);
    }
  }
  return selector;
}

std::string Describe(const pb::Problem& problem) {
  return absl::StrCat(problem.family(), " ", absl::StrJoin(problem.shape(), "x"), " ",
                      problem.dtype());
}

}  // namespace cutune::cli
