// Lab only (session 4): the swizzle=2 transpose (64x64 tiles, float4 everywhere) with three
// structural changes, each a define. Interior shapes only: rows, cols multiples of 64*VSTACK.
//   CT_SUPER   tiles per edge of a super-tile walked row-major before the next (0: plain order)
//   CT_PERSIST 1: grid-stride over tiles, next tile's loads issued before this tile's stores
//   CT_VSTACK  input tiles stacked vertically per block (1, 2): 512-byte output runs at 2
#ifndef CT_ROWS
#define CT_ROWS 8
#endif
#ifndef CT_SUPER
#define CT_SUPER 0
#endif
#ifndef CT_PERSIST
#define CT_PERSIST 0
#endif
#ifndef CT_VSTACK
#define CT_VSTACK 1
#endif
#ifndef CT_MINB
#define CT_MINB 0
#endif
#define T 64
#define J (T / CT_ROWS)
#define THREADS (16 * CT_ROWS)
#if CT_MINB
#define BOUNDS __launch_bounds__(THREADS, CT_MINB)
#else
#define BOUNDS
#endif

__device__ __forceinline__ int Slot4(int c, int s) {
  return c * (T / 4) + (s ^ ((c >> 2) & 7));
}

__device__ __forceinline__ void TileOf(int t, int tiles_x, int& tr, int& tc) {
#if CT_SUPER
  const int s = t / (CT_SUPER * CT_SUPER), w = t % (CT_SUPER * CT_SUPER);
  const int sx = tiles_x / CT_SUPER;
  tr = (s / sx) * CT_SUPER + w / CT_SUPER;
  tc = (s % sx) * CT_SUPER + w % CT_SUPER;
#else
  tr = t / tiles_x;
  tc = t % tiles_x;
#endif
}

extern "C" __global__ void BOUNDS cutune_kernel(const float* __restrict__ in,
                                                float* __restrict__ out, int rows, int cols) {
  __shared__ float4 tile4[CT_VSTACK][T * T / 4];
  const int tiles_x = cols / T;
  const int ntiles = tiles_x * (rows / (T * CT_VSTACK));
  const int tx = threadIdx.x, ty = threadIdx.y;
  float v[CT_VSTACK][J][4];

  auto load = [&](int t) {
    int tr, tc;
    TileOf(t, tiles_x, tr, tc);
    const int c = tc * T + tx * 4;
#pragma unroll
    for (int k = 0; k < CT_VSTACK; ++k) {
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const int r = (tr * CT_VSTACK + k) * T + (ty + (j / 4) * CT_ROWS) * 4 + j % 4;
        const float4 x = *reinterpret_cast<const float4*>(in + static_cast<long long>(r) * cols + c);
        v[k][j][0] = x.x; v[k][j][1] = x.y; v[k][j][2] = x.z; v[k][j][3] = x.w;
      }
    }
  };
  int t = blockIdx.x;
  if (t >= ntiles) return;
  load(t);
  for (;;) {
#pragma unroll
    for (int k = 0; k < CT_VSTACK; ++k) {
#pragma unroll
      for (int g = 0; g < J / 4; ++g) {
        const int slot = ty + g * CT_ROWS;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          tile4[k][Slot4(tx * 4 + q, slot)] =
              make_float4(v[k][4 * g][q], v[k][4 * g + 1][q], v[k][4 * g + 2][q], v[k][4 * g + 3][q]);
        }
      }
    }
    __syncthreads();
    int tr, tc;
    TileOf(t, tiles_x, tr, tc);
    const int next = CT_PERSIST ? t + gridDim.x : ntiles;
    if (next < ntiles) load(next);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int c_local = ty + j * CT_ROWS;
      float* dst = out + static_cast<long long>(tc * T + c_local) * rows + tr * T * CT_VSTACK + tx * 4;
#pragma unroll
      for (int k = 0; k < CT_VSTACK; ++k) {
        *reinterpret_cast<float4*>(dst + k * T) = tile4[k][Slot4(c_local, tx)];
      }
    }
    if (next >= ntiles) break;
    t = next;
    __syncthreads();
  }
}
