// Replaying a search against a recorded sweep: every candidate's measured time, read from a CSV
// file (bench/data/), stands in for the GPU, so strategies can be compared offline, fast and
// deterministically, on real measurements.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/space.h"
#include "server/tuner/strategy.h"

namespace cutune::tuner {

// Times by FormatParams key; nullopt for a candidate that failed.
struct RecordedSweep {
  std::map<std::string, std::optional<double>> times;
  std::optional<double> best_us;  // the fastest recorded time
};

// Reads a recorded sweep: '#' comment lines, a header of parameter names ending in `time_us`,
// then one row of integers and a time (empty: failed) per candidate. INVALID_ARGUMENT with the
// line number for anything else; NOT_FOUND for a missing file. With `space`, a parameter the
// header does not name but the space gives an `absent` value (added since the recording) is set
// to that value in every candidate, so the recording names them as the space does.
absl::StatusOr<RecordedSweep> LoadRecordedSweep(const std::string& path,
                                                const kernels::Space* space = nullptr);

// The candidates of `valid` (in its order) that `recorded` measured: a recording of an older,
// smaller version of the space replays over what it holds, so strategies can still be
// compared on it (a newer space's added candidates are simply not there).
ValidCandidates RecordedSubset(const ValidCandidates& valid, const RecordedSweep& recorded);

struct ReplayResult {
  std::optional<double> best_us;  // fastest candidate the search evaluated
  int64_t evaluations = 0;
};

// Runs `strategy` over `space` (whose valid candidates are `valid`) with the sweep's proposal
// window (`window` candidates proposed before their results are known), answering from `recorded`.
// FAILED_PRECONDITION when the search proposes a candidate the recording lacks (a recording of
// another space version).
// `start`: quick's starting set (MakeSearch).
absl::StatusOr<ReplayResult> Replay(const kernels::Space& space, const ValidCandidates& valid,
                                    const RecordedSweep& recorded, const std::string& strategy,
                                    uint64_t seed, int64_t budget, size_t window,
                                    const std::vector<Params>& start = {});

}  // namespace cutune::tuner
