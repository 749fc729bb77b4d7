#include "server/cuda/check.h"

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cutune::cuda {
namespace {

constexpr char kResultPayload[] = "cutune.cuda.CUresult";

// "server/worker/executor.cc" -> "executor.cc": messages end up in the store and on other hosts,
// where the build machine's paths mean nothing.
absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

namespace internal {

absl::Status Failure(CUresult result, absl::string_view call, const char* file, int line,
                     const DriverApi* api) {
  absl::Status status(absl::StatusCode::kInternal,
                      absl::StrCat(call, " failed at ", BaseName(file ? file : "?"), ":", line,
                                   ": ", DescribeError(result, api)));
  status.SetPayload(kResultPayload, absl::Cord(absl::StrCat(static_cast<int>(result))));
  return status;
}

}  // namespace internal

CUresult ResultOf(const absl::Status& status) {
  if (status.ok()) return CUDA_SUCCESS;
  auto payload = status.GetPayload(kResultPayload);
  int result = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &result)) return CUDA_ERROR_UNKNOWN;
  return static_cast<CUresult>(result);
}

absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status annotated(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    annotated.SetPayload(url, payload);
  });
  return annotated;
}

void LogIfFailed(const absl::Status& status) noexcept {
  if (status.ok()) return;
  // No allocation here: the message is already built, and this runs in destructors.
  const absl::string_view message = status.message();
  std::fprintf(stderr, "cutune: %.*s (ignored during cleanup)\n", static_cast<int>(message.size()),
               message.data());
}

}  // namespace cutune::cuda
