// `cutune devices | get | results | jobs | cancel`: questions to a cutuned daemon.
#include <algorithm>
#include <fstream>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/profile_view.h"
#include "server/service/answer.h"
#include "server/service/offline_table.h"
#include "client/cli/render.h"
#include "client/cli/results_view.h"

namespace cutune::cli {
namespace {

struct ServerOptions {
  client::ConnectionOptions connection;
  bool json = false;
};

// Opens the connection or prints why not; the exit code goes to `exit_code`.
std::unique_ptr<client::Connection> Connect(const client::ConnectionOptions& options,
                                            int& exit_code) {
  auto connection = client::Connection::Open(options);
  if (!connection.ok()) {
    exit_code = ReportError(connection.status());
    return nullptr;
  }
  return std::move(*connection);
}

std::string Mib(int64_t bytes) { return absl::StrCat(bytes >> 20, " MiB"); }

int Devices(const ServerOptions& options) {
  int code = kExitOk;
  auto connection = Connect(options.connection, code);
  if (!connection) return code;
  pb::ListDevicesResponse response;
  auto status =
      connection->Call(&pb::Tuner::Stub::ListDevices, pb::ListDevicesRequest(), &response);
  if (!status.ok()) return ReportError(status);
  if (options.json) return PrintJson(response);
  std::cout << "cutuned at " << connection->target() << ", NVRTC " << response.nvrtc_version()
            << "\n";
  if (!response.no_gpu_reason().empty()) {
    std::cout << "no GPU: serving tables only (" << OneLine(response.no_gpu_reason()) << ")\n";
  }
  if (response.devices_size() > 0) {
    Table table({"#", "name", "cc", "SMs", "memory", "state", "queued", "driver", "uuid"});
    for (const pb::Device& d : response.devices()) {
      table.Add({std::to_string(d.ordinal()), d.name(), d.compute_capability(),
                 std::to_string(d.sm_count()), Mib(d.total_memory_bytes()), EnumLabel(d.state()),
                 std::to_string(d.queued_jobs()), std::to_string(d.driver_version()), d.uuid()});
    }
    std::cout << table.Render();
  }
  if (response.table_models_size() > 0) {
    // What a table server answers for: without these a daemon without GPUs lists nothing.
    std::cout << (response.devices_size() > 0 ? "\n" : "")
              << "tuning tables hold (ask with --model NAME):\n";
    Table table({"model", "cc", "SMs", "memory", "winners", "families"});
    for (const pb::TableModel& m : response.table_models()) {
      table.Add({m.name(), m.compute_capability(), std::to_string(m.sm_count()),
                 Mib(m.total_memory_bytes()), std::to_string(m.winners()),
                 absl::StrJoin(m.families(), ", ")});
    }
    std::cout << table.Render();
  }
  return kExitOk;
}

struct GetOptions : ServerOptions {
  ProblemOptions problem;
  std::string table;  // answer from this table file, in-process, instead of a daemon
  std::string source_file;
  std::string cubin_file;
  bool tune = false;
  bool wait = false;
};

std::string RungText(const pb::GetBestConfigResponse& r) {
  const std::string tuned = absl::StrJoin(r.tuned_shape(), "x");
  switch (r.rung()) {
    case pb::GetBestConfigResponse::RUNG_EXACT:
      return absl::StrCat("exact (tuned for this shape on ", r.device_model(), ")");
    case pb::GetBestConfigResponse::RUNG_PREDICTED:
      return absl::StrFormat(
          "predicted (portfolio member chosen by the %s model; expected %.1f%% slower than a "
          "tuning of this shape)",
          r.device_model(), 100 * (std::max(r.expected_slowdown(), 1.0) - 1));
    case pb::GetBestConfigResponse::RUNG_NEAREST_SHAPE:
      return absl::StrFormat("nearest shape (tuned for %s on %s; distance %.2f)", tuned,
                             r.device_model(), r.shape_distance());
    case pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE:
      if (r.expected_slowdown() > 0) {
        return absl::StrFormat(
            "same architecture (portfolio member chosen by the %s model; there, expected %.1f%% "
            "slower than a tuning of this shape)",
            r.device_model(), 100 * (std::max(r.expected_slowdown(), 1.0) - 1));
      }
      return absl::StrFormat("same architecture (tuned for %s on %s; distance %.2f)", tuned,
                             r.device_model(), r.shape_distance());
    case pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT:
      return "family default (nothing tuned for this device; the seed kernel's configuration)";
    default:
      return "unknown";
  }
}

absl::Status WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  out.close();
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// `cutune get --table FILE`: the answer a table server holding FILE gives, with no daemon; a
// cubin is compiled here with NVRTC for the answer's architecture.
absl::StatusOr<pb::GetBestConfigResponse> OfflineAnswer(const std::string& table,
                                                        const pb::GetBestConfigRequest& request) {
  auto offline = service::OfflineTable::Open(table);
  if (!offline.ok()) return offline.status();
  auto response = (*offline)->Answer(request);
  if (!response.ok() || !request.include_cubin()) return response;
  auto cubin = service::CompileAnswer(*response, service::AnswerArch(*response));
  if (!cubin.ok()) return cubin.status();
  response->set_cubin(*std::move(cubin));
  return response;
}

int Get(const GetOptions& options) {
  pb::GetBestConfigRequest request;
  *request.mutable_problem() = ToProblem(options.problem);
  *request.mutable_device() = ToSelector(options.problem);
  request.set_include_source(!options.source_file.empty());
  request.set_include_cubin(!options.cubin_file.empty());
  request.set_on_miss(options.wait   ? pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING
                      : options.tune ? pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE
                                     : pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW);
  pb::GetBestConfigResponse response;
  if (!options.table.empty()) {
    auto offline = OfflineAnswer(options.table, request);
    if (!offline.ok()) return ReportError(offline.status());
    response = *std::move(offline);
  } else {
    int code = kExitOk;
    auto connection = Connect(options.connection, code);
    if (!connection) return code;
    // Waiting for a tuning job takes as long as the job: without --timeout, wait up to an hour.
    std::optional<std::chrono::milliseconds> deadline;
    if (options.wait && options.connection.deadline == client::ConnectionOptions().deadline) {
      deadline = std::chrono::hours(1);
    }
    auto status = connection->Call(&pb::Tuner::Stub::GetBestConfig, request, &response, deadline);
    if (!status.ok()) return ReportError(status);
  }
  if (!options.source_file.empty()) {
    if (auto s = WriteFile(options.source_file, response.source()); !s.ok()) {
      return ReportError(s, kExitFailure);
    }
  }
  if (!options.cubin_file.empty()) {
    if (auto s = WriteFile(options.cubin_file, response.cubin()); !s.ok()) {
      return ReportError(s, kExitFailure);
    }
  }
  if (options.json) {
    // The JSON is the response as it came (with the source and cubin that --source and --cubin
    // asked for); where the files went is for the person, on stderr.
    if (!options.source_file.empty())
      std::cerr << "wrote source to " << options.source_file << "\n";
    if (!options.cubin_file.empty()) {
      std::cerr << "wrote cubin (" << response.cubin().size() << " bytes) to " << options.cubin_file
                << "\n";
    }
    return PrintJson(response);
  }
  const pb::LaunchGeometry& g = response.geometry();
  std::cout << Describe(request.problem()) << "\n"
            << "  match:     " << RungText(response) << "\n"
            << "  kernel:    " << response.kernel() << "\n"
            << "  params:    "
            << FormatParams(Params(response.params().begin(), response.params().end())) << "\n"
            << "  options:   " << absl::StrJoin(response.compile_options(), " ") << "\n"
            << "  geometry:  grid " << absl::StrJoin(g.grid(), "x") << ", block "
            << absl::StrJoin(g.block(), "x") << ", dynamic shared " << g.dynamic_shared_bytes()
            << " B\n";
  // Figures of another GPU model say so (SAME_ARCHITECTURE answers).
  const std::string on =
      response.rung() == pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE
          ? absl::StrCat(" on ", response.device_model())
          : "";
  if (response.predicted_time_us() > 0) {
    std::cout << "  predicted: " << FormatDouble(response.predicted_time_us(), 2)
              << " us at this shape" << on << "\n";
  }
  if (response.time_us() > 0) {
    std::cout << "  time:      " << FormatDouble(response.time_us(), 2) << " us";
    if (!response.measured_at_asked_shape()) {
      std::cout << " measured at " << absl::StrJoin(response.tuned_shape(), "x") << on;
    }
    if (response.tflops() > 0)
      std::cout << ", " << FormatDouble(response.tflops(), 2) << " TFLOP/s";
    if (response.gbps() > 0) std::cout << ", " << FormatDouble(response.gbps(), 1) << " GB/s";
    if (response.percent_of_reference() > 0) {
      std::cout << ", " << FormatDouble(response.percent_of_reference(), 1) << "% of reference";
    }
    std::cout << "\n";
  } else {
    std::cout << "  time:      not measured\n";
  }
  std::cout << "  source:    " << response.source_hash().substr(0, 16) << "\n";
  for (const std::string& stale : response.stale()) {
    std::cout << "  warning:   stale: " << stale << "\n";
  }
  if (!response.job_id().empty()) {
    std::cout << "  tuning:    job " << response.job_id()
              << (options.wait ? "" : " started in the background") << "\n";
  }
  if (!options.source_file.empty())
    std::cout << "  wrote source to " << options.source_file << "\n";
  if (!options.cubin_file.empty()) {
    std::cout << "  wrote cubin (" << response.cubin().size() << " bytes) to " << options.cubin_file
              << "\n";
  }
  return kExitOk;
}

struct ResultsOptions : ServerOptions {
  ProblemOptions problem;
  int top = 20;
  bool csv = false;
};

// The problem's winner as `get` answers it, when the answer is exact: its provenance and stale
// reasons are the server's (GetBestConfig computes them, once, for every client). None when
// the lookup falls back to another shape or model, or the daemon does not answer it.
std::optional<pb::GetBestConfigResponse> ExactWinner(client::Connection& connection,
                                                     const pb::ListResultsRequest& results) {
  pb::GetBestConfigRequest request;
  *request.mutable_problem() = results.problem();
  *request.mutable_device() = results.device();
  request.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW);
  pb::GetBestConfigResponse response;
  if (!connection.Call(&pb::Tuner::Stub::GetBestConfig, request, &response).ok()) {
    return std::nullopt;
  }
  if (response.rung() != pb::GetBestConfigResponse::RUNG_EXACT) return std::nullopt;
  return response;
}

// "winner:   from an imported table; tuned with driver 13000, NVRTC 13.0, source d01cdd..., space
// version 7, held start" (the timing where recorded) and a line per stale reason.
std::string WinnerProvenance(const pb::GetBestConfigResponse& winner) {
  const pb::Provenance& p = winner.provenance();
  std::string out = absl::StrCat(
      "winner:   ", winner.from_table() ? "from an imported table" : "from a sweep on this daemon",
      "; tuned with driver ", p.driver_version(), ", NVRTC ", p.nvrtc_version(), ", source ",
      p.source_hash().substr(0, 16), ", space version ", p.space_version(),
      p.timing().empty() ? "" : absl::StrCat(", ", p.timing(), " start"), "\n");
  for (const std::string& stale : winner.stale()) {
    absl::StrAppend(&out, "warning:  stale: ", stale, "\n");
  }
  return out;
}

// An imported winner has no rows here: the figures the table carries for it.
std::string TableWinner(const pb::GetBestConfigResponse& winner) {
  std::string time = absl::StrCat(FormatDouble(winner.time_us(), 2), " us");
  if (winner.tflops() > 0) absl::StrAppend(&time, ", ", FormatDouble(winner.tflops(), 2), " TFLOP/s");
  if (winner.gbps() > 0) absl::StrAppend(&time, ", ", FormatDouble(winner.gbps(), 1), " GB/s");
  if (winner.percent_of_reference() > 0) {
    absl::StrAppend(&time, ", ", FormatDouble(winner.percent_of_reference(), 1), "% of reference");
  }
  return absl::StrCat(
      "no rows measured here; the tuning table's winner for this shape (what `cutune get` "
      "answers):\n",
      "params:   ", FormatParams(Params(winner.params().begin(), winner.params().end())), "\n",
      "time:     ", time, "\n");
}

int Results(const ResultsOptions& options) {
  int code = kExitOk;
  auto connection = Connect(options.connection, code);
  if (!connection) return code;
  pb::ListResultsRequest request;
  *request.mutable_problem() = ToProblem(options.problem);
  *request.mutable_device() = ToSelector(options.problem);
  pb::ListResultsResponse response;
  auto status = connection->Call(&pb::Tuner::Stub::ListResults, request, &response);
  if (!status.ok()) return ReportError(status);
  std::vector<pb::Measurement> rows(response.rows().begin(), response.rows().end());
  if (options.csv) {
    std::cout << ResultsCsv(rows);
    return kExitOk;
  }
  const std::optional<pb::GetBestConfigResponse> winner = ExactWinner(*connection, request);
  if (options.json) {
    pb::ResultsReport report = ResultsReportOf(request.problem(), response);
    if (winner) *report.mutable_winner() = *winner;
    return PrintJson(report);
  }
  std::cout << Describe(request.problem()) << " on "
            << (response.device_model().empty() ? "(no device)" : response.device_model()) << ": "
            << rows.size() << " rows\n";
  if (rows.empty() && !winner) {
    std::cout << "nothing measured for this problem; run `cutune sweep` on a GPU host\n";
    return kExitOk;
  }
  if (rows.empty()) {
    std::cout << TableWinner(*winner) << WinnerProvenance(*winner);
    return kExitOk;
  }
  const size_t width = OutputColumns();
  std::cout << "\n"
            << RankedTable(rows, options.top, width) << "\n"
            << RejectedSummary(rows, width);
  if (std::string profiled = ProfiledRows(rows); !profiled.empty()) std::cout << "\n" << profiled;
  if (winner) std::cout << WinnerProvenance(*winner);
  return kExitOk;
}

int Jobs(const ServerOptions& options) {
  int code = kExitOk;
  auto connection = Connect(options.connection, code);
  if (!connection) return code;
  pb::ListJobsResponse response;
  auto status = connection->Call(&pb::Tuner::Stub::ListJobs, pb::ListJobsRequest(), &response);
  if (!status.ok()) return ReportError(status);
  if (options.json) return PrintJson(response);
  if (response.jobs_size() == 0) {
    std::cout << "no jobs\n";
    return kExitOk;
  }
  Table table({"job", "state", "problem", "done", "total", "best us", "elapsed s", "error"});
  for (const pb::JobProgress& job : response.jobs()) {
    // A sweep that ran to its end without one valid candidate did not find what it was for.
    const bool found_nothing = job.state() == pb::JobProgress::STATE_SUCCEEDED && !job.has_best();
    table.Add({job.job_id(), found_nothing ? "no valid candidate" : EnumLabel(job.state()),
               Describe(job.problem()),
               std::to_string(job.done()), std::to_string(job.total()),
               job.has_best() ? FormatDouble(job.best().time_us(), 2) : "",
               FormatDouble(job.elapsed_seconds(), 1), OneLine(job.error())});
  }
  std::cout << table.Render();
  return kExitOk;
}

struct CancelOptions : ServerOptions {
  std::string job_id;
};

int Cancel(const CancelOptions& options) {
  int code = kExitOk;
  auto connection = Connect(options.connection, code);
  if (!connection) return code;
  pb::CancelJobRequest request;
  request.set_job_id(options.job_id);
  pb::CancelJobResponse response;
  auto status = connection->Call(&pb::Tuner::Stub::CancelJob, request, &response);
  if (!status.ok()) return ReportError(status);
  if (options.json) return PrintJson(response);
  std::cout << "job " << options.job_id << ": " << EnumLabel(response.state()) << "\n";
  return kExitOk;
}

}  // namespace

