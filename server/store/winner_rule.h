// Whether a new winner for a key takes the place of the stored one. One rule for a finishing
// sweep (Store::FinishSweep) and for an import under KEEP_FASTER, so that two measurements a
// noise apart converge on one configuration instead of flipping with every run.
#pragma once

#include "server/core/types.h"

namespace cutune::store {

// For two winners of one key measured under the same provenance (a stored winner measured
// under another driver, NVRTC or space version is replaced whatever this says; that is the
// caller's check): true when `incoming` is faster than `stored` and not Tied with it
// (server/core/ties.h), or when they are Tied and `incoming` is PreferredAmongTied (one that
// does not spill, then CanonicalBefore).
bool Supersedes(const Measurement& incoming, const Measurement& stored);

}  // namespace cutune::store
