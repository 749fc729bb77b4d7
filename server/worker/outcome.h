// A candidate's outcome across the daemon <-> worker protocol: one mapping both ways, used by the
// worker (executor) and the daemon's sweep.
#pragma once

#include "cutune/v1/worker.pb.h"
#include "server/core/types.h"

namespace cutune::worker {

v1::Outcome ToProto(Outcome outcome);
// OUTCOME_UNSPECIFIED (an answer that named none) counts as a fault: the run did not end well.
Outcome FromProto(v1::Outcome outcome);

}  // namespace cutune::worker
