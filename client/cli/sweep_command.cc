// `cutune sweep FAMILY --shape ...`: starts a tuning job, follows its progress (a bar on a
// terminal), and ends with the ranked table of the fastest candidates and the rejected ones by
// reason. Ctrl-C cancels the job on the daemon. With `--shapes FILE` it tunes a list of shapes
// one after the other with the same options, resumably, and ends with a summary of the batch.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/batch.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/render.h"
#include "client/cli/results_view.h"
#include "kernels/family.h"
#include "server/core/strings.h"

namespace cutune::cli {
namespace {

struct SweepOptions {
  client::ConnectionOptions connection;
  ProblemOptions problem;
  std::string strategy;
  int max_evals = 0;
  double max_seconds = 0;
  std::vector<std::string> params;  // "name=v1,v2"
  std::vector<std::string> candidates;  // "name=v,name=v"
  std::string candidates_file;
  std::string idempotency_key;
  std::string shapes_file;  // --shapes: a batch ("-": standard input)
  std::string devices;      // --devices: "all" or ordinals "0,1" to shard the sweep across
  uint64_t seed = 0;
  int top = 10;
  bool resume = false;
  bool no_wait = false;
  bool json = false;
};

std::atomic<bool> interrupted{false};

extern "C" void OnInterrupt(int) { interrupted.store(true); }

// "tile=32,64" -> {"tile", {32, 64}}; empty string on success from the validator.
std::string ParseOverride(const std::string& text, std::string* name,
                          std::vector<int64_t>* values) {
  std::pair<std::string, std::string> kv = absl::StrSplit(text, absl::MaxSplits('=', 1));
  if (kv.first.empty() || kv.second.empty()) {
    return absl::StrCat("expected NAME=V1,V2,... got '", text, "'");
  }
  for (absl::string_view part : absl::StrSplit(kv.second, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::StrCat("'", std::string(part), "' in '", text, "' is not an integer");
    }
    if (values) values->push_back(v);
  }
  if (name) *name = kv.first;
  return "";
}

// One configuration per line ("bm=128,bn=64,..."); blank lines and "#" comments are skipped.
absl::StatusOr<std::vector<std::string>> ReadCandidatesFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string text(absl::StripAsciiWhitespace(line.substr(0, line.find('#'))));
    if (text.empty()) continue;
    if (auto parsed = ParseParams(text); !parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": ", parsed.status().message()));
    }
    out.push_back(std::move(text));
  }
  return out;
}

// outcome_counts is keyed by Outcome name; text says "ok 36  pruned 4", in that order.
std::map<std::string, int64_t> CountsByLabel(const pb::JobProgress& p) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, count] : p.outcome_counts()) {
    pb::Outcome outcome = pb::OUTCOME_UNSPECIFIED;
    out[pb::Outcome_Parse(name, &outcome) ? EnumLabel(outcome) : name] += count;
  }
  return out;
}

std::string Suffix(const pb::JobProgress& p) {
  std::string out = absl::StrFormat("ETA %.0fs", p.eta_seconds());
  if (p.has_best() && p.best().time_us() > 0) {
    absl::StrAppendFormat(&out, "  best %.2f us", p.best().time_us());
    if (p.best().percent_of_reference() > 0) {
      absl::StrAppendFormat(&out, " (%.1f%%)", p.best().percent_of_reference());
    }
  }
  for (const auto& [outcome, count] : CountsByLabel(p)) {
    absl::StrAppend(&out, "  ", outcome, " ", count);
  }
  return out;
}

std::string Counts(const pb::JobProgress& p) {
  std::string out;
  for (const auto& [outcome, count] : CountsByLabel(p)) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", outcome, " ", count);
  }
  return out.empty() ? "none" : out;
}

// How long Ctrl-C waits for the cancelled state: a running job stops after its candidate in
// flight, seconds at most; a second Ctrl-C (the default action again by then) does not wait.
constexpr std::chrono::seconds kCancelWait{20};

bool Finished(pb::JobProgress::State state) {
  return state == pb::JobProgress::STATE_SUCCEEDED || state == pb::JobProgress::STATE_FAILED ||
         state == pb::JobProgress::STATE_CANCELLED;
}

