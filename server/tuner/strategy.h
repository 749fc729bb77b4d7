// Search strategies: which candidates of a space a sweep evaluates, and in what order. A search
// proposes candidates (Next) and hears how each one did (Tell); the fixed-order strategies ignore
// what they hear, the local search steers by it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/family.h"
#include "kernels/space.h"

namespace cutune::tuner {

class Search {
 public:
  virtual ~Search() = default;

  // Up to `n` valid candidates not proposed or told before; none when the search is done.
  virtual std::vector<Params> Next(size_t n) = 0;
  // How a candidate went: its median time, or nullopt when it failed (compile, fault, wrong
  // answer, ...). Candidates measured earlier (a resumed sweep) may be told before any Next; the
  // search then never proposes them.
  virtual void Tell(const Params& params, std::optional<double> median_us) = 0;

  // At most how many candidates Next will still propose.
  virtual int64_t remaining() const = 0;
  // True when later proposals depend on what it was told: the sweep then compiles only a short
  // window ahead instead of every candidate at once.
  virtual bool adaptive() const = 0;
  // Combinations of the space that break a constraint.
  int64_t invalid() const { return invalid_; }

 protected:
  int64_t invalid_ = 0;
};

// The fraction of the valid candidates the local search evaluates when no budget is given: the
// design target is within 3% of the full sweep's best with at most 15% of its evaluations.
inline constexpr double kLocalSearchDefaultFraction = 0.15;

// "brute_force": every valid candidate in index order. "random": the valid candidates in a
// seeded random order (the caller's evaluation budget truncates it). "local": a seeded random
// sample of 30% of the budget, then the untried candidates that differ from the best one found so
// far in one parameter (else two), falling back to the next best and then to the random order;
// `budget` proposals (0: kLocalSearchDefaultFraction of the valid candidates, at least 1,
// counting those told before as measured). Its proposals depend on the seed and on the results
// heard before each one, so a sweep replays them exactly only with the same proposal window.
// "quick": `start` (the device model's portfolio, or the caller's list; members outside the
// space are skipped) in order, then the untried candidates one parameter away from the best
// measured so far (else two), in index order, until the best has none left (a local optimum),
// then the same around the second fastest; or until `budget` proposals (0: no limit) are made.
// The seed is not used. While members of `start` are
// still unheard, Next proposes nothing more (the descent starts from the best of all of them);
// the caller asks again after the next Tell.
// INVALID_ARGUMENT names the known strategies for any other name.
absl::StatusOr<std::unique_ptr<Search>> MakeSearch(const kernels::Space& space,
                                                   std::string_view strategy, uint64_t seed,
                                                   int64_t budget,
                                                   const std::vector<Params>& start = {});

// A space's valid candidates in index order, and how many combinations break a constraint:
// enumerated once (matmul's 1822 of 17.7 million combinations: tens of milliseconds) and shared
// by many searches.
struct ValidCandidates {
  std::vector<Params> candidates;
  int64_t invalid = 0;
};
ValidCandidates EnumerateValid(const kernels::Space& space);
// EnumerateValid of a family's default space, computed on first use and kept for the process.
const ValidCandidates& ValidOfDefaultSpace(const kernels::KernelFamily& family);
// MakeSearch over candidates enumerated before; `valid` must be EnumerateValid(space) or a
// subset of it in its order (a replay of an older recording: RecordedSubset).
absl::StatusOr<std::unique_ptr<Search>> MakeSearch(const kernels::Space& space,
                                                   const ValidCandidates& valid,
                                                   std::string_view strategy, uint64_t seed,
                                                   int64_t budget,
                                                   const std::vector<Params>& start = {});
// A search that proposes exactly `candidates`, in order (an explicit list from the caller).
std::unique_ptr<Search> ListSearch(std::vector<Params> candidates);

std::vector<std::string> StrategyNames();
// INVALID_ARGUMENT naming the known strategies unless `strategy` is one of them.
absl::Status CheckStrategy(std::string_view strategy);
// INVALID_ARGUMENT unless max_evaluations >= 0 and max_seconds is a finite number >= 0 (NaN
// compares false with everything, so what is allowed is tested, not what is not).
absl::Status CheckBudget(int64_t max_evaluations, double max_seconds);

}  // namespace cutune::tuner
