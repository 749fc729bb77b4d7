// Compiling a whole space without a GPU: every valid candidate is pruned against an
// architecture's limits or compiled on the pool, and reported with its resources. Backs
// `cutune space compile` and the test that every default candidate builds.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/family.h"
#include "server/compiler/pool.h"
#include "server/tuner/candidate.h"  // CompileReport

namespace cutune::tuner {

struct SpaceCompilation {
  std::string arch;
  uint64_t cartesian = 0;
  int64_t invalid = 0;  // combinations breaking a constraint (not compiled, not reported)
  std::vector<CompileReport> candidates;
  double wall_seconds = 0;
};

// `shape`: the candidates as they run there (KernelFamily::ShapeDefines); empty: shape-free.
absl::StatusOr<SpaceCompilation> CompileSpace(
    const kernels::KernelFamily& family, const kernels::Space& space, std::string_view arch,
    const Shape& shape, compiler::CompilePool& pool,
    const std::function<void(const CompileReport&, size_t done, size_t total)>& on_done = {});

}  // namespace cutune::tuner