// The job's last progress once it has ended, waiting up to kCancelWait; its last state seen
// otherwise.
pb::JobProgress AwaitEnd(client::Connection& connection, const std::string& job_id) {
  pb::WatchJobRequest watch;
  watch.set_job_id(job_id);
  auto context = connection.NewContext(kCancelWait);
  auto reader = connection.stub().WatchJob(context.get(), watch);
  pb::JobProgress progress, last;
  while (reader->Read(&progress)) {
    last = progress;
    if (Finished(last.state())) break;
  }
  context->TryCancel();
  reader->Finish();
  return last;
}

// Ctrl-C: cancels the job this command started and says how it ended, with `resume_hint` (how
// to continue from its rows) when it was cancelled.
void CancelOnDaemon(client::Connection& connection, const std::string& job_id,
                    const std::string& resume_hint) {
  pb::CancelJobRequest request;
  request.set_job_id(job_id);
  pb::CancelJobResponse response;
  if (auto status = connection.Call(&pb::Tuner::Stub::CancelJob, request, &response);
      !status.ok()) {
    ReportError(status);
    return;
  }
  // CancelJob answers at once; a running job is "running" until its candidate in flight ends.
  pb::JobProgress last = AwaitEnd(connection, job_id);
  if (!Finished(last.state())) {
    std::cerr << "interrupted: job " << job_id << " is still stopping (cancelled on the daemon; "
              << "the candidate in flight finishes first): see `cutune jobs`\n";
  } else if (last.state() == pb::JobProgress::STATE_CANCELLED) {
    std::cerr << absl::StrFormat("interrupted: job %s cancelled after %d of %d candidates; its "
                                 "rows are kept%s\n",
                                 job_id, last.done(), last.total(), resume_hint);
  } else {
    std::cerr << "interrupted: job " << job_id << " had already ended: "
              << EnumLabel(last.state()) << "\n";
  }
}

// --devices: "all", or GPU ordinals separated by commas; empty string when valid.
std::string CheckDevices(const std::string& text) {
  if (text == "all") return "";
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int ordinal = 0;
    if (!absl::SimpleAtoi(part, &ordinal) || ordinal < 0) {
      return absl::StrCat("expected 'all' or GPU ordinals such as 0,1; got '", text, "'");
    }
  }
  return "";
}

// The StartTuning request that every shape of the command shares (the shape is --shape's, and
// each batch shape's in turn); fails on a bad --candidates file.
absl::StatusOr<pb::StartTuningRequest> RequestOf(const SweepOptions& options) {
  pb::StartTuningRequest request;
  *request.mutable_problem() = ToProblem(options.problem);
  *request.mutable_device() = ToSelector(options.problem);
  if (options.devices == "all") {
    request.set_shard_all(true);
  } else if (!options.devices.empty()) {
    std::vector<int> ordinals;
    for (absl::string_view part : absl::StrSplit(options.devices, ',')) {
      int ordinal = 0;
      if (absl::SimpleAtoi(part, &ordinal)) ordinals.push_back(ordinal);  // checked when parsed
    }
    // The first listed GPU is the sweep's own, unless --device (or --uuid, --model) chose it.
    if (request.device().by_case() == pb::DeviceSelector::BY_NOT_SET && !ordinals.empty()) {
      request.mutable_device()->set_ordinal(ordinals.front());
    }
    for (int ordinal : ordinals) request.add_shard_devices(ordinal);
  }
  request.set_strategy(options.strategy);
  request.mutable_budget()->set_max_evaluations(options.max_evals);
  request.mutable_budget()->set_max_seconds(options.max_seconds);
  for (const std::string& text : options.params) {
    std::string name;
    std::vector<int64_t> values;
    ParseOverride(text, &name, &values);  // validated while parsing the command line
    auto& list = (*request.mutable_space()->mutable_values())[name];
    for (int64_t v : values) list.add_values(v);
  }
  std::vector<std::string> candidates = options.candidates;
  if (!options.candidates_file.empty()) {
    auto listed = ReadCandidatesFile(options.candidates_file);
    if (!listed.ok()) return listed.status();
    candidates.insert(candidates.end(), listed->begin(), listed->end());
  }
  for (const std::string& text : candidates) {
    auto params = ParseParams(text);
    if (!params.ok()) return params.status();
    auto& values = *request.add_candidates()->mutable_values();
    for (const auto& [name, value] : *params) values[name] = value;
  }
  request.set_idempotency_key(options.idempotency_key);
  request.set_seed(options.seed);
  request.set_resume(options.resume);
  return request;
}

