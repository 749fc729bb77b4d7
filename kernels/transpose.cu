// Out-of-place f32 transpose: out[c][r] = in[r][c] for any rows x cols (row-major).
//
// Parameters arrive as -D defines (defaults: the seed's padded 32x32 shared-memory kernel):
//   CT_SMEM     1: stage a TILE x TILE tile in shared memory; 0: the seed's naive kernel
//   CT_TILE     tile edge in elements (16, 32, 64)
//   CT_ROWS     block rows; each thread moves TILE/ROWS rows of VEC elements
//   CT_VEC      elements per global load/store (1, 2, 4); vector accesses only where aligned and
//               in bounds, scalar at the edges. Loads: when cols % VEC != 0, scalar. Stores: the
//               padded/swizzle=1 kernel aligns its output windows to sectors (below), so they are
//               vector on any shape; swizzle=2's fall back to scalar when rows % VEC != 0
//   CT_PAD      extra columns per shared-memory row (0, 1) against bank conflicts
//   CT_SWIZZLE  1: XOR-swizzled shared-memory columns instead of padding; 2: each thread
//               transposes 4x4 blocks in registers and the shared tile holds the transposed tile,
//               so shared-memory stores and loads are float4 too, XOR-swizzled at 16-byte
//               granularity (needs VEC=4 and TILE/ROWS a multiple of 4)
//   CT_MINB     __launch_bounds__ minimum blocks per SM (0: none; see CT_BOUNDS)
// Block: (TILE/VEC) x ROWS threads (naive: TILE x ROWS); grid 1-D: one block per tile, and for
// the padded/swizzle=1 kernel one more tile row, (rows + 6) / TILE + 1 tile rows in all, numbered
// tile row first.
// Signature: cutune_kernel(const float* in, float* out, int rows, int cols).
// With -DCUTUNE_REFERENCE only the trusted reference kernel cutune_reference is compiled.

#ifndef CT_SMEM
#define CT_SMEM 1
#endif
#ifndef CT_TILE
#define CT_TILE 32
#endif
#ifndef CT_ROWS
#define CT_ROWS 32
#endif
#ifndef CT_VEC
#define CT_VEC 1
#endif
#ifndef CT_PAD
#define CT_PAD 1
#endif
#ifndef CT_SWIZZLE
#define CT_SWIZZLE 0
#endif
#ifndef CT_MINB
#define CT_MINB 0
#endif

#ifndef CUTUNE_REFERENCE

#if CT_TILE % CT_ROWS != 0 || CT_TILE % CT_VEC != 0
#error "CT_TILE must be a multiple of CT_ROWS and CT_VEC"
#endif
#if CT_SWIZZLE && CT_PAD
#error "CT_SWIZZLE and CT_PAD exclude each other"
#endif
#if !CT_SMEM && CT_VEC != 1
#error "the naive kernel moves one element per access (CT_VEC=1)"
#endif
#if CT_SWIZZLE == 2 && (CT_VEC != 4 || (CT_TILE / CT_ROWS) % 4 != 0)
#error "CT_SWIZZLE=2 needs CT_VEC=4 and TILE/ROWS a multiple of 4"
#endif

#define CT_THREADS ((CT_TILE / CT_VEC) * CT_ROWS)
#include "common.cuh"  // CT_BOUNDS, IsAligned

