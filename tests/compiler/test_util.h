// Kernel sources and helpers shared by the compiler tests.
#pragma once

#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "server/core/types.h"

namespace cutune::compiler::testing {

inline constexpr char kAddKernel[] = R"(
extern "C" __global__ void add(float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i];
}
)";

// A local array indexed at run time lives on the stack; `regs` under a small register limit
// spills.
inline constexpr char kStackAndSpillKernels[] = R"(
extern "C" __global__ void local_array(float* out, const int* idx, int n) {
  float local[256];
  for (int i = 0; i < 256; ++i) local[i] = out[i * n + threadIdx.x];
  out[threadIdx.x] = local[idx[threadIdx.x]];
}
extern "C" __global__ void regs(float* out, int n) {
  float v[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) v[i] = out[i * n + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) s += v[i] * v[j];
  out[threadIdx.x] = s;
}
)";

inline constexpr char kBrokenKernel[] = R"(
extern "C" __global__ void broken(float* a) { a[0] = undeclared_thing; }
)";

inline auto Fields(const ResourceUsage& u) {
  return std::make_tuple(u.registers, u.static_shared_bytes, u.stack_bytes, u.spill_store_bytes,
                         u.spill_load_bytes, u.constant_bytes);
}

MATCHER_P(SameUsage, expected, "") { return Fields(arg) == Fields(expected); }

MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& status = arg.status();
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

}  // namespace cutune::compiler::testing
