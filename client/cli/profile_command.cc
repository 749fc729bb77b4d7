// `cutune profile FAMILY --shape S [--params NAME=V,...|--winner]`: one candidate run under
// Nsight Compute on the daemon's GPU (ProfileCandidate, admin token); prints each counter with
// what it means, and the daemon stores them with the candidate's row.
#include <iostream>

#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/profile_view.h"
#include "client/cli/render.h"
#include "server/core/types.h"

namespace cutune::cli {
namespace {

struct ProfileOptions {
  ProblemOptions problem;
  std::string params;
  bool winner = false;
  bool json = false;
  client::ConnectionOptions connection;
};

int Profile(const ProfileOptions& options) {
  pb::ProfileCandidateRequest request;
  *request.mutable_problem() = ToProblem(options.problem);
  *request.mutable_device() = ToSelector(options.problem);
  request.set_winner(options.winner);
  if (!options.winner) {
    auto params = ParseParams(options.params);
    if (!params.ok()) {
      std::cerr << "cutune: --params: " << params.status().message() << "\n";
      return kExitUsage;
    }
    for (const auto& [name, value] : *params) {
      (*request.mutable_params()->mutable_values())[name] = value;
    }
  }
  auto connection = client::Connection::Open(options.connection);
  if (!connection.ok()) return ReportError(connection.status());
  pb::ProfileCandidateResponse response;
  auto status =
      (*connection)->Call(&pb::Tuner::Stub::ProfileCandidate, request, &response);
  if (!status.ok()) return ReportError(status);
  if (options.json) return PrintJson(response);
  std::cout << ProfileReport(response);
  return kExitOk;
}

}  // namespace

void AddProfileCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Run one candidate under Nsight Compute on the daemon's GPU (admin token): bank "
      "conflicts, DRAM throughput, occupancy, L2 hit rate, registers, stored with its row");
  AddProblemOptions(cmd, options->problem);
  auto* params = cmd->add_option(
      "--params", options->params,
      "The configuration, NAME=V,... over the family's defaults (default: the defaults)");
  cmd->add_flag("--winner", options->winner,
                "Profile the stored winner of the problem on the device's model")
      ->excludes(params);
  cmd->add_flag("--json", options->json, "Machine-readable output (ProfileCandidateResponse)");
  AddConnectionOptions(cmd, options->connection);
  cmd->callback([&context, options] { context.action = [options] { return Profile(*options); }; });
}

}  // namespace cutune::cli
