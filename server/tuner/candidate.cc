#include "server/tuner/candidate.h"

#include "absl/strings/str_cat.h"

namespace cutune::tuner {

compiler::CompileRequest CandidateRequest(const kernels::KernelFamily& family, const Params& params,
                                          std::string_view arch) {
  compiler::CompileRequest request;
  request.source = std::string(family.source());
  request.source_name = absl::StrCat(std::string(family.name()), ".cu");
  request.options = CandidateOptions(family, params);
  request.arch = std::string(arch);
  return request;
}

std::vector<std::string> CandidateOptions(const kernels::KernelFamily& family,
                                          const Params& params) {
  std::vector<std::string> options = family.Defines(params);
  options.push_back("--std=c++17");
  return options;
}

CompileReport ReportCompiled(const kernels::KernelFamily& family, const Params& params,
                             const compiler::CompileResult& compiled,
                             const kernels::DeviceLimits& limits) {
  CompileReport report;
  report.params = params;
  report.compile_ms = compiled.compile_ms;
  report.from_cache = compiled.from_cache;
  auto resources = compiled.resources.find(std::string(kernels::KernelFamily::kKernelName));
  if (resources != compiled.resources.end()) report.resources = resources->second;
  if (!compiled.ok) {
    report.outcome = Outcome::kCompileFailed;
    report.detail = LogExcerpt(compiled.log);
  } else if (auto why = family.PruneCompiled(params, report.resources, limits)) {
    report.outcome = Outcome::kPruned;
    report.detail = *std::move(why);
  }
  return report;
}

std::string LogExcerpt(const std::string& log) {
  if (log.size() <= kLogExcerptChars) return log;
  return absl::StrCat("...", log.substr(log.size() - kLogExcerptChars));
}

}  // namespace cutune::tuner
