// `cutune table export | import | diff`: tuning tables (docs/tables.md). Export and import go
// through the daemon; diff is local and needs no daemon.
#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "charts/diff_chart.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/render.h"
#include "cutune/v1/cli.pb.h"
#include "server/core/files.h"
#include "server/core/strings.h"
#include "server/core/version.h"
#include "server/store/tables.h"

namespace cutune::cli {
namespace {

// A table file that is missing or malformed is a failed request (1), not a usage error: the
// command line was fine, the file was not.
int TableFileError(const absl::Status& status) { return ReportError(status, kExitFailure); }

struct ExportOptions {
  client::ConnectionOptions connection;
  std::string model;
  bool rows = false;
  std::string output;
};

int Export(const ExportOptions& options) {
  auto connection = client::Connection::Open(options.connection);
  if (!connection.ok()) return ReportError(connection.status());
  pb::ExportTableRequest request;
  request.set_device_model(options.model);
  request.set_include_rows(options.rows);
  pb::ExportTableResponse response;
  auto status = (*connection)->Call(&pb::Tuner::Stub::ExportTable, request, &response);
  if (!status.ok()) return ReportError(status);
  if (options.output.empty() || options.output == "-") {
    std::cout << response.json();
    return kExitOk;
  }
  std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
  out << response.json();
  out.close();
  if (!out)
    return ReportError(
        absl::PermissionDeniedError(absl::StrCat("cannot write '", options.output, "'")),
        kExitFailure);
  std::cerr << "wrote " << options.output << " (" << response.json().size() << " bytes)\n";
  return kExitOk;
}

struct ImportOptions {
  client::ConnectionOptions connection;
  std::string file;
  std::string policy = "keep-faster";
  bool json = false;
};

int Import(const ImportOptions& options) {
  auto text = ReadFile(options.file);
  if (!text.ok()) return TableFileError(text.status());
  auto connection = client::Connection::Open(options.connection);
  if (!connection.ok()) return ReportError(connection.status());
  pb::ImportTableRequest request;
  request.set_json(*text);
  request.set_policy(options.policy == "keep-newer" ? pb::ImportTableRequest::MERGE_POLICY_KEEP_NEWER
                     : options.policy == "fail-on-conflict"
                         ? pb::ImportTableRequest::MERGE_POLICY_FAIL_ON_CONFLICT
                         : pb::ImportTableRequest::MERGE_POLICY_KEEP_FASTER);
  pb::ImportTableResponse response;
  auto status = (*connection)->Call(&pb::Tuner::Stub::ImportTable, request, &response);
  if (!status.ok()) {
    // The daemon validates the file: its INVALID_ARGUMENT names the problem in the file, and
    // ALREADY_EXISTS is a conflict under fail-on-conflict.
    if (status.code() == absl::StatusCode::kInvalidArgument ||
        status.code() == absl::StatusCode::kAlreadyExists) {
      return TableFileError(
          absl::Status(status.code(), absl::StrCat(options.file, ": ", status.message())));
    }
    return ReportError(status);
  }
  if (options.json) return PrintJson(response);
  std::cout << absl::StrFormat(
      "imported %s: %d winners added, %d replaced, %d kept; %d rows added\n", options.file,
      response.winners_added(), response.winners_replaced(), response.winners_kept(),
      response.rows_added());
  return kExitOk;
}

// `table diff --json`: the store's diff as the TableDiffReport message (the store does not know
// the API's messages).
constexpr char kTableDiffFormat[] = "cutune-table-diff";
constexpr int kTableDiffVersion = 3;

pb::TableDiffEntry::Change ToProto(store::TableDiffEntry::Change change) {
  using Change = store::TableDiffEntry::Change;
  switch (change) {
    case Change::kSame:
      return pb::TableDiffEntry::CHANGE_SAME;
    case Change::kTie:
      return pb::TableDiffEntry::CHANGE_TIE;
    case Change::kWinnerChanged:
      return pb::TableDiffEntry::CHANGE_WINNER_CHANGED;
    case Change::kOnlyInA:
      return pb::TableDiffEntry::CHANGE_ONLY_IN_A;
    case Change::kOnlyInB:
      return pb::TableDiffEntry::CHANGE_ONLY_IN_B;
  }
  return pb::TableDiffEntry::CHANGE_UNSPECIFIED;
}

pb::TableDiffEntry::TieBasis ToProto(store::TableDiffEntry::TieBasis basis) {
  using Basis = store::TableDiffEntry::TieBasis;
  switch (basis) {
    case Basis::kNone:
      return pb::TableDiffEntry::TIE_BASIS_UNSPECIFIED;
    case Basis::kInTiesOfA:
      return pb::TableDiffEntry::TIE_BASIS_IN_TIES_OF_A;
    case Basis::kInTiesOfB:
      return pb::TableDiffEntry::TIE_BASIS_IN_TIES_OF_B;
    case Basis::kTimesTied:
      return pb::TableDiffEntry::TIE_BASIS_TIMES_TIED;
  }
  return pb::TableDiffEntry::TIE_BASIS_UNSPECIFIED;
}

void ToProto(const Params& params, double time_us, pb::TableDiffEntry::Winner* out) {
  for (const auto& [name, value] : params) (*out->mutable_params())[name] = value;
  out->set_time_us(time_us);
}

pb::TableDiffReport ToProto(const store::TableDiff& diff) {
  pb::TableDiffReport report;
  report.set_format(kTableDiffFormat);
  report.set_version(kTableDiffVersion);
  for (const store::TableDiffEntry& e : diff.entries) {
    pb::TableDiffEntry* entry = report.add_entries();
    entry->set_device_model(e.device_model);
    entry->set_family(e.family);
    entry->set_dtype(std::string(DTypeName(e.dtype)));
    for (int64_t d : e.shape) entry->add_shape(d);
    entry->set_change(ToProto(e.change));
    if (e.params_a) ToProto(*e.params_a, e.time_a_us, entry->mutable_a());
    if (e.params_b) ToProto(*e.params_b, e.time_b_us, entry->mutable_b());
    if (e.params_a) entry->mutable_a()->set_timing(e.timing_a);
    if (e.params_b) entry->mutable_b()->set_timing(e.timing_b);
    entry->set_time_change_percent(e.time_change_percent);
    entry->set_source_hash_changed(e.source_hash_changed);
    entry->set_tie_basis(ToProto(e.tie_basis));
  }
  return report;
}

struct DiffOptions {
  std::string a;
  std::string b;
  bool json = false;
  std::string html;  // also write the picture of the diff here
  std::optional<double> fail_on_regression;
};

int Diff(const DiffOptions& options) {
  auto a = ReadFile(options.a);
  if (!a.ok()) return TableFileError(a.status());
  auto b = ReadFile(options.b);
  if (!b.ok()) return TableFileError(b.status());
  auto diff = store::DiffTables(*a, *b);
  if (!diff.ok()) {
    // DiffTables says "A: ..." or "B: ...": name the file instead.
    std::string message(ToStd(diff.status().message()));
    if (message.rfind("A: ", 0) == 0) message = absl::StrCat(options.a, ": ", message.substr(3));
    if (message.rfind("B: ", 0) == 0) message = absl::StrCat(options.b, ": ", message.substr(3));
    return TableFileError(absl::Status(diff.status().code(), message));
  }
  if (!options.html.empty()) {
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    const std::string page = charts::TableDiffHtml(
        ToProto(*diff), options.a, options.b,
        absl::StrCat("cutune ", ToAbsl(Version()), " table diff · ", date,
                     " · device model, and a changed kernel source, per row"));
    std::ofstream out(options.html, std::ios::binary | std::ios::trunc);
    out << page;
    out.close();
    if (!out) {
      return TableFileError(
          absl::PermissionDeniedError(absl::StrCat("cannot write '", options.html, "'")));
    }
  }
  if (options.json) {
    if (int code = PrintJson(ToProto(*diff)); code != kExitOk) return code;
  } else {
    std::cout << diff->ToText();
  }
  if (options.fail_on_regression) {
    auto regressions = diff->Regressions(*options.fail_on_regression);
    const auto retimed =
        std::count_if(diff->entries.begin(), diff->entries.end(),
                      [](const store::TableDiffEntry& e) { return e.TimingChanged(); });
    if (retimed > 0) {
      std::cerr << "note: " << retimed
                << " key(s) timed another way in B (timing changed) are not compared for "
                   "regressions\n";
    }
    if (!options.json && !regressions.empty()) {
      std::cerr << "error: " << regressions.size() << " regression(s) beyond "
                << *options.fail_on_regression << "%\n";
    }
    return regressions.empty() ? kExitOk : kExitDiff;
  }
  // A winner that changed to a configuration tied with the old one is reported ("tie") but is
  // no difference: the sweep picked another of equals.
  return diff->HasChanges() ? kExitDiff : kExitOk;
}

}  // namespace

void AddTableCommands(CLI::App& app, Context& context) {
  CLI::App* table = app.add_subcommand(
      "table", "Tuning tables: export from a daemon, import into one, diff two files");
  table->require_subcommand(1);
  {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = table->add_subcommand("export", "Write the daemon's tuning table (JSON)");
    cmd->add_option("--model", options->model, "Only this device model (default: every model)");
    cmd->add_flag("--rows", options->rows, "Also every finished sweep with all its rows");
    cmd->add_option("-o,--output", options->output, "Write to FILE (default: stdout)");
    AddConnectionOptions(cmd, options->connection);
    cmd->callback([&context, options] { context.action = [options] { return Export(*options); }; });
  }
  {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* cmd =
        table->add_subcommand("import", "Merge a tuning table file into the daemon (admin token)");
    cmd->add_option("file", options->file, "Table file (JSON, docs/tables.md)")->required();
    cmd->add_option("--policy", options->policy,
                    "On a key both have: keep-faster, keep-newer, or fail-on-conflict")
        ->capture_default_str()
        ->check(CLI::IsMember({"keep-faster", "keep-newer", "fail-on-conflict"}));
    cmd->add_flag("--json", options->json, "Machine-readable output");
    AddConnectionOptions(cmd, options->connection);
    cmd->callback([&context, options] { context.action = [options] { return Import(*options); }; });
  }
  {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* cmd = table->add_subcommand(
        "diff",
        "Compare two table files (local, no daemon). Exit 6 when they differ (a winner that "
        "changed to a tied configuration, reported as \"tie\", does not count); with "
        "--fail-on-regression only when a winner got slower by more than PCT percent");
    // Named as the usage line and the "NEW is required" error show them.
    cmd->add_option("OLD", options->a, "Old table file (A)")->required();
    cmd->add_option("NEW", options->b, "New table file (B)")->required();
    cmd->add_flag("--json", options->json, "Machine-readable output");
    cmd->add_option("--html", options->html,
                    "Also write FILE: a page with a chart of old against new time per shape");
    cmd->add_option("--fail-on-regression", options->fail_on_regression,
                    "Exit 6 only if a winner in both is slower in B by more than PCT percent")
        ->check(CLI::NonNegativeNumber);
    cmd->callback([&context, options] { context.action = [options] { return Diff(*options); }; });
  }
}

}  // namespace cutune::cli
