#include "server/service/profiler.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/core/strings.h"
#include "server/profile/process.h"
#include "server/worker/outcome.h"

namespace cutune::service {
namespace {

namespace wpb = ::cutune::worker::v1;

// The last lines of a command's output, for error messages.
std::string Tail(const std::string& text, size_t lines = 12) {
  std::vector<std::string> all = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (all.size() > lines) all.erase(all.begin(), all.end() - static_cast<long>(lines));
  return absl::StrJoin(all, "\n");
}

// A private directory for the job and result files, removed with this object.
class ScratchDir {
 public:
  static absl::StatusOr<ScratchDir> Create() {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "cutune-profile-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a directory like ", pattern));
    }
    return ScratchDir(pattern);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  std::string File(std::string_view name) const { return absl::StrCat(path_, "/", ToAbsl(name)); }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace

int ProfiledLaunch(const wpb::Run& run) { return std::max(1, run.timing().warmup()); }

absl::StatusOr<ProfileRun> RunUnderNcu(const wpb::ProfileJob& job, const NcuRunOptions& options) {
  ProfileRun out;
  profile::ProcessOptions quick;
  quick.timeout = std::chrono::seconds(60);
  quick.cancel = options.cancel;
  auto version = profile::RunProcess({options.ncu, "--version"}, quick);
  if (!version.ok()) return version.status();
  std::optional<std::string> parsed = profile::ParseNcuVersion(version->output);
  if (version->exit_code != 0 || !parsed) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", options.ncu, " --version' did not say its version (exit ",
                     version->exit_code, "): ", Tail(version->output)));
  }
  out.ncu_version = *parsed;

  auto dir = ScratchDir::Create();
  if (!dir.ok()) return dir.status();
  const std::string job_path = dir->File("job.pb"), result_path = dir->File("result.pb");
  {
    std::ofstream file(job_path, std::ios::binary);
    if (!job.SerializeToOstream(&file) || !file.flush()) {
      return absl::InternalError(absl::StrCat("cannot write ", job_path));
    }
  }
  profile::ProfileTarget target;
  target.kernel = job.run().candidate().kernel();
  target.launch_skip = ProfiledLaunch(job.run());
  target.command = {options.worker, "--profile", job_path, "--result", result_path, "--device",
                    std::to_string(options.ordinal)};
  profile::ProcessOptions run_options;
  run_options.timeout = options.timeout;
  run_options.cancel = options.cancel;
  // ncu formats numbers by the locale; under C the decimal point is '.', as ParseNcuCsv expects.
  run_options.env = {"LC_ALL=C"};
  auto ran = profile::RunProcess(profile::NcuArguments(options.ncu, target), run_options);
  if (!ran.ok()) return ran.status();
  if (ran->cancelled) return absl::CancelledError("the profile was cancelled (daemon shutdown)");
  if (ran->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        "ncu did not finish within ", options.timeout.count() / 1000, " s; killed. Its output "
        "ends:\n", Tail(ran->output)));
  }
  absl::StatusOr<std::vector<profile::Metric>> metrics =
      profile::ParseNcuCsv(ran->output, target.kernel);
  std::ifstream result_file(result_path, std::ios::binary);
  if (!result_file || !out.run.ParseFromIstream(&result_file)) {
    // No verdict: the worker never finished its run (ncu refused to start it, or it failed).
    if (!metrics.ok() && !absl::IsInternal(metrics.status())) return metrics.status();
    return absl::InternalError(absl::StrCat(
        "the worker under ncu wrote no result (ncu exit ", ran->exit_code, "); output ends:\n",
        Tail(ran->output)));
  }
  if (out.run.outcome() != wpb::OUTCOME_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the candidate's run under ncu ended ",
        ToAbsl(OutcomeName(worker::FromProto(out.run.outcome()))), ": ", out.run.detail()));
  }
  if (!metrics.ok()) return metrics.status();
  out.metrics = *std::move(metrics);
  return out;
}

}  // namespace cutune::service
