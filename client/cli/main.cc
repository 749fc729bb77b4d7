// cutune: the command-line client. Space inspection and table diffs run locally; everything
// else talks to a cutuned daemon over gRPC.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"

namespace {

using namespace cutune::cli;

std::vector<std::string> CommandNames(const CLI::App& group) {
  std::vector<std::string> names;
  for (const CLI::App* command : group.get_subcommands({})) names.push_back(command->get_name());
  return names;
}

// Where a command name was expected but is missing or names none, says so and lists the
// commands, rather than CLI11's "The following argument was not expected" or "A subcommand is
// required"; false when the parse error is about something else (a command's own arguments).
bool ReportMissingCommand(CLI::App& app) {
  CLI::App* group = ChosenCommand(app);
  if (group->get_subcommands({}).empty()) return false;  // a command: its own error stands
  const std::string place = group == &app ? "" : absl::StrCat(group->get_name(), " ");
  const std::string known = absl::StrCat("(commands: ", absl::StrJoin(CommandNames(*group), ", "),
                                         ")");
  std::string word;
  for (const std::string& arg : group->remaining()) {
    if (arg.empty() || arg[0] != '-') {
      word = arg;
      break;
    }
  }
  if (!word.empty()) {
    std::cerr << "unknown command '" << place << word << "' " << known << "\n";
  } else if (group == &app) {
    std::cerr << "a command is required " << known << "\n";
  } else {
    std::cerr << "`" << group->get_name() << "` needs a command " << known << "\n";
  }
  std::cerr << "Run with --help for more information.\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cutune: CUDA kernel autotuner client"};
  bool version = false;
  cutune::client::ConnectionOptions top_connection;
  AddVersionFlag(app, version, top_connection);
  AddTopLevelConnectionOptions(app, top_connection);
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
    ApplyTopLevelConnectionOptions(app);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (!ReportMissingCommand(app)) app.exit(e);
    return kExitUsage;
  }
  if (version) return PrintVersion(top_connection);
  if (!context.action) {
    ReportMissingCommand(app);
    return kExitUsage;
  }
  return context.action();
}
