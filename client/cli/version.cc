// `cutune --version`: this CLI's release and, when a daemon answers GetServerInfo within a short
// deadline, the daemon's release, API level and what the caller may do there. A daemon that
// does not answer is a one-line note, never an error: the CLI's own version is what was asked.
#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/render.h"
#include "server/core/strings.h"
#include "server/core/version.h"

namespace cutune::cli {
namespace {

// Long enough for a daemon on this host or this network, short enough not to stall a script.
constexpr std::chrono::seconds kProbeDeadline{2};

}  // namespace

std::string DescribeServer(const std::string& target, const pb::GetServerInfoResponse& info) {
  std::string out = absl::StrCat("cutuned ", info.version(), " at ", target, ": API level ",
                                 info.api_level());
  if (info.api_level() != kApiLevel) absl::StrAppend(&out, " (this cutune: ", kApiLevel, ")");
  absl::StrAppend(&out, ", role ", EnumLabel(info.role()),
                  info.tokens_required() ? "" : " (no tokens required)", ", ");
  if (info.gpu_count() == 0) {
    absl::StrAppend(&out, "no GPU (serves tables)");
  } else {
    absl::StrAppend(&out, info.gpu_count(), info.gpu_count() == 1 ? " GPU" : " GPUs");
  }
  return out;
}

void AddVersionFlag(CLI::App& app, bool& asked, client::ConnectionOptions& connection) {
  connection.deadline = kProbeDeadline;
  app.add_flag("--version", asked,
               "Print cutune's version and, when the daemon answers, its version and API level");
}

int PrintVersion(const client::ConnectionOptions& options) {
  std::cout << "cutune " << Version() << "\n" << std::flush;
  auto opened = client::Connection::Open(options);
  if (!opened.ok()) return ReportError(opened.status());  // bad TLS files: a usage error
  client::Connection& connection = **opened;
  pb::GetServerInfoResponse info;
  absl::Status status = connection.Call(&pb::Tuner::Stub::GetServerInfo, {}, &info);
  if (status.ok()) {
    std::cout << DescribeServer(connection.target(), info) << "\n";
  } else if (absl::IsUnimplemented(status)) {
    std::cout << "cutuned at " << connection.target() << ": API level 0 (it has no GetServerInfo; "
              << "this cutune: " << kApiLevel << ")\n";
  } else {
    std::cerr << "note: no daemon version: " << absl::StatusCodeToString(status.code()) << ": "
              << OneLine(ToStd(status.message())) << "\n";
  }
  return kExitOk;
}

}  // namespace cutune::cli
