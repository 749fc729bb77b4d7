#include "server/tuner/candidate.h"

#include "absl/strings/str_cat.h"

namespace cutune::tuner {

compiler::CompileRequest CandidateRequest(const kernels::KernelFamily& family,
                                          const Params& params, std::string_view arch) {
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

}  // namespace cutune::tuner
