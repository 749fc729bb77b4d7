// The one place that turns a family and a candidate's parameters into the NVRTC request that
// builds it, and the compiler's answer into what the candidate came to: the sweep, `cutune space
// compile`, the service's answers ("compile_options") and the CLI all use this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/v1/worker.pb.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"

namespace cutune::tuner {

// The request for a candidate that runs at `shape` (its Defines and ShapeDefines); an empty shape
// for a shape-free build (the cache: the aligned class of matmul).
compiler::CompileRequest CandidateRequest(const kernels::KernelFamily& family, const Params& params,
                                          const Shape& shape, std::string_view arch);

// Only the options of that request (without the source text or the architecture).
std::vector<std::string> CandidateOptions(const kernels::KernelFamily& family,
                                          const Params& params, const Shape& shape);

// What building one candidate came to, before anything runs on a GPU.
struct CompileReport {
  Params params;
  Outcome outcome = Outcome::kOk;  // kOk (compiled), kPruned or kCompileFailed
  std::string detail;              // prune reason or compiler log excerpt
  ResourceUsage resources;
  double compile_ms = 0;
  bool from_cache = false;
};

// A compiled candidate judged against `limits`: kCompileFailed with the excerpt of NVRTC's log,
// kPruned with the reason when the resources ptxas reports for the family's kernel break a limit
// (KernelFamily::PruneCompiled), else kOk. The resources, compile time and cache hit are kept
// whatever the outcome.
CompileReport ReportCompiled(const kernels::KernelFamily& family, const Params& params,
                             const compiler::CompileResult& compiled,
                             const kernels::DeviceLimits& limits);

inline constexpr size_t kLogExcerptChars = 600;

// The last kLogExcerptChars of a compiler log, after "..." where cut: NVRTC reports the last error
// at the end, and a row or a table cell has room for little more.
std::string LogExcerpt(const std::string& log);

// What a worker is asked, the one place for the sweep and the profiler: set up `shape`'s
// buffers, inputs (seeded) and reference output; and load, check (when `verify`) and time one
// compiled candidate with its launch geometry at `shape` on a GPU of `sm_count` SMs.
worker::v1::Prepare PrepareRequest(const kernels::KernelFamily& family, const Shape& shape,
                                   DType dtype, uint64_t seed);
worker::v1::Run RunRequest(const kernels::KernelFamily& family, const Params& params,
                           const Shape& shape, int sm_count,
                           const compiler::CompileResult& compiled,
                           const worker::v1::TimingPolicy& policy, bool verify);

}  // namespace cutune::tuner
