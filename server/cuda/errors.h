// The one place that decides what a CUDA error means for a tuning run: whether the context that
// raised it is poisoned for good (the worker process must be replaced) or only the candidate is
// rejected and the sweep goes on in the same context.
#pragma once

#include <cuda.h>

#include "server/core/types.h"

namespace cutune::cuda {

enum class ErrorClass {
  kNone,             // CUDA_SUCCESS
  kContextFatal,     // sticky: illegal address, launch failure, ... -> kill and respawn the worker
  kCandidateReject,  // e.g. too many resources requested: this candidate cannot run; go on
  kOther,            // anything else (API misuse, out of memory, ...): an internal error
};

ErrorClass Classify(CUresult result);

// The candidate outcome a launch/sync error implies. kNone/kOther map to nullopt.
std::optional<Outcome> OutcomeForError(CUresult result);

}  // namespace cutune::cuda
