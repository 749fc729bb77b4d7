#include "server/observe/log_observer.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/strings.h"

namespace cutune::observe {
namespace {

using log::Field;
using log::Level;

std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// "/cutune.v1.Tuner/GetBestConfig" -> "cutune.v1.Tuner/GetBestConfig"
std::string_view MethodName(std::string_view method) {
  return method.starts_with('/') ? method.substr(1) : method;
}

std::vector<Field> JobFields(const JobInfo& job) {
  std::vector<Field> fields = {{"job", job.id},
                               {"family", job.family},
                               {"shape", FormatShape(job.shape)},
                               {"dtype", DTypeName(job.dtype)},
                               {"device", job.device},
                               {"strategy", job.strategy}};
  if (!job.shards.empty()) fields.emplace_back("shards", absl::StrJoin(job.shards, ","));
  return fields;
}

// An error message as logged: a compile log can be long, and one line stays readable.
std::string Cut(std::string_view text, size_t max = 1000) {
  if (text.size() <= max) return std::string(text);
  return absl::StrCat(ToAbsl(text.substr(0, max)), "... (", text.size(), " bytes)");
}

}  // namespace

RpcLogRule RuleFor(int code, bool streaming, double seconds) {
  switch (static_cast<absl::StatusCode>(code)) {
    case absl::StatusCode::kOk:
      if (!streaming && seconds >= kSlowRpcSeconds) return {Level::kInfo, "rpc.slow"};
      return {Level::kDebug, "rpc.finished"};
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
      return {Level::kDebug, "rpc.failed"};
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return {Level::kWarning, "rpc.failed"};
    default:
      return {Level::kInfo, "rpc.failed"};
  }
}

void LogObserver::DaemonStarted(const DaemonStart& event) {
  std::string devices;
  for (const GpuSummary& gpu : event.gpus) {
    absl::StrAppend(&devices, devices.empty() ? "" : ",", gpu.ordinal, ":",
                    gpu.name.empty() ? "not started" : gpu.name,
                    gpu.quarantined ? " (quarantined)" : "");
  }
  std::vector<Field> fields = {{"version", event.version}, {"listen", event.listen}};
  if (!event.metrics_listen.empty()) fields.emplace_back("metrics_listen", event.metrics_listen);
  fields.emplace_back("store", event.store);
  fields.emplace_back("gpus", static_cast<int64_t>(event.gpus.size()));
  fields.emplace_back("devices", devices);
  if (!event.no_gpu_reason.empty()) fields.emplace_back("no_gpu_reason", event.no_gpu_reason);
  log_.Info("daemon.started", std::move(fields));
}

void LogObserver::DaemonStopping(std::string_view signal) {
  log_.Info("daemon.stopping", {{"signal", signal}});
}

void LogObserver::DaemonStopped() { log_.Info("daemon.stopped"); }

void LogObserver::JobQueued(const JobInfo& job) { log_.Info("job.queued", JobFields(job)); }

void LogObserver::JobStarted(const JobInfo& job, int64_t resumed_rows) {
  std::vector<Field> fields = JobFields(job);
  if (resumed_rows > 0) fields.emplace_back("resumed_rows", resumed_rows);
  log_.Info("job.started", std::move(fields));
}

void LogObserver::JobFinished(const JobEnd& event) {
  std::vector<Field> fields = JobFields(event.job);
  fields.emplace_back("state", event.state);
  fields.emplace_back("candidates", event.candidates);
  fields.emplace_back("ok", event.ok);
  fields.emplace_back("rejected", event.rejected);
  if (event.best_us) {
    fields.emplace_back("best_us", *event.best_us);
    fields.emplace_back("best", event.best_params);
  }
  fields.emplace_back("wall_s", std::round(event.wall_seconds * 1000) / 1000);  // ms suffice
  if (!event.error.empty()) fields.emplace_back("error", event.error);
  log_.Log(event.state == "failed" ? Level::kWarning : Level::kInfo, "job.finished",
           std::move(fields));
}

void LogObserver::CandidateFinished(const CandidateEnd& event) {
  const Outcome outcome = event.row.outcome;
  const bool lost = outcome == Outcome::kFault || outcome == Outcome::kTimeout;
  const Level level = lost ? Level::kWarning : Level::kDebug;
  if (!log_.Enabled(level)) return;  // every candidate passes here: format nothing in vain
  std::vector<Field> fields = {
      {"job", event.job}, {"device", event.device}, {"params", FormatParams(event.row.params)}};
  if (!lost) fields.emplace_back("outcome", OutcomeName(outcome));
  if (outcome == Outcome::kOk) fields.emplace_back("median_us", event.row.timing.median_us);
  if (!event.row.detail.empty()) fields.emplace_back("detail", event.row.detail);
  const std::string_view name = outcome == Outcome::kFault     ? "candidate.fault"
                                : outcome == Outcome::kTimeout ? "candidate.timeout"
                                                               : "candidate.finished";
  log_.Log(level, name, std::move(fields));
}

void LogObserver::WorkerRestarted(const WorkerRestart& event) {
  log_.Warning("worker.restarted",
               {{"device", event.device}, {"reason", event.reason}, {"detail", event.detail}});
}

void LogObserver::DeviceQuarantined(const DeviceQuarantine& event) {
  log_.Error("gpu.quarantined",
             {{"device", event.device}, {"failures", event.failures}, {"error", event.error}});
}

void LogObserver::TableImported(const TableImport& event) {
  if (!event.error.empty()) {
    log_.Warning("table.import_failed",
                 {{"source", event.source}, {"bytes", event.bytes}, {"error", event.error}});
    return;
  }
  log_.Info("table.imported", {{"source", event.source},
                               {"bytes", event.bytes},
                               {"winners_added", event.winners_added},
                               {"winners_replaced", event.winners_replaced},
                               {"winners_kept", event.winners_kept},
                               {"rows_added", event.rows_added}});
}

void LogObserver::TableExported(const TableExport& event) {
  std::vector<Field> fields = {{"model", event.model.empty() ? "(all)" : event.model},
                               {"include_rows", event.include_rows}};
  if (!event.error.empty()) {
    fields.emplace_back("error", event.error);
    log_.Warning("table.export_failed", std::move(fields));
    return;
  }
  fields.emplace_back("bytes", event.bytes);
  log_.Info("table.exported", std::move(fields));
}

void LogObserver::AuthRefused(const AuthRefusal& event) {
  log_.Warning("auth.refused", {{"transport", event.transport},
                                {"peer", event.peer},
                                {"method", event.method},
                                {"code", event.code},
                                {"reason", event.reason}});
}

void LogObserver::RpcFinished(const RpcEnd& event) {
  const RpcLogRule rule = RuleFor(event.code, event.streaming, event.seconds);
  if (!log_.Enabled(rule.level)) return;
  std::vector<Field> fields = {{"method", MethodName(event.method)},
                               {"code", CodeName(event.code)},
                               {"seconds", event.seconds},
                               {"peer", event.peer()}};
  if (!event.message.empty()) fields.emplace_back("error", Cut(event.message));
  log_.Log(rule.level, rule.event, std::move(fields));
}

void LogObserver::LookupAnswered(const LookupEnd& event) {
  if (!log_.Enabled(Level::kDebug)) return;  // the hot path: build no fields in vain
  log_.Debug("lookup", {{"rung", event.rung},
                        {"stale", event.stale},
                        {"waited", event.waited},
                        {"seconds", event.seconds}});
}

void LogObserver::ModelChoiceChanged(const ModelChoice& event) {
  std::vector<Field> fields = {
      {"model", event.model}, {"family", event.family}, {"dtype", event.dtype}};
  if (event.answers_from.empty()) {
    log_.Info("model.own", std::move(fields));
    return;
  }
  fields.emplace_back("answers_from", event.answers_from);
  fields.emplace_back("shapes", event.shapes);
  // Geometric means of speed ratios: four digits say all the measurements can.
  auto round4 = [](double x) { return std::round(x * 1e4) / 1e4; };
  fields.emplace_back("own", round4(event.own));
  fields.emplace_back("other", round4(event.other));
  log_.Info("model.gives_way", std::move(fields));
}

}  // namespace cutune::observe
