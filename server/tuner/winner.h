// The winner a sweep names. Its rows are ranked by median time; after the fastest few (the
// finalists) are re-measured, the rows tied with the fastest (server/core/ties.h) are one result
// within the noise, and the first of them by PreferredAmongTied (one that does not spill, then
// CanonicalBefore) is the winner, so that repeated sweeps and other machines name the same
// configuration where timing cannot tell.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "server/core/types.h"

namespace cutune::tuner {

// The order a sweep ranks rows in: the lower median first, equal medians by parameter text, so
// that the ranking is the same on every run.
bool RanksBefore(const Measurement& a, const Measurement& b);

struct WinnerChoice {
  std::optional<size_t> winner;  // index into rows: the PreferredAmongTied-first of `tied`
  std::vector<size_t> tied;      // indices into rows tied with the fastest, the winner among them
};

// Among `finalists` (indices of ok rows; any other row is passed over), the fastest by
// RanksBefore is tied with itself, and so is every finalist listed in `remeasured` whose timing is
// Tied with the fastest's, when the fastest was re-measured too: only re-measured rows can tie,
// since a row timed once is not comparable with rows timed again. `tied` is in row order; no ok
// finalist: no winner and nothing tied.
WinnerChoice ChooseWinner(const std::vector<Measurement>& rows,
                          const std::vector<size_t>& finalists,
                          const std::vector<size_t>& remeasured);

// The ok rows outside `finalists` that rank before the fastest finalist (RanksBefore) once the
// finalists have been re-measured, in ranking order, at most `room` of them. The fastest first
// times of a sweep are biased low (the luckiest of many single measurements, and re-measurement
// on H200 puts small kernels up to ~4% above their first time), so a row timed once that looks
// faster than the re-measured winner must be re-measured before the winner is named; a sweep
// repeats this until there are none or no room is left.
std::vector<size_t> Challengers(const std::vector<Measurement>& rows,
                                const std::vector<size_t>& finalists, size_t room);

}  // namespace cutune::tuner
