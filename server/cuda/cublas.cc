#include "server/cuda/cublas.h"

#include <dlfcn.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cutune::cuda {

// The few entry points used, declared by hand so the build needs no cuBLAS headers. Values from
// cublas_api.h: CUBLAS_OP_N = 0, CUBLAS_DEFAULT_MATH = 0, CUBLAS_STATUS_SUCCESS = 0.
struct Cublas::Api {
  int (*create)(void** handle) = nullptr;
  int (*destroy)(void* handle) = nullptr;
  int (*set_stream)(void* handle, CUstream stream) = nullptr;
  int (*set_math_mode)(void* handle, int mode) = nullptr;
  int (*sgemm)(void* handle, int transa, int transb, int m, int n, int k, const float* alpha,
               const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
               int ldc) = nullptr;
};

absl::StatusOr<Cublas> Cublas::Create(CUstream stream) {
  static const absl::StatusOr<Cublas::Api*> api = []() -> absl::StatusOr<Cublas::Api*> {
    void* lib = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) break;
    }
    if (lib == nullptr) return absl::FailedPreconditionError("cuBLAS is not installed here");
    auto* table = new Cublas::Api;
    table->create = reinterpret_cast<decltype(table->create)>(dlsym(lib, "cublasCreate_v2"));
    table->destroy = reinterpret_cast<decltype(table->destroy)>(dlsym(lib, "cublasDestroy_v2"));
    table->set_stream =
        reinterpret_cast<decltype(table->set_stream)>(dlsym(lib, "cublasSetStream_v2"));
    table->set_math_mode =
        reinterpret_cast<decltype(table->set_math_mode)>(dlsym(lib, "cublasSetMathMode"));
    table->sgemm = reinterpret_cast<decltype(table->sgemm)>(dlsym(lib, "cublasSgemm_v2"));
    if (!table->create || !table->destroy || !table->set_stream || !table->set_math_mode ||
        !table->sgemm) {
      return absl::FailedPreconditionError("cuBLAS lacks an entry point cutune needs");
    }
    return table;
  }();
  if (!api.ok()) return api.status();
  void* handle = nullptr;
  if (int rc = (*api)->create(&handle); rc != 0) {
    return absl::InternalError(absl::StrCat("cublasCreate failed with status ", rc));
  }
  Cublas cublas(*api, handle);
  if (int rc = (*api)->set_stream(handle, stream); rc != 0) {
    return absl::InternalError(absl::StrCat("cublasSetStream failed with status ", rc));
  }
  if (int rc = (*api)->set_math_mode(handle, /*CUBLAS_DEFAULT_MATH=*/0); rc != 0) {
    return absl::InternalError(absl::StrCat("cublasSetMathMode failed with status ", rc));
  }
  return cublas;
}

Cublas::Cublas(Cublas&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), handle_(std::exchange(other.handle_, nullptr)) {}

Cublas::~Cublas() {
  if (handle_ == nullptr) return;
  // Logged, never thrown: a destructor must not replace the error that may have brought us here.
  if (int rc = api_->destroy(handle_); rc != 0) {
    std::fprintf(stderr, "cutune: cublasDestroy failed with status %d (ignored during cleanup)\n",
                 rc);
  }
}

absl::Status Cublas::Sgemm(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k) {
  // Row-major C = A*B is column-major C^T = B^T * A^T: swap the operands, no transposes.
  const float alpha = 1.0f, beta = 0.0f;
  int rc = api_->sgemm(handle_, 0, 0, n, m, k, &alpha, reinterpret_cast<const float*>(b), n,
                       reinterpret_cast<const float*>(a), k, &beta, reinterpret_cast<float*>(c), n);
  if (rc != 0) return absl::InternalError(absl::StrCat("cublasSgemm failed with status ", rc));
  return absl::OkStatus();
}

}  // namespace cutune::cuda