void AddQueryCommands(CLI::App& app, Context& context) {
  {
    auto options = std::make_shared<ServerOptions>();
    CLI::App* cmd = app.add_subcommand("devices", "The daemon's GPUs and their state");
    cmd->add_flag("--json", options->json, "Machine-readable output");
    AddConnectionOptions(cmd, options->connection);
    cmd->callback(
        [&context, options] { context.action = [options] { return Devices(*options); }; });
  }
  {
    auto options = std::make_shared<GetOptions>();
    CLI::App* cmd = app.add_subcommand(
        "get", "The best known configuration for a problem, and how good the match is");
    AddProblemOptions(cmd, options->problem);
    auto* table = cmd->add_option(
        "--table", options->table,
        "Answer from this table file (or every *.json table in this directory) here, as a "
        "table server holding it would (no daemon)");
    cmd->add_option("--source", options->source_file, "Write the kernel source to FILE");
    cmd->add_option("--cubin", options->cubin_file,
                    "Write the compiled cubin for the device's architecture to FILE");
    auto* tune = cmd->add_flag("--tune", options->tune,
                               "On a miss, also start tuning in the background (admin token)");
    cmd->add_flag("--wait", options->wait,
                  "On a miss, tune now and answer when done (admin token; deadline --timeout, "
                  "default 1 hour)")
        ->excludes(tune);
    cmd->add_flag("--json", options->json, "Machine-readable output");
    AddConnectionOptions(cmd, options->connection);
    table->excludes(tune)->excludes("--wait")->excludes("--server");
    cmd->callback([&context, options] { context.action = [options] { return Get(*options); }; });
  }
  {
    auto options = std::make_shared<ResultsOptions>();
    CLI::App* cmd = app.add_subcommand(
        "results", "Every stored measurement of a problem: ranked table and rejected candidates");
    AddProblemOptions(cmd, options->problem);
    cmd->add_option("--top", options->top, "Rows in the ranked table (0: all)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    auto* json = cmd->add_flag("--json", options->json, "Machine-readable output (every row)");
    cmd->add_flag("--csv", options->csv,
                  "CSV: a header, then every row in parameter order (one column per parameter, "
                  "rank by time, outcome, figures, reason)")
        ->excludes(json);
    AddConnectionOptions(cmd, options->connection);
    cmd->callback(
        [&context, options] { context.action = [options] { return Results(*options); }; });
  }
  {
    auto options = std::make_shared<ServerOptions>();
    CLI::App* cmd = app.add_subcommand("jobs", "Tuning jobs queued, running and finished");
    cmd->add_flag("--json", options->json, "Machine-readable output");
    AddConnectionOptions(cmd, options->connection);
    cmd->callback([&context, options] { context.action = [options] { return Jobs(*options); }; });
  }
  {
    auto options = std::make_shared<CancelOptions>();
    CLI::App* cmd = app.add_subcommand("cancel", "Cancel a tuning job (admin token)");
    cmd->add_option("job", options->job_id, "Job id (from `cutune jobs` or `sweep --no-wait`)")
        ->required();
    cmd->add_flag("--json", options->json, "Machine-readable output");
    AddConnectionOptions(cmd, options->connection);
    cmd->callback([&context, options] { context.action = [options] { return Cancel(*options); }; });
  }
}

}  // namespace cutune::cli
