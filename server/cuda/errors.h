// The one place that decides what a CUDA error means for a tuning run: whether the context that
// raised it is poisoned for good (the worker process must be replaced), only the candidate is
// rejected and the sweep goes on in the same context, or neither (an internal error).
#pragma once

#include <cuda.h>

#include <optional>

#include "server/core/types.h"

namespace cutune::cuda {

enum class ErrorClass {
  kNone,             // CUDA_SUCCESS
  kContextFatal,     // sticky: illegal address, launch failure, ... -> kill and respawn the worker
  kCandidateReject,  // e.g. too many resources requested: this candidate cannot run; go on
  kOther,            // anything else (API misuse, out of memory, ...): an internal error
};

// Where the failed call sat. A candidate's own launch, with the function attributes set just
// before it, is refused for its configuration in more ways than 701: the driver answers
// CUDA_ERROR_INVALID_VALUE for a block, grid or dynamic shared memory beyond the device's limits
// and CUDA_ERROR_OUT_OF_MEMORY for a stack it cannot back. Anywhere else those are internal.
enum class CallSite {
  kAny,
  kCandidateLaunch,
};

ErrorClass Classify(CUresult result, CallSite site = CallSite::kAny);

// The candidate outcome an error implies: kContextFatal -> kFault, kCandidateReject ->
// kOutOfResources; kNone/kOther -> nullopt (not the candidate's outcome: an internal error).
std::optional<Outcome> OutcomeForError(CUresult result, CallSite site = CallSite::kAny);

}  // namespace cutune::cuda
