// `cutune report FAMILY --shape ... --x P --y P -o out.html|out.svg`: fetches a problem's rows
// from the daemon and writes the picture of the sweep (client/cli/report.h).
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/render.h"
#include "client/cli/profile_view.h"
#include "client/cli/report.h"
#include "client/cli/results_view.h"

namespace cutune::cli {
namespace {

struct ReportOptions {
  client::ConnectionOptions connection;
  ProblemOptions problem;
  std::string x;
  std::string y;
  std::string metric = "auto";
  std::string output = "report.html";
};

int Report(const ReportOptions& options) {
  auto connection = client::Connection::Open(options.connection);
  if (!connection.ok()) return ReportError(connection.status());
  pb::ListResultsRequest request;
  *request.mutable_problem() = ToProblem(options.problem);
  *request.mutable_device() = ToSelector(options.problem);
  pb::ListResultsResponse response;
  auto status = (*connection)->Call(&pb::Tuner::Stub::ListResults, request, &response);
  if (!status.ok()) return ReportError(status);

  ReportInput input;
  input.problem = Describe(request.problem());
  input.device_model = response.device_model();
  input.x = options.x;
  input.y = options.y;
  input.rows.assign(response.rows().begin(), response.rows().end());
  input.sweep = response.sweep();
  if (input.rows.empty()) {
    return ReportError(absl::NotFoundError(
        absl::StrCat("no measurements of ", input.problem, " on ",
                     input.device_model.empty() ? "this daemon" : input.device_model,
                     " (an imported table's winner has none; `cutune results` shows it): run "
                     "`cutune sweep` of this shape first")));
  }
  bool has_reference = false;
  for (const auto& row : input.rows) has_reference |= row.percent_of_reference() > 0;
  if (options.metric == "time" || (options.metric == "auto" && !has_reference)) {
    input.metric = ReportMetric::kTime;
  } else if (options.metric == "throughput") {
    input.metric = ReportMetric::kThroughput;
  } else {
    input.metric = ReportMetric::kPercentOfReference;
  }
  const bool svg = absl::EndsWith(options.output, ".svg");
  auto document = svg ? RenderReportSvg(input) : RenderReportHtml(input);
  if (!document.ok()) return ReportError(document.status());
  std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
  out << *document;
  out.close();
  if (!out) {
    return ReportError(
        absl::PermissionDeniedError(absl::StrCat("cannot write '", options.output, "'")),
        kExitFailure);
  }
  std::cout << "wrote " << options.output << " (" << input.rows.size() << " rows, " << input.x
            << " x " << input.y << ")\n";
  std::cout << ProfiledRows(input.rows);
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write a picture of a sweep: heatmap over two parameters (HTML or SVG)");
  AddProblemOptions(cmd, options->problem);
  cmd->add_option("--x", options->x, "Parameter on the horizontal axis, e.g. tile")->required();
  cmd->add_option("--y", options->y, "Parameter on the vertical axis, e.g. rows")->required();
  cmd->add_option("--metric", options->metric,
                  "Cell value: percent (of reference), time, throughput; auto: percent when "
                  "measured, else time")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "percent", "time", "throughput"}));
  cmd->add_option("-o,--output", options->output,
                  "Output file: *.svg writes SVG, anything else HTML")
      ->capture_default_str();
  AddConnectionOptions(cmd, options->connection);
  cmd->callback([&context, options] { context.action = [options] { return Report(*options); }; });
}

}  // namespace cutune::cli
