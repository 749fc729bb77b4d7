#include "tests/tuner/fault_family.h"

#include "absl/strings/str_cat.h"

namespace cutune::testing {
namespace {

constexpr char kSource[] = R"cuda(
#if CT_MODE == 6
__device__ unsigned int blocks_started;  // over every launch of the module
#endif
extern "C" __global__ void cutune_kernel(const float* __restrict__ in, float* __restrict__ out,
                                         int rows, int cols) {
  const long long n = (long long)rows * cols;
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;  // output index
#if CT_MODE == 2
  if (i == 0) *(volatile float*)16 = 1.0f;  // far outside any allocation
#elif CT_MODE == 3
  // A volatile global read the compiler cannot hoist: the inputs are never NaN, so this never
  // ends.
  const volatile float* probe = in;
  while (probe[0] == probe[0]) {
  }
#endif
  if (i >= n) return;
  const long long r = i % rows, c = i / rows;  // out is cols x rows
#if CT_MODE == 4
  // ~200 values live at once: far more registers than 1024 threads per block may have.
  float acc[200];
#pragma unroll
  for (int k = 0; k < 200; ++k) acc[k] = in[(i + 977LL * k) % n];
  float s = 0;
#pragma unroll
  for (int rep = 0; rep < 3; ++rep) {
#pragma unroll
    for (int k = 0; k < 200; ++k) s = s * acc[k] + acc[(7 * k + rep) % 200];
  }
  out[i] = s;
#elif CT_MODE == 5
  out[i] = in[i];  // a copy, not a transpose
#elif CT_MODE == 6
  // Every block of the first launch starts before gridDim.x blocks have: a transpose; later
  // launches copy.
  __shared__ unsigned int started;
  if (threadIdx.x == 0) started = atomicAdd(&blocks_started, 1u);
  __syncthreads();
  out[i] = started < gridDim.x ? in[r * cols + c] : in[i];
#else
#if CT_MODE == 1
  const long long start = clock64();
  while (clock64() - start < 20000) {
  }
#endif
  out[i] = in[r * cols + c];
#endif
}
)cuda";

class FaultFamilyImpl final : public kernels::KernelFamily {
 public:
  FaultFamilyImpl()
      : base_(kernels::TransposeFamily()),
        space_({{"mode",
                 {kFast, kSlow, kIllegalAddress, kHang, kTooManyRegisters, kWrongAnswer,
                  kWrongAfterFirstLaunch},
                 "how the candidate misbehaves"}},
               {}) {}

  std::string_view name() const override { return base_.name(); }
  std::string_view description() const override { return "fault injection (tests only)"; }
  std::vector<std::string> dims() const override { return base_.dims(); }
  std::string_view source() const override { return kSource; }
  int space_version() const override { return 1; }
  const kernels::Space& default_space() const override { return space_; }
  Params baseline() const override { return {{"mode", kFast}}; }
  std::vector<std::string> Defines(const Params& params) const override {
    return {absl::StrCat("-DCT_MODE=", params.at("mode"))};
  }
  // Claims 256 threads even for the register-hungry mode, so that only the launch can refuse it.
  int64_t ThreadsPerBlock(const Params&) const override { return 256; }
  int64_t SharedBytes(const Params&) const override { return 0; }
  absl::Status ValidateShape(const Shape& shape) const override {
    return base_.ValidateShape(shape);
  }
  LaunchGeometry Geometry(const Params& params, const Shape& shape,
                          int /*sm_count*/) const override {
    const uint32_t block = params.at("mode") == kTooManyRegisters ? 1024 : 256;
    const int64_t n = shape[0] * shape[1];
    LaunchGeometry g;
    g.block = {block, 1, 1};
    g.grid = {static_cast<uint32_t>((n + block - 1) / block), 1, 1};
    return g;
  }
  LaunchGeometry ReferenceGeometry(const Shape& shape) const override {
    return base_.ReferenceGeometry(shape);
  }
  double BytesMoved(const Shape& shape) const override { return base_.BytesMoved(shape); }
  double Flops(const Shape& shape) const override { return base_.Flops(shape); }
  bool memory_bound() const override { return base_.memory_bound(); }
  std::vector<kernels::KernelArgument> Arguments() const override { return base_.Arguments(); }
  kernels::Verification verification() const override { return base_.verification(); }
  kernels::Concurrency LaunchConcurrency(const Params& params) const override {
    return params.at("mode") == kWrongAfterFirstLaunch ? kernels::Concurrency::kOneModulePerStream
                                                       : kernels::Concurrency::kAny;
  }

 private:
  const kernels::KernelFamily& base_;
  kernels::Space space_;
};

}  // namespace

const kernels::KernelFamily& FaultFamily() {
  static const FaultFamilyImpl* const family = new FaultFamilyImpl();
  return *family;
}

}  // namespace cutune::testing
