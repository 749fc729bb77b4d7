// Ties: two timings a noise apart, and the deterministic rule that picks one configuration among
// tied ones. The sweep (which winner it names), the store (whether a new winner replaces a stored
// one) and `cutune table diff` (whether a changed winner is a tie) all ask these, so a winner
// only changes when it is measurably faster.
#pragma once

#include <algorithm>
#include <cmath>

#include "server/core/types.h"

namespace cutune {

// A measured spread wider than this does not widen the tie band further: a noisy candidate is
// not "tied" with everything.
inline constexpr double kMaxTieBand = 0.02;

// The relative band within which two medians are a noise apart: the larger of the two measured
// spreads (stdev / mean of the samples), at most kMaxTieBand.
inline double TieBand(const TimingStats& a, const TimingStats& b) {
  const double spread = std::max(a.rel_spread, b.rel_spread);
  if (!(spread > 0)) return 0;  // also NaN
  return std::min(spread, kMaxTieBand);
}

// True when both are timed (median > 0) and their medians differ by at most the band, relative
// to the faster one.
inline bool Tied(const TimingStats& a, const TimingStats& b) {
  if (!(a.median_us > 0) || !(b.median_us > 0)) return false;
  const double faster = std::min(a.median_us, b.median_us);
  return std::fabs(a.median_us - b.median_us) <= TieBand(a, b) * faster;
}

// The canonical order among tied configurations: parameters compared by name, then value
// (numerically), the first differing one deciding.
inline bool CanonicalBefore(const Params& a, const Params& b) { return a < b; }

// Which of two tied measurements is the winner, the sweep's (tuner/winner.h) and the store's
// (store/winner_rule.h) alike: one that does not spill before one that does (timing cannot tell
// them apart here, and local memory is traffic another input or another GPU of the family may
// pay for), then CanonicalBefore.
inline bool PreferredAmongTied(const Measurement& a, const Measurement& b) {
  if (Spills(a.resources) != Spills(b.resources)) return !Spills(a.resources);
  return CanonicalBefore(a.params, b.params);
}

}  // namespace cutune
