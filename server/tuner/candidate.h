// The one place that turns a family and a candidate's parameters into the NVRTC request that
// builds it: the sweep, the service's answers ("compile_options") and the CLI all use this.
#pragma once

#include <string_view>

#include "kernels/family.h"
#include "server/compiler/compiler.h"

namespace cutune::tuner {

compiler::CompileRequest CandidateRequest(const kernels::KernelFamily& family,
                                          const Params& params, std::string_view arch);

// Only the options of that request (without the source text or the architecture).
std::vector<std::string> CandidateOptions(const kernels::KernelFamily& family,
                                          const Params& params);

}  // namespace cutune::tuner
