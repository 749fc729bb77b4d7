#include "server/profile/ncu.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/core/strings.h"

namespace cutune::profile {

namespace {

constexpr std::string_view kToolkitNcu = "/usr/local/cuda/bin/ncu";

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

absl::Status NotFound(const std::vector<std::string>& looked) {
  return absl::FailedPreconditionError(
      absl::StrCat("Nsight Compute (ncu) not found: looked at ", absl::StrJoin(looked, ", "),
                   "; install Nsight Compute (it comes with the CUDA toolkit) or name it with "
                   "cutuned --ncu PATH"));
}

// The last `lines` lines of `text`, for error messages.
std::string Tail(std::string_view text, size_t lines = 8) {
  std::vector<absl::string_view> all = absl::StrSplit(ToAbsl(text), '\n', absl::SkipWhitespace());
  if (all.size() > lines) all.erase(all.begin(), all.end() - static_cast<long>(lines));
  return absl::StrJoin(all, "\n");
}

}  // namespace

const MetricSpec* FindMetric(std::string_view name) {
  for (const MetricSpec& spec : kMetrics) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

absl::StatusOr<std::string> FindNcu(std::string_view flag) {
  const char* path = std::getenv("PATH");
  return FindNcu(flag, std::getenv("CUTUNE_NCU"), path ? path : "", IsExecutableFile);
}

absl::StatusOr<std::string> FindNcu(std::string_view flag, const char* env_ncu,
                                    std::string_view path_env,
                                    const std::function<bool(const std::string&)>& executable) {
  // An explicit choice is final: falling back would profile with a tool nobody asked for.
  if (!flag.empty()) {
    if (executable(std::string(flag))) return std::string(flag);
    return NotFound({absl::StrCat(ToAbsl(flag), " (--ncu)")});
  }
  if (env_ncu != nullptr && *env_ncu != '\0') {
    if (executable(env_ncu)) return std::string(env_ncu);
    return NotFound({absl::StrCat(env_ncu, " ($CUTUNE_NCU)")});
  }
  std::vector<std::string> looked = {std::string(kToolkitNcu)};
  if (executable(std::string(kToolkitNcu))) return std::string(kToolkitNcu);
  for (absl::string_view dir : absl::StrSplit(ToAbsl(path_env), ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/ncu");
    if (executable(candidate)) return candidate;
  }
  looked.push_back(path_env.empty() ? "$PATH (empty)"
                                    : absl::StrCat("$PATH (", ToAbsl(path_env), ")"));
  return NotFound(looked);
}

std::vector<std::string> NcuArguments(const std::string& ncu, const ProfileTarget& target) {
  std::vector<std::string> metrics;
  for (const MetricSpec& spec : kMetrics) metrics.emplace_back(spec.name);
  std::vector<std::string> argv = {ncu,
                                   "--csv",
                                   "--page",
                                   "details",
                                   "--print-units",
                                   "base",
                                   "--metrics",
                                   absl::StrJoin(metrics, ","),
                                   "--kernel-name",
                                   target.kernel,
                                   "--launch-skip",
                                   std::to_string(target.launch_skip),
                                   "--launch-count",
                                   "1",
                                   "--target-processes",
                                   "all"};
  argv.insert(argv.end(), target.command.begin(), target.command.end());
  return argv;
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::optional<double> ParseNcuNumber(std::string_view text) {
  std::string digits;
  for (char c : absl::StripAsciiWhitespace(ToAbsl(text))) {
    if (c != ',') digits += c;  // thousands separators (the decimal point is '.' under LC_ALL=C)
  }
  double value = 0;
  if (digits.empty() || !absl::SimpleAtod(digits, &value)) return std::nullopt;
  return value;
}

absl::StatusOr<std::vector<Metric>> ParseNcuCsv(std::string_view output, std::string_view kernel) {
  std::vector<absl::string_view> lines = absl::StrSplit(ToAbsl(output), '\n');
  for (absl::string_view line : lines) {
    if (!absl::StartsWith(line, "==ERROR==")) continue;
    if (absl::StrContains(line, "ERR_NVGPUCTRPERM")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): run cutuned as "
          "root, or allow every user with the nvidia module option "
          "NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM); "
          "ncu said: ",
          absl::StripAsciiWhitespace(line)));
    }
    return absl::InternalError(
        absl::StrCat("ncu failed: ", absl::StripAsciiWhitespace(line)));
  }
  int name_col = -1, unit_col = -1, value_col = -1, kernel_col = -1;
  std::vector<Metric> metrics;
  for (absl::string_view line : lines) {
    if (!absl::StartsWith(line, "\"")) continue;  // ==PROF== lines, the target's own output
    std::vector<std::string> fields = SplitCsvLine(ToStd(line));
    if (name_col < 0) {
      for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
        if (fields[i] == "Metric Name") name_col = i;
        if (fields[i] == "Metric Unit") unit_col = i;
        if (fields[i] == "Metric Value") value_col = i;
        if (fields[i] == "Kernel Name") kernel_col = i;
      }
      if (name_col < 0 || value_col < 0) name_col = -1;  // not the header: keep looking
      continue;
    }
    const int needed = std::max({name_col, unit_col, value_col, kernel_col});
    if (static_cast<int>(fields.size()) <= needed) continue;
    // Kernel names are printed demangled, with their parameter list for C++ names.
    if (kernel_col >= 0 && !kernel.empty() && !absl::StartsWith(fields[kernel_col], ToAbsl(kernel))) {
      continue;
    }
    if (FindMetric(fields[name_col]) == nullptr) continue;
    std::optional<double> value = ParseNcuNumber(fields[value_col]);
    if (!value) continue;  // "n/a": not collected on this GPU
    metrics.push_back({fields[name_col], *value, unit_col >= 0 ? fields[unit_col] : ""});
  }
  if (metrics.empty()) {
    if (absl::StrContains(ToAbsl(output), "No kernels were profiled")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ncu profiled no launch of ", ToAbsl(kernel),
          " (the candidate did not reach its timed launch?); ncu said:\n", Tail(output)));
    }
    return absl::InternalError(absl::StrCat("ncu printed none of the metrics asked for; its "
                                            "output ends:\n",
                                            Tail(output)));
  }
  return metrics;
}

std::optional<std::string> ParseNcuVersion(std::string_view output) {
  for (absl::string_view line : absl::StrSplit(ToAbsl(output), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, "Version ")) continue;
    absl::string_view rest = line.substr(8);
    absl::string_view version = rest.substr(0, rest.find(' '));
    if (!version.empty()) return std::string(version);
  }
  return std::nullopt;
}

}  // namespace cutune::profile