namespace {

// Shared-memory word of tile element (r, c). The swizzle permutes the columns of each row by
// XOR with the row, so a column read by consecutive rows hits distinct banks without padding.
__device__ __forceinline__ int TileIndex(int r, int c) {
#if CT_SWIZZLE == 1
  constexpr int kMask = (CT_TILE < 32 ? CT_TILE : 32) - 1;
  return r * CT_TILE + (c ^ (r & kMask));
#else
  return r * (CT_TILE + CT_PAD) + c;
#endif
}

// Swizzle 2: float4 slot s (4 consecutive input rows) of transposed-tile row c (an input column).
// A quarter warp stores 8 consecutive columns 4 apart (c >> 2 distinct) into one slot, and loads
// 8 consecutive slots of one row: XOR with (c >> 2) keeps both conflict-free.
__device__ __forceinline__ int Slot4(int c, int s) {
  constexpr int kSlots = CT_TILE / 4;
  constexpr int kMask = (kSlots < 8 ? kSlots : 8) - 1;
  return c * kSlots + (s ^ ((c >> 2) & kMask));
}

__device__ __forceinline__ bool Aligned(const void* p) {
  return IsAligned<CT_VEC * sizeof(float)>(p);
}

// Reads VEC consecutive floats starting at column c of a row holding n; zero beyond n.
__device__ __forceinline__ void LoadVec(const float* __restrict__ src, int c, int n, bool vec_ok,
                                        float (&v)[CT_VEC]) {
#if CT_VEC == 4
  if (vec_ok && c + 4 <= n) {
    const float4 x = *reinterpret_cast<const float4*>(src);
    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
    return;
  }
#elif CT_VEC == 2
  if (vec_ok && c + 2 <= n) {
    const float2 x = *reinterpret_cast<const float2*>(src);
    v[0] = x.x; v[1] = x.y;
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < CT_VEC; ++i) v[i] = c + i < n ? src[i] : 0.0f;
}

// Writes VEC consecutive floats starting at column c of a row holding n; nothing beyond n.
__device__ __forceinline__ void StoreVec(float* __restrict__ dst, int c, int n, bool vec_ok,
                                         const float (&v)[CT_VEC]) {
#if CT_VEC == 4
  if (vec_ok && c + 4 <= n) {
    *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
#elif CT_VEC == 2
  if (vec_ok && c + 2 <= n) {
    *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < CT_VEC; ++i) {
    if (c + i < n) dst[i] = v[i];
  }
}

}  // namespace

extern "C" __global__ void CT_BOUNDS cutune_kernel(const float* __restrict__ in,
                                                    float* __restrict__ out, int rows, int cols) {
  // A 1-D grid has room for any shape whose element count fits the family's limit.
#if CT_SMEM && CT_SWIZZLE != 2
  // Sector windows (below): tile rows are numbered first, down each column of tiles, so the
  // blocks that write the consecutive windows of one output row run together (measured: 6-8
  // points of copy more than row-major on odd shapes, 94 -> 97% at 16384^2).
  constexpr int kHalo = 8;
  const int tiles_y = (rows + kHalo - 2) / CT_TILE + 1;
  const int tile_row = blockIdx.x % tiles_y;
  const int tile_col = blockIdx.x / tiles_y;
#else
  // Tiles are numbered row-major over the input.
  const int tiles_x = (cols + CT_TILE - 1) / CT_TILE;
  const int tile_col = blockIdx.x % tiles_x;
  const int tile_row = blockIdx.x / tiles_x;
#endif
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;

#if CT_SMEM && CT_SWIZZLE == 2
  __shared__ float4 tile4[CT_TILE * CT_TILE / 4];

  // Load: each thread reads 4x4 blocks (4 input rows of one float4 column group), transposes
  // them in registers and stores 4 float4 columns of the transposed tile.
  {
    const int c = tile_col * CT_TILE + tx * 4;
    const bool vec_ok = cols % 4 == 0 && Aligned(in);
    float v[CT_TILE / CT_ROWS][4];
#pragma unroll
    for (int j = 0; j < CT_TILE / CT_ROWS; ++j) {
      const int r = tile_row * CT_TILE + (ty + (j / 4) * CT_ROWS) * 4 + j % 4;
      if (r < rows) {
        LoadVec(in + static_cast<long long>(r) * cols + c, c, cols, vec_ok, v[j]);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) v[j][i] = 0.0f;
      }
    }
#pragma unroll
    for (int g = 0; g < CT_TILE / CT_ROWS / 4; ++g) {
      const int slot = ty + g * CT_ROWS;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        tile4[Slot4(tx * 4 + q, slot)] =
            make_float4(v[4 * g][q], v[4 * g + 1][q], v[4 * g + 2][q], v[4 * g + 3][q]);
      }
    }
  }
  __syncthreads();
  // Store: rows of the output tile are rows of the shared tile, float4 at a time.
  {
    const int oc = tile_row * CT_TILE + tx * 4;
    const bool vec_ok = rows % 4 == 0 && Aligned(out);
#pragma unroll
    for (int j = 0; j < CT_TILE / CT_ROWS; ++j) {
      const int c_local = ty + j * CT_ROWS;
      const int orow = tile_col * CT_TILE + c_local;
      if (orow < cols) {
        const float4 x = tile4[Slot4(c_local, tx)];
        const float v[4] = {x.x, x.y, x.z, x.w};
        StoreVec(out + static_cast<long long>(orow) * rows + oc, oc, rows, vec_ok, v);
      }
    }
  }
