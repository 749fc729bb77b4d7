// The CUDA driver API, loaded at run time from libcuda.so.1 (as the major frameworks do), so that
// every cutune binary starts on hosts without an NVIDIA driver. Only GPU requests fail there, with
// a clear "no CUDA driver" status.
#pragma once

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cutune::cuda {

// Function table of the driver entry points cutune uses. Member names are the API names; the
// loader resolves the versioned symbol each header macro points at (cuMemAlloc -> cuMemAlloc_v2).
struct DriverApi {
#define CUTUNE_DRIVER_FUNCTIONS(X)                                                                \
  X(cuInit)                                                                                       \
  X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)  \
      X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetUuid)           \
          X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)             \
              X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)    \
                  X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuMemAlloc)     \
                      X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD32) \
                          X(cuMemsetD32Async) X(cuMemcpyDtoDAsync) X(cuMemGetInfo)                \
                              X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)             \
                                  X(cuEventElapsedTime) X(cuEventDestroy) X(cuStreamCreate)       \
                                      X(cuStreamSynchronize) X(cuStreamDestroy)                   \
                                          X(cuOccupancyMaxActiveBlocksPerMultiprocessor)          \
                                              X(cuCtxGetCurrent) X(cuCtxGetDevice)                \
                                                  X(cuPointerGetAttribute) X(cuMemHostAlloc)      \
                                                      X(cuMemFreeHost)                            \
                                                          X(cuMemHostGetDevicePointer)            \
                                                              X(cuStreamWaitValue32)
#define CUTUNE_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  CUTUNE_DRIVER_FUNCTIONS(CUTUNE_DECLARE_MEMBER)
#undef CUTUNE_DECLARE_MEMBER
};

// The process-wide driver table, loaded and cuInit()ed on first use. On a host without a driver
// (or without a device) this returns FAILED_PRECONDITION with a message saying so; the result is
// cached, so asking again is cheap.
absl::StatusOr<const DriverApi*> Driver();

// Loads from an explicit library path (tests use a path that does not exist).
absl::StatusOr<DriverApi> LoadDriver(const std::string& library);

// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered", with the strings
// of `api` (cuGetErrorName/cuGetErrorString). Where there is no table, or a lookup fails (an
// unknown number, a driver too old to know it), the number alone: "CUDA error (12345)".
std::string DescribeError(CUresult result, const DriverApi* api);

}  // namespace cutune::cuda
