#include "server/dashboard/dashboard.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kernels/family.h"
#include "server/core/strings.h"
#include "server/dashboard/pages.h"
#include "server/store/ladder.h"

namespace cutune::dashboard {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";
// Pages draw nothing from the network: inline style and script only, images as inline SVG,
// scripts may call back to this server alone.
constexpr char kPolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

http::Response Html(int status, std::string body) {
  http::Response r{status, kHtml, std::move(body), {}};
  r.headers = {{"Content-Security-Policy", kPolicy},
               {"Cache-Control", "no-store"},
               {"X-Content-Type-Options", "nosniff"}};
  return r;
}

// A query value as it goes back into a Location header: unreserved characters as they are,
// everything else percent-encoded (so no value can end the header or start another).
std::string Encoded(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "%", absl::AsciiStrToUpper(absl::StrCat(absl::Hex(c, absl::kZeroPad2))));
    }
  }
  return out;
}

// A token fit for a cookie value: printable ASCII without space, quote, comma, semicolon or
// backslash (RFC 6265's cookie-octet). Tokens from token files are; a request's may not be.
bool CookieSafe(std::string_view token) {
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\') return false;
  }
  return !token.empty();
}

http::Response Text(int status, std::string body) {
  http::Response r{status, "text/plain; charset=utf-8", std::move(body) + "\n", {}};
  r.headers = {{"Cache-Control", "no-store"}};
  return r;
}

}  // namespace

Dashboard::Dashboard(const service::TunerService& service, store::Store& store,
                     std::string version, bool secure)
    : service_(service), store_(store), version_(std::move(version)), secure_(secure) {}

void Dashboard::AddRoutes(http::Server& server) const {
  // A page opened with ?token=: keep the token in a cookie and show the page without it in the
  // address (nor in the browser's history).
  auto page = [this](http::Response (Dashboard::*handler)(const http::Request&) const) {
    return [this, handler](const http::Request& request) {
      if (auto it = request.query.find("token"); it != request.query.end()) {
        if (!CookieSafe(it->second)) return Text(400, "token: not a token (printable ASCII only)");
        std::string rest;
        for (const auto& [name, value] : request.query) {
          if (name == "token") continue;
          absl::StrAppend(&rest, rest.empty() ? "?" : "&", Encoded(name), "=", Encoded(value));
        }
        http::Response r = Text(303, "see the page without the token");
        r.headers.push_back({"Location", request.path + rest});
        r.headers.push_back(
            {"Set-Cookie", absl::StrCat(http::kTokenCookie, "=", it->second,
                                        "; Path=/; HttpOnly; SameSite=Strict",
                                        secure_ ? "; Secure" : "")});
        return r;
      }
      return (this->*handler)(request);
    };
  };
  server.Route("/", page(&Dashboard::Overview));
  server.Route("/sweep", page(&Dashboard::Sweep));
  server.Route("/tables", page(&Dashboard::Tables));
  server.Route("/api/jobs", page(&Dashboard::JobsApi));
}

http::Response Dashboard::Refusal(const http::Request& request, const absl::Status& why) {
  if (request.path == "/metrics" || request.path.starts_with("/api/")) {
    return Text(0, std::string(why.message()));
  }
  return Html(0, TokenPage(std::string(why.message())));
}

http::Response Dashboard::Overview(const http::Request&) const {
  return Html(200, OverviewPage(version_, service_.Devices(), service_.Jobs()));
}

http::Response Dashboard::JobsApi(const http::Request&) const {
  http::Response r = Text(200, JobsJson(service_.Jobs()));
  r.content_type = "application/json";
  return r;
}

http::Response Dashboard::Sweep(const http::Request& request) const {
  SweepPageInput input;
  pb::ListResultsRequest query;
  const pb::ListJobsResponse jobs = service_.Jobs();
  auto arg = [&](const std::string& name) -> std::string {
    auto it = request.query.find(name);
    return it == request.query.end() ? "" : it->second;
  };
  if (!arg("job").empty()) {
    query.set_job_id(arg("job"));
    for (const pb::JobProgress& job : jobs.jobs()) {
      if (job.job_id() == query.job_id()) input.job = &job;
    }
    if (input.job == nullptr) return Html(404, TokenPage("no such job on this daemon"));
    *query.mutable_problem() = input.job->problem();
  } else {
    query.mutable_problem()->set_family(arg("family"));
    for (absl::string_view part : absl::StrSplit(arg("shape"), 'x', absl::SkipEmpty())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(part, &v)) return Text(400, "shape: numbers joined by 'x'");
      query.mutable_problem()->add_shape(v);
    }
    query.mutable_problem()->set_dtype(arg("dtype").empty() ? "f32" : arg("dtype"));
    if (!arg("model").empty()) query.mutable_device()->set_model(arg("model"));
  }
  auto results = service_.Results(&query);
  if (!results.ok()) {
    return Text(results.status().code() == absl::StatusCode::kNotFound ? 404 : 400,
                std::string(ToStd(results.status().message())));
  }
  const pb::Problem& p = query.problem();
  input.problem = absl::StrCat(p.family(), " ", absl::StrJoin(p.shape(), "x"), " ", p.dtype());
  input.results = *std::move(results);
  return Html(200, SweepPage(input));
}

http::Response Dashboard::Tables(const http::Request&) const {
  auto winners = store_.ListWinners("");
  if (!winners.ok()) return Text(500, std::string(ToStd(winners.status().message())));
  const pb::ListDevicesResponse devices = service_.Devices();
  std::vector<WinnerLine> lines;
  for (store::Winner& w : *winners) {
    // This daemon's provenance for the winner's key, as a lookup would compare it: the driver
    // of a GPU of that model here (none: not compared), this NVRTC and this build's source.
    Provenance current;
    current.nvrtc_version = devices.nvrtc_version();
    for (const pb::Device& d : devices.devices()) {
      if (d.name() == w.device.name) current.driver_version = d.driver_version();
    }
    if (const kernels::KernelFamily* family = kernels::FindFamily(w.family)) {
      current.source_hash = family->source_hash();
    }
    std::vector<std::string> stale = store::StaleFields(w.provenance, current);
    lines.push_back({std::move(w), std::move(stale)});
  }
  std::sort(lines.begin(), lines.end(), [](const WinnerLine& a, const WinnerLine& b) {
    return std::tie(a.winner.device.name, a.winner.family, a.winner.shape) <
           std::tie(b.winner.device.name, b.winner.family, b.winner.shape);
  });
  return Html(200, TablesPage(lines, devices.nvrtc_version()));
}

}  // namespace cutune::dashboard
