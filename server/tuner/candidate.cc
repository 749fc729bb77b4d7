#include "server/tuner/candidate.h"

#include "absl/strings/str_cat.h"

namespace cutune::tuner {

compiler::CompileRequest CandidateRequest(const kernels::KernelFamily& family, const Params& params,
                                          const Shape& shape, std::string_view arch) {
  compiler::CompileRequest request;
  request.source = std::string(family.source());
  request.source_name = absl::StrCat(std::string(family.name()), ".cu");
  request.options = CandidateOptions(family, params, shape);
  request.arch = std::string(arch);
  return request;
}

std::vector<std::string> CandidateOptions(const kernels::KernelFamily& family,
                                          const Params& params, const Shape& shape) {
  std::vector<std::string> options = family.Defines(params);
  for (std::string& define : family.ShapeDefines(params, shape)) {
    options.push_back(std::move(define));
  }
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

worker::v1::Prepare PrepareRequest(const kernels::KernelFamily& family, const Shape& shape,
                                   DType dtype, uint64_t seed) {
  worker::v1::Prepare prepare;
  prepare.set_family(std::string(family.name()));
  for (int64_t d : shape) prepare.add_shape(d);
  prepare.set_dtype(std::string(DTypeName(dtype)));
  prepare.set_seed(seed);
  return prepare;
}

worker::v1::Run RunRequest(const kernels::KernelFamily& family, const Params& params,
                           const Shape& shape, int sm_count,
                           const compiler::CompileResult& compiled,
                           const worker::v1::TimingPolicy& policy, bool verify) {
  worker::v1::Run run;
  worker::v1::Candidate* candidate = run.mutable_candidate();
  candidate->set_key(compiled.key);
  candidate->set_cubin(compiled.cubin);
  candidate->set_kernel(std::string(kernels::KernelFamily::kKernelName));
  const LaunchGeometry g = family.Geometry(params, shape, sm_count);
  worker::v1::Geometry* geometry = candidate->mutable_geometry();
  for (uint32_t v : g.grid) geometry->add_grid(v);
  for (uint32_t v : g.block) geometry->add_block(v);
  geometry->set_dynamic_shared_bytes(g.dynamic_shared_bytes);
  *run.mutable_timing() = policy;
  run.set_verify(verify);
  run.set_verify_again(verify && family.LaunchConcurrency(params) ==
                                     kernels::Concurrency::kOneModulePerStream);
  return run;
}

}  // namespace cutune::tuner
