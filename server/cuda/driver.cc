#include "server/cuda/driver.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "server/cuda/check.h"

namespace cutune::cuda {
namespace {

// Expands a header macro first: CUTUNE_SYMBOL(cuMemAlloc) is "cuMemAlloc_v2".
#define CUTUNE_STRINGIFY_(x) #x
#define CUTUNE_SYMBOL(x) CUTUNE_STRINGIFY_(x)

}  // namespace

absl::StatusOr<DriverApi> LoadDriver(const std::string& library) {
  // Deliberately never dlclose()d: the driver stays for the life of the process.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA driver on this host: cannot load ", library, " (", why ? why : "unknown", ")"));
  }
  DriverApi api;
#define CUTUNE_RESOLVE(name)                                                                  \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, CUTUNE_SYMBOL(name)));       \
  if (api.name == nullptr) {                                                                  \
    return absl::FailedPreconditionError(absl::StrCat("the CUDA driver in ", library,        \
                                                      " lacks " CUTUNE_SYMBOL(name)          \
                                                      "; it is older than cutune needs"));   \
  }
  CUTUNE_DRIVER_FUNCTIONS(CUTUNE_RESOLVE)
#undef CUTUNE_RESOLVE
  return api;
}

absl::StatusOr<const DriverApi*> Driver() {
  static const absl::StatusOr<DriverApi>* const loaded = [] {
    auto* result = new absl::StatusOr<DriverApi>(LoadDriver("libcuda.so.1"));
    if (result->ok()) {
      if (auto s = CUTUNE_DRIVER_CALL(**result, cuInit, 0); !s.ok()) {
        *result =
            absl::FailedPreconditionError(absl::StrCat("no usable CUDA device: ", s.message()));
      }
    }
    return result;
  }();
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

std::string DescribeError(CUresult result, const DriverApi* api) {
  // The lookups fail too (CUDA_ERROR_INVALID_VALUE for a number this driver does not know), and
  // then leave the pointer unset or null: only a successful answer is used.
  const char* name = nullptr;
  const char* text = nullptr;
  if (api != nullptr && api->cuGetErrorName != nullptr &&
      api->cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (api != nullptr && api->cuGetErrorString != nullptr &&
      api->cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  return absl::StrCat(name != nullptr ? name : "CUDA error", " (", static_cast<int>(result), ")",
                      text != nullptr ? absl::StrCat(": ", text) : "");
}

}  // namespace cutune::cuda
