#include "server/tuner/strategy.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cutune::tuner {

std::vector<std::string> StrategyNames() { return {"brute_force", "random"}; }

absl::StatusOr<Selection> SelectCandidates(const kernels::Space& space, std::string_view strategy,
                                           uint64_t seed) {
  if (strategy != "brute_force" && strategy != "random") {
    return absl::InvalidArgumentError(absl::StrCat("unknown strategy '", std::string(strategy),
                                                   "' (known: ",
                                                   absl::StrJoin(StrategyNames(), ", "), ")"));
  }
  Selection selection;
  space.ForEachValid([&](uint64_t, const Params& params) {
    selection.candidates.push_back(params);
  });
  selection.invalid =
      static_cast<int64_t>(space.CartesianSize()) - static_cast<int64_t>(selection.candidates.size());
  if (strategy == "random") {
    std::mt19937_64 rng(seed);
    std::shuffle(selection.candidates.begin(), selection.candidates.end(), rng);
  }
  return selection;
}

}  // namespace cutune::tuner
