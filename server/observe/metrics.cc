#include "server/observe/metrics.h"

#include <array>
#include <chrono>

#include "absl/status/status.h"

namespace cutune::observe {
namespace {

using prometheus::Family;
using prometheus::Type;

// gRPC's codes by number, built once: RpcFinished runs for every call.
const std::string& CodeName(int code) {
  static const auto* names = [] {
    auto* out = new std::array<std::string, 17>;
    for (int i = 0; i < 17; ++i)
      (*out)[i] = absl::StatusCodeToString(static_cast<absl::StatusCode>(i));
    return out;
  }();
  static const std::string unknown = "UNKNOWN";
  return code >= 0 && code < 17 ? (*names)[code] : unknown;
}

std::string_view ResultOf(std::string_view error) { return error.empty() ? "ok" : "error"; }

}  // namespace

std::pair<std::string_view, std::string_view> SplitMethod(std::string_view method) {
  if (method.starts_with('/')) method.remove_prefix(1);
  const size_t slash = method.rfind('/');
  if (slash == std::string_view::npos) return {"", method};
  return {method.substr(0, slash), method.substr(slash + 1)};
}

Metrics::Metrics(std::string version)
    : version_(std::move(version)),
      lookups_("cutune_lookups_total", "GetBestConfig answers, by the ladder rung that answered",
               {"rung"}),
      stale_answers_("cutune_stale_answers_total",
                     "GetBestConfig answers whose winner was measured under another driver, NVRTC "
                     "or kernel source",
                     {}),
      lookup_seconds_(
          "cutune_lookup_duration_seconds",
          "Time to answer GetBestConfig, from request to answer (calls that waited "
          "for a tuning job are left out)",
          {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}),
      rpcs_("cutune_rpcs_total", "RPCs finished, by service, method and gRPC status code",
            {"service", "method", "code"}),
      candidates_("cutune_candidates_total", "Candidates measured by tuning jobs, by outcome",
                  {"outcome"}),
      jobs_finished_("cutune_jobs_finished_total", "Tuning jobs ended, by final state", {"state"}),
      worker_restarts_("cutune_worker_restarts_total",
                       "GPU worker processes replaced, by GPU and reason (fault, timeout, "
                       "poisoned)",
                       {"gpu", "reason"}),
      table_imports_("cutune_table_imports_total",
                     "Tuning tables imported (at start and by ImportTable), by result", {"result"}),
      table_exports_("cutune_table_exports_total", "Tuning tables exported, by result", {"result"}),
      auth_refusals_("cutune_auth_refusals_total",
                     "Calls refused for a missing, unknown or read-only token, by transport and "
                     "code",
                     {"transport", "code"}) {
  for (Outcome outcome : kAllOutcomes) candidates_.Declare({OutcomeName(outcome)});
  for (std::string_view state : {"succeeded", "failed", "cancelled"})
    jobs_finished_.Declare({state});
  stale_answers_.Declare({});
  for (std::string_view result : {"ok", "error"}) {
    table_imports_.Declare({result});
    table_exports_.Declare({result});
  }
}

void Metrics::AddCollector(Collector collector) {
  std::lock_guard lock(collectors_mu_);
  collectors_.push_back(std::move(collector));
}

std::vector<Family> Metrics::Collect() const {
  std::vector<Family> out;
  out.push_back({"cutune_build_info",
                 "The daemon's version (the value is always 1)",
                 Type::kGauge,
                 {{"", {{"version", version_}}, 1}}});
  if (const double start = start_time_.load(); start > 0) {
    out.push_back({"cutune_start_time_seconds",
                   "When the daemon started serving (Unix time)",
                   Type::kGauge,
                   {{"", {}, start}}});
  }
  out.push_back(lookups_.Collect());
  out.push_back(stale_answers_.Collect());
  out.push_back(lookup_seconds_.Collect());
  out.push_back(rpcs_.Collect());
  out.push_back(candidates_.Collect());
  out.push_back(jobs_finished_.Collect());
  out.push_back(worker_restarts_.Collect());
  out.push_back(table_imports_.Collect());
  out.push_back(table_exports_.Collect());
  out.push_back(auth_refusals_.Collect());
  std::lock_guard lock(collectors_mu_);
  for (const Collector& collector : collectors_) collector(out);
  return out;
}

void Metrics::DaemonStarted(const DaemonStart&) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  start_time_ = std::chrono::duration<double>(now).count();
}

// The states below are gauges read at scrape time (jobs by state, GPU state), not counted here.
void Metrics::DaemonStopping(std::string_view) {}
void Metrics::DaemonStopped() {}
void Metrics::JobQueued(const JobInfo&) {}
void Metrics::JobStarted(const JobInfo&, int64_t) {}
void Metrics::DeviceQuarantined(const DeviceQuarantine&) {}

void Metrics::JobFinished(const JobEnd& event) { jobs_finished_.Inc({event.state}); }

void Metrics::CandidateFinished(const CandidateEnd& event) {
  candidates_.Inc({OutcomeName(event.row.outcome)});
}

void Metrics::WorkerRestarted(const WorkerRestart& event) {
  worker_restarts_.Inc({std::to_string(event.device), event.reason});
}

void Metrics::TableImported(const TableImport& event) {
  table_imports_.Inc({ResultOf(event.error)});
}

void Metrics::TableExported(const TableExport& event) {
  table_exports_.Inc({ResultOf(event.error)});
}

void Metrics::AuthRefused(const AuthRefusal& event) {
  auth_refusals_.Inc({event.transport, event.code});
}

void Metrics::RpcFinished(const RpcEnd& event) {
  const auto [service, method] = SplitMethod(event.method);
  rpcs_.Inc({service, method, CodeName(event.code)});
}

void Metrics::LookupAnswered(const LookupEnd& event) {
  lookups_.Inc({event.rung});
  if (event.stale) stale_answers_.Inc({});
  if (!event.waited) lookup_seconds_.Observe(event.seconds);
}

}  // namespace cutune::observe
