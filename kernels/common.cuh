// What the kernel sources (kernels/matmul.cu, kernels/transpose.cu) share: the __launch_bounds__
// rule for a candidate's block size and minimum blocks per SM, and small device helpers.
//
// NVRTC sees no file system: kernels/embed.cmake writes this file's text in place of the
// `#include "common.cuh"` line of each source it embeds, so every family's source() (what NVRTC
// compiles, what clients receive, what source_hash() covers) holds it. nvcc finds it next to the
// including file.
//
// Include it after defining CT_THREADS (threads per block) and CT_MINB.
#ifndef CUTUNE_KERNELS_COMMON_CUH_
#define CUTUNE_KERNELS_COMMON_CUH_

#if !defined(CT_THREADS) || !defined(CT_MINB)
#error "define CT_THREADS and CT_MINB before including common.cuh"
#endif

// minb=0 means no minimum. Blocks over 256 threads still tell ptxas their size, since they
// cannot have 255 registers per thread; smaller ones carry no bounds, because with bounds ptxas
// trades registers for occupancy on its own and may spill.
#if CT_MINB > 0
#define CT_BOUNDS __launch_bounds__(CT_THREADS, CT_MINB)
#elif CT_THREADS > 256
#define CT_BOUNDS __launch_bounds__(CT_THREADS)
#else
#define CT_BOUNDS
#endif

namespace {

// a / kDivisor rounded up, for a >= 0 (tile and step counts). The divisor, always a tile constant
// here, is a template argument: a run-time one, though constant once inlined, made NVVM simplify a
// loop bound differently (other SASS for some matmul candidates). A template, like IsAligned, is
// also no "declared but never referenced" warning in a source that does not use it.
template <int kDivisor>
__host__ __device__ __forceinline__ constexpr int CeilDiv(int a) {
  return (a + kDivisor - 1) / kDivisor;
}

// Whether `p` is a multiple of kBytes (a power of two), e.g. 16 for float4 accesses.
template <unsigned long long kBytes>
__device__ __forceinline__ bool IsAligned(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & (kBytes - 1)) == 0;
}

}  // namespace

#endif  // CUTUNE_KERNELS_COMMON_CUH_
