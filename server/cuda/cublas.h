// cuBLAS, loaded at run time and used only as the reference SGEMM (no tensor cores) that matmul
// results are compared with. Never a dependency of the build: a host without it simply reports
// that the reference is unavailable.
#pragma once

#include <cuda.h>

#include "absl/status/statusor.h"

namespace cutune::cuda {

class Cublas {
 public:
  // Loads libcublas and creates a handle bound to `stream` in the current context.
  static absl::StatusOr<Cublas> Create(CUstream stream);
  Cublas(Cublas&& other) noexcept;
  Cublas& operator=(Cublas&&) = delete;
  ~Cublas();

  // Row-major C[M,N] = A[M,K] * B[K,N], fp32, default math (no TF32 tensor cores).
  absl::Status Sgemm(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k);

 private:
  struct Api;
  Cublas(const Api* api, void* handle) : api_(api), handle_(handle) {}
  const Api* api_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace cutune::cuda
