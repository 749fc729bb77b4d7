// Options shared by the commands that talk to cutuned.
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "server/core/types.h"

namespace cutune::cli {

void AddConnectionOptions(CLI::App* command, client::ConnectionOptions& options) {
  const std::string group = "Connection";
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
            options.deadline = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
          },
          "Deadline of each request in seconds (default 30)")
      ->check(CLI::PositiveNumber)
      ->group(group);
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

pb::DeviceSelector ToSelector(const ProblemOptions& options) {
  pb::DeviceSelector selector;
  if (options.device) {
    selector.set_ordinal(*options.device);
  } else if (!options.uuid.empty()) {
    selector.set_uuid(options.uuid);
  } else if (!options.model.empty()) {
    selector.set_model(options.model);
  }
  return selector;
}

std::string Describe(const pb::Problem& problem) {
  return absl::StrCat(problem.family(), " ", absl::StrJoin(problem.shape(), "x"), " ",
                      problem.dtype());
}

}  // namespace cutune::cli
