// Search strategies: which candidates of a space a sweep evaluates, and in what order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/space.h"

namespace cutune::tuner {

struct Selection {
  std::vector<Params> candidates;  // valid ones, in evaluation order
  int64_t invalid = 0;             // combinations that break a constraint
};

// "brute_force": every valid candidate in index order. "random": valid candidates in a seeded
// random order (truncated by the caller's evaluation budget). INVALID_ARGUMENT for others.
absl::StatusOr<Selection> SelectCandidates(const kernels::Space& space, std::string_view strategy,
                                           uint64_t seed);

std::vector<std::string> StrategyNames();

}  // namespace cutune::tuner