// Ctrl-C sets `interrupted` while the command follows its jobs (then the default again).
class InterruptHandler {
 public:
  InterruptHandler() {
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigaction(SIGINT, &action, nullptr);
  }
  ~InterruptHandler() { signal(SIGINT, SIG_DFL); }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
};

struct Followed {
  grpc::Status status;  // the WatchJob stream's
  bool got_any = false;
  pb::JobProgress last;
};

// Streams the job's progress until it ends, Ctrl-C (`interrupted`) or a stream error, calling
// `on_progress` for each message.
Followed FollowJob(client::Connection& connection, const std::string& job_id,
                   const std::function<void(const pb::JobProgress&)>& on_progress) {
  pb::WatchJobRequest watch;
  watch.set_job_id(job_id);
  auto context = connection.NewContext(std::chrono::milliseconds(0));
  std::atomic<bool> finished{false};
  // Read() blocks inside gRPC; this thread turns Ctrl-C into a cancelled stream.
  std::thread canceller([&] {
    while (!finished.load()) {
      if (interrupted.load()) {
        context->TryCancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  Followed out;
  auto reader = connection.stub().WatchJob(context.get(), watch);
  pb::JobProgress progress;
  while (reader->Read(&progress)) {
    out.last = progress;
    out.got_any = true;
    on_progress(progress);
  }
  out.status = reader->Finish();
  finished.store(true);
  canceller.join();
  return out;
}

// Why a job that ended did not succeed ("sweep job ... failed: ..."); OK when it succeeded.
absl::Status EndOf(const pb::JobProgress& last) {
  if (last.state() == pb::JobProgress::STATE_FAILED) {
    return absl::AbortedError(
        absl::StrCat("sweep job ", last.job_id(), " failed: ", OneLine(last.error())));
  }
  if (last.state() == pb::JobProgress::STATE_CANCELLED) {
    return absl::CancelledError(absl::StrCat("sweep job ", last.job_id(), " was cancelled"));
  }
  return absl::OkStatus();
}

int Sweep(const SweepOptions& options) {
  auto opened = client::Connection::Open(options.connection);
  if (!opened.ok()) return ReportError(opened.status());
  client::Connection& connection = **opened;

  auto made = RequestOf(options);
  if (!made.ok()) return ReportError(made.status());
  const pb::StartTuningRequest& request = *made;
  pb::StartTuningResponse started;
  {
    auto status = connection.Call(&pb::Tuner::Stub::StartTuning, request, &started);
    if (!status.ok()) return ReportError(status);
  }
  const std::string& job_id = started.job_id();
  if (options.no_wait) {
    if (options.json) return PrintJson(started);
    std::cout << job_id << "\n";
    return kExitOk;
  }
  if (!options.json) {
    std::cout << "job " << job_id << (started.merged() ? " (joined an identical job)" : "") << ": "
              << Describe(request.problem()) << "\n"
              << std::flush;
  }

  Followed followed;
  {
    InterruptHandler handler;
    ProgressBar bar(!options.json);
    followed = FollowJob(connection, job_id, [&](const pb::JobProgress& progress) {
      bar.Update(progress.done(), progress.total(), Suffix(progress));
    });
  }
  if (interrupted.load()) {
    CancelOnDaemon(connection, job_id,
                   ": run the same command with --resume to continue from them");
    return kExitInterrupted;
  }
  if (!followed.status.ok()) return ReportError(connection.Convert(followed.status));
  if (!followed.got_any) {
    return ReportError(absl::InternalError(absl::StrCat("job ", job_id, ": no progress received")));
  }
  const pb::JobProgress& last = followed.last;
  if (absl::Status end = EndOf(last); !end.ok()) return ReportError(end, kExitFailure);

  pb::ListResultsRequest results_request;
  results_request.set_job_id(job_id);  // this sweep's rows only, not earlier sweeps of the key
  pb::ListResultsResponse results;
  {
    auto status = connection.Call(&pb::Tuner::Stub::ListResults, results_request, &results);
    if (!status.ok()) return ReportError(status);
  }
  std::vector<pb::Measurement> rows(results.rows().begin(), results.rows().end());
  const bool any_ok = !Ranked(rows, 1).empty();
  if (options.json) {
    if (int code = PrintJson(SweepReportOf(last, results, options.top)); code != kExitOk) {
      return code;
    }
  } else {
    std::cout << absl::StrFormat("%s on %s: %d of %d candidates%s in %.1f s (%s)\n",
                                 Describe(request.problem()), results.device_model(), last.done(),
                                 last.total(),
                                 last.resumed() > 0
                                     ? absl::StrCat(" (", last.resumed(), " from earlier runs)")
                                     : "",
                                 last.elapsed_seconds(), Counts(last));
    if (last.reference_us() > 0) {
      std::cout << absl::StrFormat("reference: %s %.2f us\n", last.reference_name(),
                                   last.reference_us());
    }
    if (last.devices_size() > 1) {
      std::cout << "sharded across GPUs " << absl::StrJoin(last.devices(), ", ") << " (GPU "
                << last.devices(0) << " measured the reference and the finalists)\n";
    }
    for (const std::string& note : last.notes()) std::cout << "note: " << note << "\n";
    if (!last.phase_seconds().empty()) {
      const auto& p = last.phase_seconds();
      auto at = [&](const char* key) { return p.count(key) ? p.at(key) : 0.0; };
      std::cout << absl::StrFormat(
          // Three short lines rather than one that a terminal would wrap.
          "time: wall %.1f s; NVRTC %.1f s on the compile threads (GPU idle %.1f s waiting)\n"
          "      prepare %.1f s, reference %.1f s, load %.1f s, verify %.1f s,\n"
          "      timing %.1f s, finalists %.1f s\n",
          at("wall"), at("compile"), at("gpu_idle_compiling"), at("prepare"), at("reference"),
          at("load"), at("verify"), at("time"), at("finalists"));
    }
    if (last.has_best() && !last.ties().empty()) {
      std::cout << absl::StrFormat("tied with the winner (within their measured spread): %d\n",
                                   last.ties_size());
      for (const pb::Measurement& tie : last.ties()) {
        std::cout << absl::StrFormat(
            "  %s  %.2f us\n", FormatParams(Params(tie.params().begin(), tie.params().end())),
            tie.time_us());
      }
    }
    // Nothing to rank and nothing rejected: the error line below says why.
    if (!rows.empty()) {
      const size_t width = OutputColumns();
      std::cout << "\n"
                << RankedTable(rows, options.top, width) << "\n"
                << RejectedSummary(rows, width);
    }
  }
  if (!any_ok) {
    std::cerr << "error: sweep job " << job_id
              << " found no valid candidate: " << NoValidCandidateReason(last) << "\n";
    return kExitNoResult;
  }
  return kExitOk;
}

// --- batch ------------------------------------------------------------------------------------

// `parts` joined by spaces, a part that would pass `width` (0: no limit) starting an indented
// line of its own: a terminal would wrap it mid-word.
std::string Wrapped(const std::vector<std::string>& parts, size_t width) {
  std::string out;
  size_t line = 0;
  for (const std::string& part : parts) {
    if (out.empty()) {
      out = part;
      line = part.size();
    } else if (width > 0 && line + 1 + part.size() > width) {
      absl::StrAppend(&out, "\n      ", part);
      line = 6 + part.size();
    } else {
      absl::StrAppend(&out, " ", part);
      line += 1 + part.size();
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadShapesText(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  text << in.rdbuf();
  return text.str();
}

// StartTuning errors that concern the request or the daemon, not one shape: every later shape
// would meet them too, so the batch stops with the error's own exit code. RESOURCE_EXHAUSTED
// (this shape's buffers do not fit the GPU, the queue is full) fails the shape only.
bool StopsTheBatch(const absl::Status& status) { return !absl::IsResourceExhausted(status); }

std::string StatusText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", OneLine(ToStd(status.message())));
}

// Tunes every listed shape in turn with the same request, each with `resume` set: re-running the
// same command answers shapes an earlier run finished from the store, resumes the one it was
// interrupted in and measures only what is missing. One shape at a time, because a GPU runs one
// sweep at a time and its queue is bounded: queued all at once, a long list would be refused
// and an interrupted batch would leave jobs behind on the daemon.
int SweepBatch(const SweepOptions& options) {
  absl::StatusOr<std::string> text = ReadShapesText(options.shapes_file);
  if (!text.ok()) return ReportError(text.status(), kExitUsage);
  absl::StatusOr<std::vector<ListedShape>> listed = ParseShapeList(
      *text, options.shapes_file, kernels::FindFamily(options.problem.family));
  if (!listed.ok()) return ReportError(listed.status());
  auto made = RequestOf(options);
  if (!made.ok()) return ReportError(made.status());
  pb::StartTuningRequest request = *std::move(made);
  request.set_resume(true);

  pb::BatchSweepReport report;
  report.set_family(options.problem.family);
  report.set_shapes_file(options.shapes_file);
  for (const ListedShape& shape : *listed) {
    pb::BatchSweepShape* entry = report.add_shapes();
    *entry->mutable_problem() = request.problem();
    entry->mutable_problem()->clear_shape();
    for (int64_t d : shape.shape) entry->mutable_problem()->add_shape(d);
    entry->set_line(shape.line);
    entry->set_state(pb::BatchSweepShape::STATE_NOT_STARTED);
  }

  auto opened = client::Connection::Open(options.connection);
  if (!opened.ok()) return ReportError(opened.status());
  client::Connection& connection = **opened;
  const bool text_out = !options.json;
  const int count = report.shapes_size();
  absl::Status stopped;  // the error that stopped the batch
  std::string interrupted_job;
  {
    InterruptHandler handler;
    ProgressBar bar(text_out);
    for (int i = 0; i < count && stopped.ok() && !interrupted.load(); ++i) {
      pb::BatchSweepShape& entry = *report.mutable_shapes(i);
      const std::string place = absl::StrFormat("[%d/%d]", i + 1, count);
      *request.mutable_problem() = entry.problem();
      bar.Update(0, 0, "starting", BatchPrefix(report, i));
      pb::StartTuningResponse started;
      if (absl::Status s = connection.Call(&pb::Tuner::Stub::StartTuning, request, &started);
          !s.ok()) {
        const absl::Status named(s.code(), absl::StrCat(options.shapes_file, ":", entry.line(),
                                                        ": ", Describe(entry.problem()), ": ",
                                                        s.message()));
        if (StopsTheBatch(s)) {
          stopped = named;
          break;
        }
        entry.set_state(pb::BatchSweepShape::STATE_FAILED);
        entry.set_error(StatusText(s));
        continue;
      }
      const std::string& job_id = started.job_id();
      if (text_out) {
        bar.Finish();
        std::cout << place << " job " << job_id
                  << (started.merged() ? " (joined an identical job)" : "") << ": "
                  << Describe(entry.problem()) << "\n"
                  << std::flush;
      }
      Followed followed = FollowJob(connection, job_id, [&](const pb::JobProgress& progress) {
        bar.Update(progress.done(), progress.total(), Suffix(progress), BatchPrefix(report, i));
      });
      *entry.mutable_sweep()->mutable_job() = followed.last;
      if (interrupted.load()) {
        entry.set_state(pb::BatchSweepShape::STATE_INTERRUPTED);
        interrupted_job = job_id;
        break;
      }
      if (!followed.status.ok() || !followed.got_any) {
        entry.set_state(pb::BatchSweepShape::STATE_INTERRUPTED);
        stopped = followed.status.ok()
                      ? absl::InternalError(absl::StrCat("job ", job_id, ": no progress received"))
                      : connection.Convert(followed.status);
        break;
      }
      if (absl::Status end = EndOf(followed.last); !end.ok()) {
        entry.set_state(pb::BatchSweepShape::STATE_FAILED);
        entry.set_error(StatusText(end));
        continue;
      }
      pb::ListResultsRequest results_request;
      results_request.set_job_id(job_id);
      pb::ListResultsResponse results;
      if (absl::Status s = connection.Call(&pb::Tuner::Stub::ListResults, results_request, &results);
          !s.ok()) {
        stopped = s;
        break;
      }
      *entry.mutable_sweep() = SweepReportOf(followed.last, results, options.top);
      const std::vector<pb::Measurement> rows(results.rows().begin(), results.rows().end());
      if (Ranked(rows, 1).empty()) {
        entry.set_state(pb::BatchSweepShape::STATE_FAILED);
        entry.set_error(absl::StrCat("sweep job ", job_id, " found no valid candidate: ",
                                     NoValidCandidateReason(followed.last)));
      } else {
        entry.set_state(pb::BatchSweepShape::STATE_SUCCEEDED);
      }
      if (text_out) {
        bar.Finish();
        const pb::JobProgress& last = followed.last;
        const size_t width = OutputColumns();
        std::vector<std::string> parts = {
            absl::StrFormat("%s %s on %s: %d of %d candidates", place, Describe(entry.problem()),
                            results.device_model(), last.done(), last.total())};
        if (last.resumed() > 0) {
          parts.push_back(absl::StrCat("(", last.resumed(), " from earlier runs)"));
        }
        parts.push_back(absl::StrFormat("in %.1f s", last.elapsed_seconds()));
        parts.push_back(absl::StrCat("(", Counts(last), ")"));
        std::cout << Wrapped(parts, width) << "\n"
                  << RankedTable(rows, options.top, width) << "\n"
                  << std::flush;
      }
    }
  }
  if (!interrupted_job.empty()) CancelOnDaemon(connection, interrupted_job, "");
  CountShapes(report);
  // Refused before any shape started (no GPU, a bad option, no daemon): the error alone.
  if (!stopped.ok() && report.not_finished() == count &&
      report.shapes(0).state() == pb::BatchSweepShape::STATE_NOT_STARTED) {
    return ReportError(stopped);
  }
  if (options.json) {
    if (int code = PrintJson(report); code != kExitOk) return code;
  } else {
    std::cout << BatchSummary(report, OutputColumns());
  }
  if (interrupted.load()) {
    std::cerr << "interrupted: run the same command again to resume (finished shapes are kept, "
                 "the interrupted one resumes from its stored rows)\n";
    return kExitInterrupted;
  }
  if (!stopped.ok()) return ReportError(stopped);
  return report.succeeded() == count ? kExitOk : kExitFailure;
}

}  // namespace

void AddSweepCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Tune a problem on the daemon's GPU: progress, ranked table, rejected candidates");
  CLI::Option* shape = AddProblemOptions(cmd, options->problem);
  shape->required(false);
  CLI::Option* shapes = cmd->add_option(
      "--shapes", options->shapes_file,
      "Tune every shape of FILE in turn (one a line, # comments; - reads standard input) with "
      "the same options, and sum the batch up; running the same command again resumes it");
  shape->excludes(shapes);
  cmd->add_option("--devices", options->devices,
                  "Shard the sweep across GPUs of one model: 'all', or ordinals such as 0,1 "
                  "(the first, or --device, measures the reference and the finalists)")
      ->check(CLI::Validator(CheckDevices, "all|N,N,..."));
  cmd->add_option("--strategy", options->strategy,
                  "Search strategy: brute_force (default: every candidate), random (random "
                  "order), local (random start, then the neighbours of the best; 15% of the "
                  "candidates unless --max-evals), quick (the device's portfolio at this "
                  "shape, then the neighbours of the best until none is faster)");
  cmd->add_option("--max-evals", options->max_evals,
                  "Stop after this many candidates (0: no limit; local: 15%)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-seconds", options->max_seconds, "Stop after this long (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--param", options->params,
                  "Narrow the space: NAME=V1,V2,... (repeatable), e.g. --param tile=32,64")
      ->check(CLI::Validator(
          [](std::string& text) { return ParseOverride(text, nullptr, nullptr); }, "NAME=V1,V2"));
  cmd->add_option("--candidate", options->candidates,
                  "Measure this configuration (repeatable): NAME=V,NAME=V,... with every "
                  "parameter; replaces the strategy's choice, or with --strategy quick its "
                  "starting set")
      ->check(CLI::Validator(
          [](std::string& text) {
            auto parsed = ParseParams(text);
            return parsed.ok() ? std::string() : std::string(parsed.status().message());
          },
          "NAME=V,..."));
  cmd->add_option("--candidates", options->candidates_file,
                  "File of configurations to measure, one NAME=V,NAME=V,... per line (# "
                  "comments), like --candidate");
  cmd->add_option("--idempotency-key", options->idempotency_key,
                  "Retrying with the same key returns the job it first created")
      ->excludes(shapes);
  cmd->add_option("--seed", options->seed, "Seed of randomized strategies (0: the daemon's)");
  cmd->add_option("--top", options->top, "Rows in the final ranked table")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--resume", options->resume,
                "Continue an earlier sweep of this very request (cancelled with Ctrl-C, failed, "
                "interrupted) from its stored rows; a finished one is answered as it is "
                "(--shapes always resumes)");
  cmd->add_flag("--no-wait", options->no_wait, "Print the job id and return at once")
      ->excludes(shapes);
  cmd->add_flag("--json", options->json, "Machine-readable final result (no progress bar)");
  AddConnectionOptions(cmd, options->connection);
  cmd->callback([&context, options] {
    if (options->problem.shape.empty() && options->shapes_file.empty()) {
      throw CLI::RequiredError("--shape or --shapes");
    }
    context.action = [options] {
      return options->shapes_file.empty() ? Sweep(*options) : SweepBatch(*options);
    };
  });
}

}  // namespace cutune::cli
