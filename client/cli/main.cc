// cutune: the command-line client. Space inspection and table diffs run locally; everything
// else talks to a cutuned daemon over gRPC.
#include <iostream>

#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"

int main(int argc, char** argv) {
  using namespace cutune::cli;
  CLI::App app{"cutune: CUDA kernel autotuner client"};
  bool version = false;
  cutune::client::ConnectionOptions version_connection;
  AddVersionFlag(app, version, version_connection);
  app.footer(kExitCodesHelp);
  app.require_subcommand(0, 1);  // one, unless --version
  Context context;
  AddQueryCommands(app, context);
  AddSweepCommand(app, context);
  AddTableCommands(app, context);
  AddReportCommand(app, context);
  AddProfileCommand(app, context);
  AddSpaceCommands(app, context);
  // Every level's --help ends with the exit codes.
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    command->footer(kExitCodesHelp);
    for (CLI::App* sub : command->get_subcommands([](CLI::App*) { return true; })) {
      sub->footer(kExitCodesHelp);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (version) return PrintVersion(version_connection);
  if (!context.action) {
    app.exit(CLI::RequiredError("A subcommand"));
    return kExitUsage;
  }
  return context.action();
}
