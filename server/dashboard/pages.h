// The dashboard's pages as pure functions of what the daemon knows (the read RPCs' answers and
// the winners with their staleness): HTML with inline style and at most a small inline script,
// nothing fetched from the network. The route handlers in dashboard.cc gather the inputs.
#pragma once

#include <string>
#include <vector>

#include "cutune/v1/cutune.pb.h"
#include "server/store/winner.h"

namespace cutune::dashboard {

namespace pb = ::cutune::v1;

// Overview: devices (state, queue) and jobs with live progress (polls /api/jobs).
std::string OverviewPage(const std::string& version, const pb::ListDevicesResponse& devices,
                         const pb::ListJobsResponse& jobs);

// One sweep: its progress (when a job ran it) and its pictures.
struct SweepPageInput {
  std::string problem;                  // "transpose 256x256 f32"
  const pb::JobProgress* job = nullptr;  // the job that ran it, if known
  pb::ListResultsResponse results;
};
std::string SweepPage(const SweepPageInput& input);

// The winners held, with what makes each stale against this daemon (empty: current).
struct WinnerLine {
  store::Winner winner;
  std::vector<std::string> stale;  // store::StaleFields against the daemon's provenance
};
std::string TablesPage(const std::vector<WinnerLine>& winners, const std::string& nvrtc_version);

// A refused request: say why and offer a token field (a GET form: the page sets a cookie).
std::string TokenPage(const std::string& reason);

// What the overview's script polls: the jobs as JSON (the ListJobsResponse message).
std::string JobsJson(const pb::ListJobsResponse& jobs);

}  // namespace cutune::dashboard
