// Lab: the transpose's padded / swizzle=1 shared-memory kernel (kernels/transpose.cu, same
// tiling and block shape) reading its input through a texture object instead of global loads.
// Run through bench/kernel_lab.py with tex=1 (1-D linear texture: float texels for vec=1, float4
// texels for vec=4) or tex=2 (2-D pitched texture, float texels, vec=1; the pitch must meet the
// device's texture pitch alignment). Same defines as the product: CT_TILE, CT_ROWS, CT_VEC (1 or
// 4), CT_PAD, CT_SWIZZLE (0 or 1), CT_MINB. Signature: (cudaTextureObject_t in, float* out, int
// rows, int cols). Kept out of the product: bench/results/kernel-notes.md, session 8.
#ifndef CT_TILE
#define CT_TILE 64
#endif
#ifndef CT_ROWS
#define CT_ROWS 8
#endif
#ifndef CT_VEC
#define CT_VEC 1
#endif
#ifndef CT_PAD
#define CT_PAD 0
#endif
#ifndef CT_SWIZZLE
#define CT_SWIZZLE 1
#endif
#ifndef CT_MINB
#define CT_MINB 0
#endif
#ifndef CT_TEX
#define CT_TEX 1
#endif
#if CT_VEC != 1 && CT_VEC != 4
#error "the texture lab kernel has vec 1 or 4"
#endif
#if CT_TEX == 2 && CT_VEC != 1
#error "the 2-D texture reads float texels (vec=1)"
#endif

#define CT_THREADS ((CT_TILE / CT_VEC) * CT_ROWS)
#include "common.cuh"  // CT_BOUNDS

namespace {

__device__ __forceinline__ int TileIndex(int r, int c) {
#if CT_SWIZZLE == 1
  constexpr int kMask = (CT_TILE < 32 ? CT_TILE : 32) - 1;
  return r * CT_TILE + (c ^ (r & kMask));
#else
  return r * (CT_TILE + CT_PAD) + c;
#endif
}

// VEC elements of row r from column c; zero beyond the row (the texture's border is not used:
// rows of a 1-D texture run into each other).
__device__ __forceinline__ void Fetch(cudaTextureObject_t in, int r, int c, int cols,
                                      float (&v)[CT_VEC]) {
#if CT_TEX == 2
  v[0] = c < cols ? tex2D<float>(in, c + 0.5f, r + 0.5f) : 0.0f;
#elif CT_VEC == 4
  const long long i = static_cast<long long>(r) * cols + c;
  if (cols % 4 == 0 && c + 4 <= cols) {
    const float4 x = tex1Dfetch<float4>(in, static_cast<int>(i / 4));
    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
  } else {
    // float4 texels: an unaligned element is one lane of the texel holding it
    for (int k = 0; k < 4; ++k) {
      if (c + k < cols) {
        const float4 x = tex1Dfetch<float4>(in, static_cast<int>((i + k) / 4));
        const int lane = static_cast<int>((i + k) % 4);
        v[k] = lane == 0 ? x.x : lane == 1 ? x.y : lane == 2 ? x.z : x.w;
      } else {
        v[k] = 0.0f;
      }
    }
  }
#else
  v[0] = c < cols ? tex1Dfetch<float>(in, static_cast<int>(static_cast<long long>(r) * cols + c))
                  : 0.0f;
#endif
}

}  // namespace

extern "C" __global__ void CT_BOUNDS cutune_kernel(cudaTextureObject_t in, float* __restrict__ out,
                                                    int rows, int cols) {
  const int tiles_x = (cols + CT_TILE - 1) / CT_TILE;
  const int tile_col = blockIdx.x % tiles_x;
  const int tile_row = blockIdx.x / tiles_x;
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  __shared__ float tile[CT_TILE * (CT_TILE + CT_PAD)];
  {
    const int c = tile_col * CT_TILE + tx * CT_VEC;
#pragma unroll
    for (int j = 0; j < CT_TILE / CT_ROWS; ++j) {
      const int r_local = ty + j * CT_ROWS;
      const int r = tile_row * CT_TILE + r_local;
      float v[CT_VEC];
      if (r < rows) {
        Fetch(in, r, c, cols, v);
      } else {
#pragma unroll
        for (int i = 0; i < CT_VEC; ++i) v[i] = 0.0f;
      }
#pragma unroll
      for (int i = 0; i < CT_VEC; ++i) tile[TileIndex(r_local, tx * CT_VEC + i)] = v[i];
    }
  }
  __syncthreads();
  {
    const int oc = tile_row * CT_TILE + tx * CT_VEC;
    const bool vec_ok = CT_VEC == 4 && rows % 4 == 0 && IsAligned<16>(out);
#pragma unroll
    for (int j = 0; j < CT_TILE / CT_ROWS; ++j) {
      const int c_local = ty + j * CT_ROWS;
      const int orow = tile_col * CT_TILE + c_local;
      if (orow >= cols) continue;
      float v[CT_VEC];
#pragma unroll
      for (int i = 0; i < CT_VEC; ++i) v[i] = tile[TileIndex(tx * CT_VEC + i, c_local)];
      float* dst = out + static_cast<long long>(orow) * rows + oc;
      if (vec_ok && oc + CT_VEC <= rows) {
#if CT_VEC == 4
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
#endif
      } else {
#pragma unroll
        for (int i = 0; i < CT_VEC; ++i) {
          if (oc + i < rows) dst[i] = v[i];
        }
      }
    }
  }
}
