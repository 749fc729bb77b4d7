// Lab only (session 4): transpose whose loads bypass L1: cp.async.cg (LDGSTS.BYPASS) puts each
// 16-byte chunk of the 64x64 input tile straight into shared memory (XOR-swizzled chunks);
// the store phase gathers 4 input rows of one column per float4 output. Interior shapes only.
//   CT_ROWS   block rows of 16 threads (8: 128 threads)
//   CT_XSMEM  extra static shared bytes (fewer blocks per SM)
//   CT_STAGE  1: load via registers instead (same layout; isolates the cp.async path)
#ifndef CT_ROWS
#define CT_ROWS 8
#endif
#ifndef CT_XSMEM
#define CT_XSMEM 0
#endif
#ifndef CT_STAGE
#define CT_STAGE 0
#endif
#ifndef CT_MINB
#define CT_MINB 0
#endif
#define T 64
#define THREADS (16 * CT_ROWS)
#if CT_MINB
#define BOUNDS __launch_bounds__(THREADS, CT_MINB)
#else
#define BOUNDS
#endif

// float4 slot of chunk q (columns 4q..4q+3) of tile row r
__device__ __forceinline__ int Slot(int r, int q) { return r * 16 + (q ^ ((r >> 2) & 7)); }

extern "C" __global__ void BOUNDS cutune_kernel(const float* __restrict__ in,
                                                float* __restrict__ out, int rows, int cols) {
  __shared__ float4 tile4[T * T / 4 + CT_XSMEM / 16];
  if (CT_XSMEM && threadIdx.x == 999) tile4[T * T / 4] = make_float4(0, 0, 0, 0);
  const int tiles_x = cols / T;
  const int tc = blockIdx.x % tiles_x, tr = blockIdx.x / tiles_x;
  const int tid = threadIdx.y * 16 + threadIdx.x;
  // load: chunk (r, q) with q = tid % 16, r = tid / 16 + j * ROWS
#pragma unroll
  for (int j = 0; j < T / CT_ROWS; ++j) {
    const int r = tid / 16 + j * CT_ROWS, q = tid % 16;
    const float* src = in + static_cast<long long>(tr * T + r) * cols + tc * T + q * 4;
#if CT_STAGE
    tile4[Slot(r, q)] = *reinterpret_cast<const float4*>(src);
#else
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile4[Slot(r, q)]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#endif
  }
#if !CT_STAGE
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
#endif
  __syncthreads();
  // store: a warp covers 8 output chunks (a) x 4 output rows (c): 4 rows of 128 bytes
  const float* tile = reinterpret_cast<const float*>(tile4);
  const int lane = tid % 32, warp = tid / 32;
  constexpr int kWarps = THREADS / 32;
#pragma unroll
  for (int j = 0; j < T * 16 / THREADS; ++j) {
    const int unit = j * kWarps + warp;  // 32 units of (8 a x 4 c) cover 16 a x 64 c
    const int a = (unit & 1) * 8 + lane % 8;
    const int c = (unit >> 1) * 4 + lane / 8;
    float4 x;
    x.x = tile[Slot(4 * a + 0, c >> 2) * 4 + (c & 3)];
    x.y = tile[Slot(4 * a + 1, c >> 2) * 4 + (c & 3)];
    x.z = tile[Slot(4 * a + 2, c >> 2) * 4 + (c & 3)];
    x.w = tile[Slot(4 * a + 3, c >> 2) * 4 + (c & 3)];
    *reinterpret_cast<float4*>(out + static_cast<long long>(tc * T + c) * rows + tr * T + 4 * a) = x;
  }
}
