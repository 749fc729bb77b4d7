#include "server/dashboard/pages.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "charts/svg.h"
#include "charts/sweep_charts.h"
#include "google/protobuf/util/json_util.h"
#include "server/core/types.h"
#include "server/profile/ncu.h"

namespace cutune::dashboard {
namespace {

using charts::Escape;

constexpr char kStyle[] =
    "body{margin:0;font-family:'DejaVu Sans',Arial,sans-serif;color:#111;background:#fafafa}"
    "header{background:#1f2a44;color:#fff;padding:10px 20px}header a{color:#fff;margin-right:18px;"
    "text-decoration:none;font-weight:bold}header .v{float:right;font-weight:normal;opacity:.8}"
    "main{padding:8px 20px}h1{font-size:20px}h2{font-size:16px;margin-top:22px}"
    "table{border-collapse:collapse;background:#fff;font-size:13px}"
    "th,td{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}"
    "th{background:#eef0f4}.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:9px;font-size:12px;color:#fff}"
    ".ready,.succeeded,.current{background:#2a9d8f}.busy,.running{background:#3b528b}"
    ".quarantined,.failed,.stale{background:#d62728}.queued,.starting{background:#8d99ae}"
    ".cancelled{background:#6c757d}.bar{width:160px;height:12px;background:#e4e6eb;"
    "display:inline-block;vertical-align:middle}.bar span{display:block;height:12px;"
    "background:#3b528b}.charts svg{margin:6px 8px 6px 0;border:1px solid #ddd;"
    "vertical-align:top}.muted{color:#666}code{font-size:12px}";

std::string Page(const std::string& title, const std::string& body, const std::string& script = "") {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cutune: ",
      Escape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n",
      "<header><a href=\"/\">Devices &amp; jobs</a><a href=\"/tables\">Tables</a>"
      "<a href=\"/metrics\">Metrics</a><span class=\"v\">cutuned (read-only)</span></header>\n"
      "<main>\n",
      body, "</main>\n", script.empty() ? "" : absl::StrCat("<script>", script, "</script>\n"),
      "</body>\n</html>\n");
}

std::string Badge(std::string_view text) {
  return absl::StrCat("<span class=\"badge ", Escape(text), "\">", Escape(text), "</span>");
}

std::string DeviceState(pb::Device::State state) {
  switch (state) {
    case pb::Device::STATE_READY: return "ready";
    case pb::Device::STATE_BUSY: return "busy";
    case pb::Device::STATE_QUARANTINED: return "quarantined";
    case pb::Device::STATE_STARTING: return "starting";
    default: return "unknown";
  }
}

std::string JobState(pb::JobProgress::State state) {
  switch (state) {
    case pb::JobProgress::STATE_QUEUED: return "queued";
    case pb::JobProgress::STATE_RUNNING: return "running";
    case pb::JobProgress::STATE_SUCCEEDED: return "succeeded";
    case pb::JobProgress::STATE_FAILED: return "failed";
    case pb::JobProgress::STATE_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

std::string Problem(const pb::Problem& p) {
  return absl::StrCat(p.family(), " ", absl::StrJoin(p.shape(), "x"), " ", p.dtype());
}

std::string Params(const google::protobuf::Map<std::string, int64_t>& params) {
  cutune::Params sorted(params.begin(), params.end());
  return FormatParams(sorted);
}

std::string Seconds(double s) {
  if (s <= 0) return "—";
  if (s < 90) return absl::StrFormat("%.0f s", s);
  return absl::StrFormat("%.0f min", s / 60);
}

// The cells the overview's script rewrites are named job-ID-done and so on.
std::string ProgressCells(const pb::JobProgress& job) {
  const double frac = job.total() > 0 ? static_cast<double>(job.done()) / job.total() : 0;
  std::string best = "—";
  if (job.best().time_us() > 0) {
    best = absl::StrFormat("%.2f us", job.best().time_us());
    if (job.best().percent_of_reference() > 0) {
      absl::StrAppendFormat(&best, " (%.1f%% of %s)", job.best().percent_of_reference(),
                            job.reference_name().empty() ? "ref" : job.reference_name());
    }
  }
  const std::string id = Escape(job.job_id());
  return absl::StrFormat(
      "<td id=\"%s-state\">%s</td><td><span class=\"bar\"><span id=\"%s-bar\" "
      "style=\"width:%.0f%%\"></span></span> <span id=\"%s-done\">%d / %d</span></td>"
      "<td id=\"%s-best\">%s</td><td id=\"%s-eta\" class=\"num\">%s</td>",
      id, Badge(JobState(job.state())), id, 100 * frac, id, job.done(), job.total(), id,
      Escape(best), id,
      job.state() == pb::JobProgress::STATE_RUNNING ? Seconds(job.eta_seconds()) : "—");
}

// Polls /api/jobs every two seconds while a job is queued or running and rewrites the progress
// cells; a new job (not on the page) reloads it.
constexpr char kLiveScript[] = R"JS(
(function(){
  var names={1:'queued',2:'running',3:'succeeded',4:'failed',5:'cancelled'};
  function text(id,t){var e=document.getElementById(id);if(e)e.textContent=t;return e;}
  function tick(){
    fetch('/api/jobs',{credentials:'same-origin'}).then(function(r){return r.json();}).then(function(d){
      var live=false;
      (d.jobs||[]).forEach(function(j){
        var id=j.jobId,state=names[j.state]||String(j.state).replace('STATE_','').toLowerCase();
        if(!document.getElementById(id+'-state')){location.reload();return;}
        var done=+(j.done||0),total=+(j.total||0);
        document.getElementById(id+'-state').innerHTML='<span class="badge '+state+'">'+state+'</span>';
        text(id+'-done',done+' / '+total);
        var bar=document.getElementById(id+'-bar');if(bar)bar.style.width=(total?100*done/total:0)+'%';
        var b=j.best||{};if(b.timeUs){var t=(+b.timeUs).toFixed(2)+' us';
          if(b.percentOfReference)t+=' ('+(+b.percentOfReference).toFixed(1)+'% of '+(j.referenceName||'ref')+')';
          text(id+'-best',t);}
        text(id+'-eta',state==='running'&&j.etaSeconds?Math.round(j.etaSeconds)+' s':'\u2014');
        if(state==='running'||state==='queued')live=true;
      });
      document.body.setAttribute('data-live',live?'yes':'no');
      if(live)setTimeout(tick,2000);
    }).catch(function(){setTimeout(tick,5000);});
  }
  tick();
})();
)JS";

}  // namespace

std::string OverviewPage(const std::string& version, const pb::ListDevicesResponse& devices,
                         const pb::ListJobsResponse& jobs) {
  std::string b = absl::StrCat("<h1>cutuned ", Escape(version), "</h1>\n<p class=\"muted\">NVRTC ",
                               Escape(devices.nvrtc_version()), "</p>\n<h2>Devices</h2>\n");
  if (devices.devices().empty()) {
    absl::StrAppend(&b, "<p>No GPU: a table server (", Escape(devices.no_gpu_reason()), ").</p>\n");
  } else {
    b += "<table><tr><th>GPU</th><th>model</th><th>CC</th><th class=\"num\">SMs</th>"
         "<th class=\"num\">memory</th><th>driver</th><th>state</th><th class=\"num\">queued "
         "jobs</th></tr>\n";
    for (const pb::Device& d : devices.devices()) {
      absl::StrAppendFormat(
          &b,
          "<tr><td>%d</td><td>%s<br><code class=\"muted\">%s</code></td><td>%s</td>"
          "<td class=\"num\">%d</td><td class=\"num\">%.1f GiB</td><td>%s</td><td>%s</td>"
          "<td class=\"num\">%d</td></tr>\n",
          d.ordinal(), Escape(d.name()), Escape(d.uuid()), Escape(d.compute_capability()),
          d.sm_count(), d.total_memory_bytes() / double(1 << 30), charts::DriverText(d.driver_version()),
          Badge(DeviceState(d.state())), d.queued_jobs());
    }
    b += "</table>\n";
  }
  b += "<h2>Jobs</h2>\n";
  if (jobs.jobs().empty()) {
    b += "<p class=\"muted\">No job since the daemon started.</p>\n";
  } else {
    b += "<table><tr><th>job</th><th>problem</th><th>state</th><th>progress</th>"
         "<th>best so far</th><th class=\"num\">ETA</th><th></th></tr>\n";
    for (const pb::JobProgress& j : jobs.jobs()) {
      absl::StrAppend(&b, "<tr><td><code>", Escape(j.job_id()), "</code></td><td>",
                      Escape(Problem(j.problem())), "</td>", ProgressCells(j),
                      "<td><a href=\"/sweep?job=", Escape(j.job_id()), "\">pictures</a></td></tr>\n");
    }
    b += "</table>\n";
  }
  return Page("devices and jobs", b, jobs.jobs().empty() ? "" : kLiveScript);
}

namespace {

// The rows profiled under Nsight Compute (ProfileCandidate), fastest first: one column per
// counter, in profile::kMetrics' order; "" when none is.
std::string ProfiledRowsTable(const pb::ListResultsResponse& results) {
  std::vector<const pb::Measurement*> profiled;
  for (const pb::Measurement& row : results.rows()) {
    if (row.profile().metrics_size() > 0) profiled.push_back(&row);
  }
  if (profiled.empty()) return "";
  std::sort(profiled.begin(), profiled.end(), [](const pb::Measurement* a, const pb::Measurement* b) {
    return a->time_us() < b->time_us();
  });
  std::string b = "<h2>Profiled (Nsight Compute)</h2>\n<table id=\"profiles\"><tr><th>"
                  "configuration</th><th class=\"num\">time</th>";
  for (const profile::MetricSpec& spec : profile::kMetrics) {
    absl::StrAppend(&b, "<th class=\"num\" title=\"", Escape(std::string(spec.name)), ": ",
                    Escape(std::string(spec.meaning)), "\">", Escape(std::string(spec.label)),
                    "</th>");
  }
  b += "<th>ncu</th></tr>\n";
  for (const pb::Measurement* row : profiled) {
    absl::StrAppendFormat(&b, "<tr><td><code>%s</code></td><td class=\"num\">%.2f us</td>",
                          Escape(Params(row->params())), row->time_us());
    for (const profile::MetricSpec& spec : profile::kMetrics) {
      std::string cell = "n/a";
      for (const pb::ProfileMetric& m : row->profile().metrics()) {
        if (m.name() != spec.name) continue;
        cell = m.unit() == "ns" || m.unit() == "nsecond" ? absl::StrFormat("%.2f us", m.value() / 1000)
               : m.unit() == "%"     ? absl::StrFormat("%.1f%%", m.value())
                                     : absl::StrFormat("%.0f", m.value());
      }
      absl::StrAppend(&b, "<td class=\"num\">", Escape(cell), "</td>");
    }
    absl::StrAppend(&b, "<td>", Escape(row->profile().ncu_version()), "</td></tr>\n");
  }
  return b + "</table>\n";
}

}  // namespace

std::string SweepPage(const SweepPageInput& input) {
  std::string b = absl::StrCat("<h1>", Escape(input.problem), " on ",
                               Escape(input.results.device_model().empty()
                                          ? "(no device)"
                                          : input.results.device_model()),
                               "</h1>\n");
  const charts::SweepData data = charts::FromResults(input.problem, input.results);
  absl::StrAppend(&b, "<p class=\"muted\">", Escape(charts::ProvenanceLine(data.provenance)),
                  input.results.sweep().status().empty()
                      ? ""
                      : absl::StrCat(" · ", input.results.sweep().status()),
                  "</p>\n");
  if (input.job != nullptr) {
    absl::StrAppend(&b,
                    "<table><tr><th>job</th><th>state</th><th>progress</th><th>best so far</th>"
                    "<th class=\"num\">ETA</th></tr>\n<tr><td><code>",
                    Escape(input.job->job_id()), "</code></td>", ProgressCells(*input.job),
                    "</tr></table>\n");
  }
  if (input.results.rows().empty()) {
    b += "<p>No measurement yet.</p>\n";
  } else {
    if (const pb::Measurement* w = charts::Winner(data.rows)) {
      absl::StrAppendFormat(&b, "<p>Winner: <code>%s</code> %.2f us", Escape(Params(w->params())),
                            w->time_us());
      if (w->percent_of_reference() > 0) {
        absl::StrAppendFormat(&b, ", %.1f%% of %s (%.2f us)", w->percent_of_reference(),
                              Escape(data.reference_name), data.reference_us);
      }
      b += "</p>\n";
    }
    b += "<div class=\"charts\">\n";
    for (const auto& [id, svg] : charts::SweepCharts(data)) {
      absl::StrAppend(&b, "<div id=\"chart-", id, "\" style=\"display:inline-block\">", svg,
                      "</div>\n");
    }
    b += "</div>\n";
    b += ProfiledRowsTable(input.results);
  }
  const bool live = input.job != nullptr &&
                    (input.job->state() == pb::JobProgress::STATE_RUNNING ||
                     input.job->state() == pb::JobProgress::STATE_QUEUED);
  // While the sweep runs the pictures are redrawn by reloading the page (no script needed for
  // the charts themselves).
  return Page(input.problem, b, live ? "setTimeout(function(){location.reload();},3000);" : "");
}

std::string TablesPage(const std::vector<WinnerLine>& winners, const std::string& nvrtc_version) {
  int stale = 0;
  for (const WinnerLine& w : winners) stale += !w.stale.empty();
  std::string b = absl::StrFormat(
      "<h1>Tables: winners held</h1>\n<p>%d winners, %d stale against this daemon (NVRTC %s, "
      "this build's kernel sources, each GPU's driver). A stale winner is still served, flagged "
      "as such.</p>\n",
      winners.size(), stale, Escape(nvrtc_version));
  if (winners.empty()) return Page("tables", b + "<p class=\"muted\">None.</p>\n");
  b += "<table><tr><th>device model</th><th>problem</th><th>winner</th><th class=\"num\">time"
       "</th><th class=\"num\">% of ref</th><th>measured</th><th>from</th><th>provenance</th>"
       "<th>staleness</th></tr>\n";
  for (const WinnerLine& line : winners) {
    const store::Winner& w = line.winner;
    const std::string problem =
        absl::StrCat(w.family, " ", FormatShape(w.shape), " ", std::string(DTypeName(w.dtype)));
    const std::string link =
        absl::StrCat("/sweep?family=", w.family, "&amp;shape=", FormatShape(w.shape),
                     "&amp;dtype=", std::string(DTypeName(w.dtype)), "&amp;model=", Escape(w.device.name));
    absl::StrAppendFormat(
        &b,
        "<tr><td>%s</td><td><a href=\"%s\">%s</a></td><td><code>%s</code></td>"
        "<td class=\"num\">%.2f us</td><td class=\"num\">%s</td><td>%s</td><td>%s</td>"
        "<td><code>source %s</code><br>driver %s · NVRTC %s</td><td>%s</td></tr>\n",
        Escape(w.device.name), link, Escape(problem), Escape(FormatParams(w.measurement.params)),
        w.measurement.timing.median_us,
        w.measurement.percent_of_reference > 0
            ? absl::StrFormat("%.1f%%", w.measurement.percent_of_reference)
            : "—",
        charts::DateText(w.measured_at_ms), w.sweep_id ? absl::StrCat("sweep ", *w.sweep_id) : "imported table",
        Escape(w.provenance.source_hash.substr(0, 12)), charts::DriverText(w.provenance.driver_version),
        Escape(w.provenance.nvrtc_version),
        line.stale.empty() ? Badge("current")
                           : absl::StrCat(Badge("stale"), " ", Escape(absl::StrJoin(line.stale, "; "))));
  }
  b += "</table>\n";
  return Page("tables", b);
}

std::string TokenPage(const std::string& reason) {
  return Page("token needed",
              absl::StrCat("<h1>A token is needed</h1>\n<p>", Escape(reason),
                           "</p>\n<form method=\"get\" action=\"/\"><label>Read token: <input "
                           "type=\"password\" name=\"token\" autocomplete=\"off\"></label> "
                           "<button>Open the dashboard</button></form>\n<p class=\"muted\">The "
                           "token is kept in a cookie for this site only; programs can send "
                           "<code>Authorization: Bearer TOKEN</code> instead.</p>\n"));
}

std::string JobsJson(const pb::ListJobsResponse& jobs) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(jobs, &out, options);
  return out;
}

}  // namespace cutune::dashboard
