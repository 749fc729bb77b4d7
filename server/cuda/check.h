// The one way cutune calls the CUDA driver: every call goes through CUTUNE_DRIVER_CALL, which turns
// its CUresult into an absl::Status naming the call, where it was made (file:line) and the
// driver's name and text for the error. The CUresult stays attached (ResultOf) so that callers can
// classify it with server/cuda/errors.h. Destructors use CUTUNE_DRIVER_CALL_NOEXCEPT instead: it
// logs a failure to stderr and goes on, because a release must never replace the error that
// brought the process there.
#pragma once

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/cuda/driver.h"

// CUTUNE_DRIVER_CALL(api, cuEventRecord, event, stream) calls api.cuEventRecord(event, stream)
// and yields OK, or INTERNAL with "cuEventRecord(event, stream) failed at executor.cc:287:
// CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered". `api` is the
// DriverApi table the call goes through (named twice: keep it a plain expression); its
// cuGetErrorName/cuGetErrorString describe the error.
#define CUTUNE_DRIVER_CALL(api, function, ...)                                             \
  ::cutune::cuda::CheckResult((api).function(__VA_ARGS__), #function "(" #__VA_ARGS__ ")", \
                              __FILE__, __LINE__, &(api))

// The same call for destructors and other cleanup: a failure is logged and otherwise ignored.
#define CUTUNE_DRIVER_CALL_NOEXCEPT(api, function, ...) \
  ::cutune::cuda::LogIfFailed(CUTUNE_DRIVER_CALL(api, function, __VA_ARGS__))

namespace cutune::cuda {

namespace internal {
absl::Status Failure(CUresult result, absl::string_view call, const char* file, int line,
                     const DriverApi* api);
}  // namespace internal

// What CUTUNE_DRIVER_CALL expands to. `api` names the error (nullptr, or a table whose lookups
// fail: the number alone).
inline absl::Status CheckResult(CUresult result, absl::string_view call, const char* file, int line,
                                const DriverApi* api) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();  // the fast path of every timed sample
  return internal::Failure(result, call, file, line, api);
}

// The CUresult a CUTUNE_DRIVER_CALL status carries: CUDA_SUCCESS when ok, CUDA_ERROR_UNKNOWN for
// a status that did not come from a driver call (a compile error, a missing cubin, ...).
CUresult ResultOf(const absl::Status& status);

// "<context>: <message>", keeping the code and the attached CUresult.
absl::Status Annotate(const absl::Status& status, absl::string_view context);

// Prints a failed status to stderr ("cutune: ... (ignored during cleanup)"); never throws.
void LogIfFailed(const absl::Status& status) noexcept;

}  // namespace cutune::cuda
