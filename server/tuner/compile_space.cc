#include "server/tuner/compile_space.h"

#include <chrono>
#include <future>

namespace cutune::tuner {

absl::StatusOr<SpaceCompilation> CompileSpace(
    const kernels::KernelFamily& family, const kernels::Space& space, std::string_view arch,
    const Shape& shape, compiler::CompilePool& pool,
    const std::function<void(const CompileReport&, size_t, size_t)>& on_done) {
  const auto began = std::chrono::steady_clock::now();
  if (auto s = compiler::ValidateArch(arch); !s.ok()) return s;
  if (!shape.empty()) {
    if (auto s = family.ValidateShape(shape); !s.ok()) return s;
  }
  auto limits = kernels::DeviceLimits::ForArch(arch);
  if (!limits.ok()) return limits.status();

  SpaceCompilation out;
  out.arch = std::string(arch);
  out.cartesian = space.CartesianSize();
  std::vector<std::future<absl::StatusOr<compiler::CompileResult>>> futures;
  space.ForEachValid([&](uint64_t, const Params& params) {
    CompileReport report;
    report.params = params;
    if (auto why = family.PruneForDevice(params, *limits)) {
      report.outcome = Outcome::kPruned;
      report.detail = *why;
      futures.emplace_back();
    } else {
      futures.push_back(pool.Submit(CandidateRequest(family, params, shape, arch)));
    }
    out.candidates.push_back(std::move(report));
  });
  out.invalid = static_cast<int64_t>(out.cartesian) - static_cast<int64_t>(out.candidates.size());

  for (size_t i = 0; i < out.candidates.size(); ++i) {
    CompileReport& report = out.candidates[i];
    if (futures[i].valid()) {
      auto compiled = futures[i].get();
      if (!compiled.ok()) return compiled.status();
      report = ReportCompiled(family, report.params, *compiled, *limits);
    }
    if (on_done) on_done(report, i + 1, out.candidates.size());
  }
  out.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

}  // namespace cutune::tuner