#elif CT_SMEM
  // Output windows on sectors: the segment a block writes of an output row starts on a 32-byte
  // sector of `out`, shifted back from the tile's first column by the row's misalignment
  // d = (address / 4) % 8, so no sector is written by two blocks and vector stores are aligned on
  // any shape (on odd shapes, windows on the matrix's tiles cost 23% of the time in partly written
  // sectors; bench/results/kernel-notes.md, session 9). The block therefore reads the input rows
  // from tile_row*TILE - kHalo: its tile holds kHalo more rows, and the grid one more tile row
  // than the tiles of the matrix. Both phases issue every global access of a thread before the
  // shared-memory side of any (measured: 12-30% faster than interleaving them on odd shapes).
  constexpr int kTileRows = CT_TILE + kHalo;
  constexpr int kLoads = (kTileRows + CT_ROWS - 1) / CT_ROWS;  // input rows per thread
  constexpr int kStores = CT_TILE / CT_ROWS;                   // output rows per thread
  // Accesses a thread has in flight at once: all of them up to 16 (every winner measured); with
  // fewer block rows, chunks of 16, which bound registers and NVRTC's time (a 64x1 block's 72
  // loads all in flight took 1 s to compile).
  constexpr int kLoadChunk = kLoads < 16 ? kLoads : 16;
  constexpr int kStoreChunk = kStores < 16 ? kStores : 16;
  __shared__ float tile[kTileRows * (CT_TILE + CT_PAD)];
  const int row0 = tile_row * CT_TILE - kHalo;  // the input row of tile row 0

  // Load: rows of the input tile, coalesced along the input row.
  {
    const int c = tile_col * CT_TILE + tx * CT_VEC;
    const bool vec_ok = CT_VEC > 1 && cols % CT_VEC == 0 && Aligned(in);
#pragma unroll
    for (int j0 = 0; j0 < kLoads; j0 += kLoadChunk) {
      float v[kLoadChunk][CT_VEC];
#pragma unroll
      for (int k = 0; k < kLoadChunk; ++k) {
        const int r_local = ty + (j0 + k) * CT_ROWS;
        const int r = row0 + r_local;
        if (j0 + k < kLoads && (kTileRows % CT_ROWS == 0 || r_local < kTileRows) && r >= 0 &&
            r < rows) {
          LoadVec(in + static_cast<long long>(r) * cols + c, c, cols, vec_ok, v[k]);
        } else {
#pragma unroll
          for (int i = 0; i < CT_VEC; ++i) v[k][i] = 0.0f;
        }
      }
#pragma unroll
      for (int k = 0; k < kLoadChunk; ++k) {
        const int r_local = ty + (j0 + k) * CT_ROWS;
        if (j0 + k >= kLoads || (kTileRows % CT_ROWS != 0 && r_local >= kTileRows)) break;
#pragma unroll
        for (int i = 0; i < CT_VEC; ++i) tile[TileIndex(r_local, tx * CT_VEC + i)] = v[k][i];
      }
    }
  }
  __syncthreads();
  // Store: rows of the output tile (columns of the input tile), coalesced along the output row.
  {
#pragma unroll
    for (int j0 = 0; j0 < kStores; j0 += kStoreChunk) {
      float v[kStoreChunk][CT_VEC];
      int d[kStoreChunk];
#pragma unroll
      for (int k = 0; k < kStoreChunk && j0 + k < kStores; ++k) {
        const int c_local = ty + (j0 + k) * CT_ROWS;
        const int orow = tile_col * CT_TILE + c_local;
        d[k] = static_cast<int>(((reinterpret_cast<unsigned long long>(out) >> 2) +
                                 static_cast<unsigned long long>(orow) * rows) & 7);
        const int t = kHalo - d[k] + tx * CT_VEC;  // the tile row of this thread's first column
#pragma unroll
        for (int i = 0; i < CT_VEC; ++i) v[k][i] = tile[TileIndex(t + i, c_local)];
      }
#pragma unroll
      for (int k = 0; k < kStoreChunk && j0 + k < kStores; ++k) {
        const int orow = tile_col * CT_TILE + ty + (j0 + k) * CT_ROWS;
        if (orow < cols) {
          float* const dst = out + static_cast<long long>(orow) * rows;
          const int oc = tile_row * CT_TILE - d[k] + tx * CT_VEC;
          if (oc >= 0) {
            StoreVec(dst + oc, oc, rows, CT_VEC > 1, v[k]);
          } else {  // the first tile row's window starts before column 0
#pragma unroll
            for (int i = 0; i < CT_VEC; ++i) {
              if (oc + i >= 0 && oc + i < rows) dst[oc + i] = v[k][i];
            }
          }
        }
      }
    }
  }
#else
  // The seed's naive kernel: coalesced reads, writes strided by `rows`.
  const int c = tile_col * CT_TILE + tx;
#pragma unroll
  for (int j = 0; j < CT_TILE / CT_ROWS; ++j) {
    const int r = tile_row * CT_TILE + ty + j * CT_ROWS;
    if (r < rows && c < cols) {
      out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
    }
  }
#endif
}

#else  // CUTUNE_REFERENCE

// Trusted reference: one element per thread iteration, no tiling, no tricks.
extern "C" __global__ void cutune_reference(const float* in, float* out, int rows, int cols) {
  const long long n = static_cast<long long>(rows) * cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const long long r = i / cols;
    const long long c = i % cols;
    out[c * rows + r] = in[i];
  }
}

#endif  // CUTUNE_REFERENCE
