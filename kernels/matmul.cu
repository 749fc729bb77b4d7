// f32 matrix multiply C = A * B, row-major: A is M x K, B is K x N, C is M x N, any M, N, K.
//
// Parameters arrive as -D defines (defaults: the seed's 32x32 shared-memory tiled kernel):
//   CT_BM, CT_BN, CT_BK  block tile: C rows, C columns, K depth per step
//   CT_TM, CT_TN         per-thread register tile; threads = (BM/TM) * (BN/TN)
//   CT_VEC               1 or 4: float4 global loads where K % 4 == 0 (A) / N % 4 == 0 (B) and
//                        the chunk is in bounds; scalar zero-filled loads otherwise
//   CT_AT                1: A tile stored transposed in shared memory (As[k][m])
//   CT_PAD               floats of padding per shared-memory row (0 or 4: keeps float4 alignment)
//   CT_DB                1: double-buffered shared memory, next tile prefetched into registers
//                        during the current tile's math (one barrier per K step)
//   CT_ILOOP             1 (with CT_DB): blocks on the fast path (below) run a loop of their own
//                        whose global loads go through per-thread pointers stepped each K step
//                        (no bounds checks, no branches in the loop body); 0: one loop for all
//   CT_WARP              0: threads row-major over the thread grid; 1: each warp a 4x8 block of
//                        thread tiles and, when TN % 4 == 0, each thread's columns in float4
//                        groups BN/(TN/4) apart (conflict-free shared loads of B)
//   CT_MINB              __launch_bounds__ minimum blocks per SM (0: none; see CT_BOUNDS)
//   CT_STAGES            0: tiles staged through registers (CT_DB above); 2..4: a cp.async
//                        pipeline of that many shared-memory stages, global -> shared directly
//                        (sm_80+; plain loads before): A element by element into the transposed
//                        tile (4-byte copies), B 16 bytes at a time where N % 4 == 0, aligned and
//                        in bounds, else 4-byte copies; out-of-bounds elements are zero-filled
// Fast path: with float4-aligned A and B rows where VEC=4 (for cp.async: B only), every block loads
// every K step but a partial last one without bounds checks, through precomputed per-thread
// offsets (or, with ILOOP=1, pointers); tiles at the bottom and right edges of C load their rows
// past M from row M-1 and their chunks past N from the last chunk (the results of those rows and
// columns are never stored). The checked loads above serve misaligned rows (but in modules built
// for them: CT_SCALAR_A, CT_SCALAR_B below) and the last K step.
// This halved the non-FFMA instructions of the main loop (ncu, H200: +5% at 4096^3;
// bench/results/kernel-notes.md). The db=0 register-staged path keeps the seed's checked loads.
//   CT_SCALAR_A, CT_SCALAR_B  1 (set by the family from the shape: K % 4, N % 4 not 0): the
//                        fast path loads A's (B's) chunks as four scalars, so blocks whose rows
//                        are not 16-byte aligned take it too (the checked loads cost 17% at
//                        4096^3: kernel-notes.md, session 16). B then clamps a chunk's start to
//                        the last column rather than its end (its first columns stay where they
//                        are stored; the rest read on into the next row, never the last: the K
//                        step holding B's last row is a checked one), and N must be at least 4.
//                        A module of either class is right at any shape. In the CT_SCALAR_B
//                        class (C's rows misaligned too) warp-tiled modules store the tiles
//                        no other block adds to through shared memory (StoreTileStaged).
//   CT_SPLITK            K splits per C tile (db=1 path only): each split multiplies a range of
//                        whole BK steps and stores its partial tile in module memory
//                        (CT_PARTIALS floats); the split that arrives last (a per-tile counter,
//                        CT_SEMAPHORES of them, back to 0 after each launch) adds the partials in
//                        split order and stores C, so results do not vary from run to run. Grids
//                        whose partials do not fit add into C one split after another instead,
//                        in the same order (the counter then holds whose turn it is). The family
//                        uses it for grids too small to fill the GPU (N=64, K-heavy shapes).
//                        Launches of one split-K module must not overlap (they share the memory).
//   CT_SK                stream-K (db=1 path, CT_SPLITK=1): 0 off; else the grid is CT_SK blocks
//                        per SM (the family's Geometry) and block b of G owns the b-th G-th of
//                        all (C tile, K step) iterations, tile-major, so every block does the same
//                        work whatever the tile count (no partial last wave). A block walks its
//                        share from its last tile back to its first; a tile split between blocks
//                        is added into C in block order, the block holding its first K steps
//                        writing first (a turn counter per block, as split-K's), so every wait is
//                        on a lower block, dispatched earlier, and results do not vary from run to
//                        run. Launches of one stream-K module must not overlap either.
// Block: threads x 1 x 1; grid: one block per C tile (x splits, split index fastest; the kernel
// takes splits = gridDim.x / tiles, so the grid may split fewer times than CT_SPLITK), 1-D;
// dynamic shared memory:
// (STAGES ? STAGES : DB ? 2 : 1) * (BK*(BM+PAD) [AT] or BM*(BK+PAD) + BK*(BN+PAD)) * 4 bytes.
// Signature: cutune_kernel(const float* A, const float* B, float* C, int M, int N, int K).
// With -DCUTUNE_REFERENCE only the trusted reference kernel cutune_reference is compiled.
//
// Structure (as CUTLASS's gemm/threadblock mma_singlestage.h, mma_pipelined.h, mma_multistage.h):
// one main-loop function per pipeline, SingleStageMainLoop (db=0), PipelinedMainLoop (db=1, with
// the iloop=1 interior loop) and MultistageMainLoop (stages > 0), on the helpers above them; the
// epilogue StoreTile, wrapped for split-K by SplitKEpilogue (partials, or SplitKStoreTile's
// hand-over); the entry point only dispatches. The launch-bounds rule and small helpers come from common.cuh (shared with
// transpose.cu, inlined into the embedded text by kernels/embed.cmake).

#ifndef CT_BM
#define CT_BM 32
#endif
#ifndef CT_BN
#define CT_BN 32
#endif
#ifndef CT_BK
#define CT_BK 32
#endif
#ifndef CT_TM
#define CT_TM 1
#endif
#ifndef CT_TN
#define CT_TN 1
#endif
#ifndef CT_VEC
#define CT_VEC 1
#endif
#ifndef CT_AT
#define CT_AT 0
#endif
#ifndef CT_PAD
#define CT_PAD 0
#endif
#ifndef CT_DB
#define CT_DB 0
#endif
#ifndef CT_WARP
#define CT_WARP 0
#endif
#ifndef CT_ILOOP
#define CT_ILOOP 0
#endif
#ifndef CT_MINB
#define CT_MINB 0
#endif
#ifndef CT_STAGES
#define CT_STAGES 0
#endif
#ifndef CT_SPLITK
#define CT_SPLITK 1
#endif
#ifndef CT_SK
#define CT_SK 0
#endif
#ifndef CT_SCALAR_A
#define CT_SCALAR_A 0
#endif
#ifndef CT_SCALAR_B
#define CT_SCALAR_B 0
#endif

#ifndef CUTUNE_REFERENCE

#define CT_TROWS (CT_BM / CT_TM)
#define CT_TCOLS (CT_BN / CT_TN)
#define CT_THREADS (CT_TROWS * CT_TCOLS)

#if CT_BM % CT_TM != 0 || CT_BN % CT_TN != 0
#error "the block tile must be a multiple of the thread tile"
#endif
#if CT_BK % CT_VEC != 0 || CT_BN % CT_VEC != 0 || (CT_VEC != 1 && CT_VEC != 4)
#error "CT_VEC must be 1 or 4 and divide CT_BK and CT_BN"
#endif
#if CT_PAD % 4 != 0
#error "CT_PAD must keep rows 16-byte aligned"
#endif
#if CT_WARP && (CT_THREADS % 32 != 0 || CT_TCOLS % 8 != 0 || CT_TROWS % 4 != 0)
#error "warp tiling needs a thread grid of whole 4x8 warp blocks"
#endif
#if CT_ILOOP && !CT_DB
#error "CT_ILOOP needs CT_DB=1"
#endif
#if CT_STAGES != 0 && (CT_STAGES < 2 || !CT_AT || CT_DB || CT_VEC != 4)
#error "CT_STAGES (2..4) needs CT_AT=1, CT_VEC=4 and CT_DB=0"
#endif
#if CT_SPLITK > 1 && (!CT_DB || CT_STAGES || !defined(CT_SEMAPHORES) || !defined(CT_PARTIALS))
#error "CT_SPLITK > 1 needs CT_DB=1, CT_STAGES=0, CT_SEMAPHORES (counters, one per C tile) and CT_PARTIALS"
#endif
#if (CT_SCALAR_A || CT_SCALAR_B) && (CT_VEC != 4 || !CT_DB)
#error "CT_SCALAR_A and CT_SCALAR_B are for the fast path's float4 chunks (CT_VEC=4, CT_DB=1)"
#endif
#if CT_SK > 0 && (!CT_DB || CT_STAGES || CT_SPLITK > 1 || !defined(CT_SEMAPHORES))
#error "CT_SK > 0 needs CT_DB=1, CT_STAGES=0, CT_SPLITK=1 and CT_SEMAPHORES (one per block)"
#endif

#include "common.cuh"  // CT_BOUNDS, CeilDiv, IsAligned

#if CT_SPLITK > 1 || CT_SK > 0
// Split-K: how many splits of C tile t have stored their partial (or, when the partials do not
// fit, whose turn it is to add into C); the last split sets it back to 0. Stream-K: the turn of
// the tile whose first K steps block b holds.
__device__ unsigned int cutune_splitk_turn[CT_SEMAPHORES];
#endif
#if CT_SPLITK > 1
// Split-K's partial tiles, one slot per block of the grid (see PartialChunk).
__device__ float4 cutune_splitk_partials[CT_PARTIALS / 4];
#endif

namespace {

// The defines as constants. The preprocessor still picks code only where the other branch cannot
// compile for some candidates: split-K's module memory (CT_SEMAPHORES, CT_PARTIALS) and cp.async
// (sm_80+).
constexpr int kBM = CT_BM;
constexpr int kBN = CT_BN;
constexpr int kBK = CT_BK;
constexpr int kTM = CT_TM;
constexpr int kTN = CT_TN;
constexpr int kVec = CT_VEC;
constexpr bool kATransposed = CT_AT;
constexpr int kPad = CT_PAD;
constexpr bool kDoubleBuffer = CT_DB;
constexpr bool kInteriorLoop = CT_ILOOP;
constexpr bool kWarpTiled = CT_WARP;
constexpr int kStages = CT_STAGES;
constexpr int kSplitK = CT_SPLITK;
constexpr bool kStreamK = CT_SK > 0;
// The fast path loads A's (B's) chunks as four scalars: rows need not be 16-byte aligned.
constexpr bool kScalarA = CT_SCALAR_A;
constexpr bool kScalarB = CT_SCALAR_B;
// Whether a block may multiply only part of a tile's K steps.
constexpr bool kPartialK = kSplitK > 1 || kStreamK;

// The thread grid: CT_TROWS x kThreadCols thread tiles.
constexpr int kThreadCols = CT_TCOLS;
constexpr int kThreads = CT_THREADS;
// Warp tiling: warps per thread-grid row (each warp a 4x8 block of thread tiles); with TN % 4 == 0
// a thread's columns also go in float4 groups kGroupStride apart.
constexpr int kWarpsPerRow = kWarpTiled ? kThreadCols / 8 : 1;
constexpr bool kSpread = kWarpTiled && kTN % 4 == 0;
constexpr int kGroupStride = kSpread ? kBN / (kTN / 4) : 0;

// One shared-memory stage: the A tile (As[k][m] when transposed, As[m][k] otherwise), then the B
// tile (Bs[k][n]); rows of kALd / kBLd floats.
constexpr int kALd = kATransposed ? kBM + kPad : kBK + kPad;
constexpr int kAElems = kATransposed ? kBK * kALd : kBM * kALd;
constexpr int kBLd = kBN + kPad;
constexpr int kBElems = kBK * kBLd;
constexpr int kStageElems = kAElems + kBElems;
// Register staging: VEC-float chunks of each tile, and the most any thread moves.
constexpr int kAChunks = kBM * kBK / kVec;
constexpr int kBChunks = kBK * kBN / kVec;
constexpr int kAPerThread = CeilDiv<kThreads>(kAChunks);
constexpr int kBPerThread = CeilDiv<kThreads>(kBChunks);
// cp.async: A moves element by element, B in chunks of 4 (VEC=4).
constexpr int kAElemsPerThread = CeilDiv<kThreads>(kBM * kBK);

// The thread's register tile of C: acc[i][j] is C(m0 + trow * TM + i, n0 + ThreadCol(tcol, j)).
using Accumulators = float[kTM][kTN];

// ---- Where a block and a thread work ---------------------------------------------------------

// The block's C tile and, with split-K, its split (split index fastest in the grid; the grid may
// split fewer times than CT_SPLITK). Without split-K, one block per C tile.
struct TileSplit {
  unsigned int tile;
  int split;
  unsigned int splits;
};

__device__ __forceinline__ TileSplit BlockTileSplit(int M, int tiles_n) {
  if constexpr (kSplitK > 1) {
    const unsigned int splits = gridDim.x / (CeilDiv<kBM>(M) * tiles_n);
    return {blockIdx.x / splits, static_cast<int>(blockIdx.x % splits), splits};
  } else {
    return {blockIdx.x, 0, 1};
  }
}

// The block's K steps, [begin, end): all of them without split-K, else its split's share of
// whole steps (may be empty).
struct StepRange {
  int begin;
  int end;
};

__device__ __forceinline__ StepRange SplitSteps(int steps, const TileSplit& ts) {
  if constexpr (kSplitK > 1) {
    const int splits = static_cast<int>(ts.splits);
    const int per_split = (steps + splits - 1) / splits;  // whole K steps per split
    const int begin = min(steps, ts.split * per_split);
    return {begin, min(steps, begin + per_split)};
  } else {
    return {0, steps};
  }
}

// The thread's tile in the thread grid: row-major, or (warp tiling) each warp a 4x8 block.
struct ThreadTile {
  int row;
  int col;
};

__device__ __forceinline__ ThreadTile ThreadTileOf(int tid) {
  if constexpr (kWarpTiled) {
    const int lane = tid % 32;
    const int warp = tid / 32;
    return {(warp / kWarpsPerRow) * 4 + lane / 8, (warp % kWarpsPerRow) * 8 + lane % 8};
  } else {
    return {tid / kThreadCols, tid % kThreadCols};
  }
}

// Column (within the block tile) of element j of the thread's register tile.
__device__ __forceinline__ int ThreadCol(int tcol, int j) {
  if constexpr (kSpread) {
    return (j / 4) * kGroupStride + tcol * 4 + (j % 4);
  } else {
    return tcol * kTN + j;
  }
}

// What the main loops need: the operands and this block's and thread's place in them.
struct BlockTile {
  const float* A;
  const float* B;
  int M, N, K;
  int m0, n0;      // the C tile's origin
  int tid;
  int trow, tcol;  // the thread's tile (ThreadTileOf)
  bool a_vec;      // A rows load as float4 (VEC=4, K % 4 == 0, A 16-byte aligned)
  bool b_vec;      // B rows likewise (N % 4 == 0)
};

// The fast path's per-thread offsets (row * K within an A tile, row * N within a B tile) fit int.
__device__ __forceinline__ bool OffsetsFitInt(int N, int K) {
  return static_cast<long long>(kBM) * K <= 0x7fffffff &&
         static_cast<long long>(kBK) * N <= 0x7fffffff;
}

// ---- Register staging: global -> registers -> shared (single stage and double buffer) --------

// VEC consecutive floats of a row holding n, starting at column c; zero outside the matrix.
__device__ __forceinline__ void LoadChunk(const float* __restrict__ row, bool row_ok, int c, int n,
                                          bool vec_ok, float (&v)[kVec]) {
  if (!row_ok) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) v[i] = 0.0f;
    return;
  }
  if constexpr (kVec == 4) {
    if (vec_ok && c + 4 <= n) {
      const float4 x = *reinterpret_cast<const float4*>(row + c);
      v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) v[i] = c + i < n ? row[c + i] : 0.0f;
}

struct Staging {
  float a[kAPerThread][kVec];
  float b[kBPerThread][kVec];
};

// Global -> registers: the A tile at (m0, k0) and the B tile at (k0, n0).
__device__ __forceinline__ void LoadTiles(const float* __restrict__ A, const float* __restrict__ B,
                                          int M, int N, int K, int m0, int n0, int k0, int tid,
                                          bool a_vec, bool b_vec, Staging& s) {
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kAChunks % kThreads == 0 || idx < kAChunks) {
      const int row = idx / (kBK / kVec);
      const int kc = (idx % (kBK / kVec)) * kVec;
      const int gm = m0 + row;
      LoadChunk(A + static_cast<long long>(gm < M ? gm : 0) * K, gm < M, k0 + kc, K, a_vec,
                s.a[p]);
    }
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kBChunks % kThreads == 0 || idx < kBChunks) {
      const int row = idx / (kBN / kVec);
      const int nc = (idx % (kBN / kVec)) * kVec;
      const int gk = k0 + row;
      LoadChunk(B + static_cast<long long>(gk < K ? gk : 0) * N, gk < K, n0 + nc, N, b_vec,
                s.b[p]);
    }
  }
}

// LoadTiles for the block's tile pair at step k0 / kBK.
__device__ __forceinline__ void LoadTiles(const BlockTile& t, int k0, Staging& s) {
  LoadTiles(t.A, t.B, t.M, t.N, t.K, t.m0, t.n0, k0, t.tid, t.a_vec, t.b_vec, s);
}

// Edge tiles on the fast path: a C tile with `rows` rows and `cols` columns inside C (fewer than
// BM, BN at the bottom and right edges) loads A rows past the last from the last row, and B
// chunks past the last column from the last chunk, so every load stays inside the matrices. What
// they bring only reaches accumulators of C elements that are never stored: the K sums of C
// elements inside C read exactly their own rows and columns.
__device__ __forceinline__ int ClampedRow(int row, int rows) { return min(row, rows - 1); }
__device__ __forceinline__ int ClampedCol(int col, int cols, int width) {
  return min(col, cols - width);
}

// Offsets (in floats) of this thread's chunks from the tile origin: A at (m0, k0), B at (k0, n0),
// for a C tile with `rows` x `cols` inside C (edge rows and chunks clamped, as above). Computed
// unsigned: they wrap harmlessly in blocks that never use them (OffsetsFitInt).
struct ChunkOffsets {
  int a[kAPerThread];
  int b[kBPerThread];
};

__device__ __forceinline__ ChunkOffsets MakeChunkOffsets(int tid, int N, int K, int rows,
                                                         int cols) {
  ChunkOffsets o;
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    const int idx = tid + p * kThreads;
    o.a[p] = static_cast<int>(static_cast<unsigned>(ClampedRow(idx / (kBK / kVec), rows)) * K +
                             (idx % (kBK / kVec)) * kVec);
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    o.b[p] = static_cast<int>(static_cast<unsigned>(idx / (kBN / kVec)) * N +
                             ClampedCol((idx % (kBN / kVec)) * kVec, cols, kScalarB ? 1 : kVec));
  }
  return o;
}

// Global -> registers for a tile pair on the fast path (16-byte aligned rows where VEC=4; whole K
// step): no bounds checks, one load per chunk at a precomputed offset.
__device__ __forceinline__ void LoadTilesUnchecked(const float* __restrict__ a_tile,
                                                  const float* __restrict__ b_tile, int tid,
                                                  const ChunkOffsets& o, Staging& s) {
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    if (kAChunks % kThreads == 0 || tid + p * kThreads < kAChunks) {
      if constexpr (kVec == 4 && !kScalarA) {
        const float4 x = *reinterpret_cast<const float4*>(a_tile + o.a[p]);
        s.a[p][0] = x.x; s.a[p][1] = x.y; s.a[p][2] = x.z; s.a[p][3] = x.w;
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) s.a[p][i] = a_tile[o.a[p] + i];
      }
    }
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    if (kBChunks % kThreads == 0 || tid + p * kThreads < kBChunks) {
      if constexpr (kVec == 4 && !kScalarB) {
        const float4 x = *reinterpret_cast<const float4*>(b_tile + o.b[p]);
        s.b[p][0] = x.x; s.b[p][1] = x.y; s.b[p][2] = x.z; s.b[p][3] = x.w;
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) s.b[p][i] = b_tile[o.b[p] + i];
      }
    }
  }
}

// Pointers to this thread's chunks of the next tile pair (ILOOP=1), stepped one K step per load.
struct ChunkPtrs {
  const float* a[kAPerThread];
  const float* b[kBPerThread];
};

// Pointers at the tile pair (a_tile, b_tile); slots a thread does not use stay at the origin, so
// no pointer ever leaves the matrices.
__device__ __forceinline__ ChunkPtrs MakeChunkPtrs(const float* a_tile, const float* b_tile,
                                                   int tid, int N, int K, int rows, int cols) {
  const ChunkOffsets o = MakeChunkOffsets(tid, N, K, rows, cols);
  ChunkPtrs q;
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    const bool used = kAChunks % kThreads == 0 || tid + p * kThreads < kAChunks;
    q.a[p] = a_tile + (used ? o.a[p] : 0);
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const bool used = kBChunks % kThreads == 0 || tid + p * kThreads < kBChunks;
    q.b[p] = b_tile + (used ? o.b[p] : 0);
  }
  return q;
}

// LoadTilesUnchecked through the pointers, which then move on by one K step (b_step = BK * N).
// After the last fast step they point one step past what was loaded and are never read again
// (moving them before the load instead changed ptxas' register allocation: 230 -> 224 registers
// for the 128x128, 16x8 winner, unmeasured, so the measured order stays).
__device__ __forceinline__ void LoadTilesStepped(int tid, long long b_step, ChunkPtrs& q,
                                                 Staging& s) {
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    if (kAChunks % kThreads == 0 || tid + p * kThreads < kAChunks) {
      if constexpr (kVec == 4 && !kScalarA) {
        const float4 x = *reinterpret_cast<const float4*>(q.a[p]);
        s.a[p][0] = x.x; s.a[p][1] = x.y; s.a[p][2] = x.z; s.a[p][3] = x.w;
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) s.a[p][i] = q.a[p][i];
      }
    }
    q.a[p] += kBK;
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    if (kBChunks % kThreads == 0 || tid + p * kThreads < kBChunks) {
      if constexpr (kVec == 4 && !kScalarB) {
        const float4 x = *reinterpret_cast<const float4*>(q.b[p]);
        s.b[p][0] = x.x; s.b[p][1] = x.y; s.b[p][2] = x.z; s.b[p][3] = x.w;
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) s.b[p][i] = q.b[p][i];
      }
    }
    q.b[p] += b_step;
  }
}

// Registers -> one shared-memory stage.
__device__ __forceinline__ void StoreTiles(float* __restrict__ stage, int tid, const Staging& s) {
  float* As = stage;
  float* Bs = stage + kAElems;
#pragma unroll
  for (int p = 0; p < kAPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kAChunks % kThreads == 0 || idx < kAChunks) {
      const int row = idx / (kBK / kVec);
      const int kc = (idx % (kBK / kVec)) * kVec;
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        if constexpr (kATransposed) {
          As[(kc + i) * kALd + row] = s.a[p][i];
        } else {
          As[row * kALd + kc + i] = s.a[p][i];
        }
      }
    }
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kBChunks % kThreads == 0 || idx < kBChunks) {
      const int row = idx / (kBN / kVec);
      const int nc = (idx % (kBN / kVec)) * kVec;
      if constexpr (kVec == 4) {
        *reinterpret_cast<float4*>(&Bs[row * kBLd + nc]) =
            make_float4(s.b[p][0], s.b[p][1], s.b[p][2], s.b[p][3]);
      } else {
        Bs[row * kBLd + nc] = s.b[p][0];
      }
    }
  }
}

// ---- The math: one shared-memory stage into the register tile -------------------------------

// acc += As * Bs over one BK step.
__device__ __forceinline__ void ComputeTile(const float* __restrict__ stage, int trow, int tcol,
                                            Accumulators& acc) {
  const float* As = stage;
  const float* Bs = stage + kAElems;
#pragma unroll
  for (int k = 0; k < kBK; ++k) {
    float a[kTM];
    float b[kTN];
    if constexpr (kATransposed && kTM % 4 == 0) {
#pragma unroll
      for (int i = 0; i < kTM; i += 4) {
        const float4 x = *reinterpret_cast<const float4*>(&As[k * kALd + trow * kTM + i]);
        a[i] = x.x; a[i + 1] = x.y; a[i + 2] = x.z; a[i + 3] = x.w;
      }
    } else if constexpr (kATransposed) {
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[k * kALd + trow * kTM + i];
    } else {
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[(trow * kTM + i) * kALd + k];
    }
    if constexpr (kTN % 4 == 0) {
#pragma unroll
      for (int j = 0; j < kTN; j += 4) {
        const float4 x = *reinterpret_cast<const float4*>(&Bs[k * kBLd + ThreadCol(tcol, j)]);
        b[j] = x.x; b[j + 1] = x.y; b[j + 2] = x.z; b[j + 3] = x.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = Bs[k * kBLd + ThreadCol(tcol, j)];
    }
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
}

// ---- cp.async: global -> shared directly (multistage) ----------------------------------------

// cp.async: `bytes` from global `src` to shared `dst`, zero-filled when !valid (then nothing is
// read; src is any valid address). Before sm_80: plain loads and stores.
__device__ __forceinline__ void CopyAsync4(float* dst, const float* src, bool valid) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src),
               "r"(valid ? 4 : 0));
#else
  *dst = valid ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void CopyAsync16(float* dst, const float* src, bool valid) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(valid ? 16 : 0));
#else
  *reinterpret_cast<float4*>(dst) =
      valid ? *reinterpret_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
}

__device__ __forceinline__ void CopyCommit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most `kPending` committed groups of this thread are still in flight.
template <int kPending>
__device__ __forceinline__ void CopyWait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Global -> one shared-memory stage, asynchronously: the A tile at (m0, k0), transposed
// (As[k][m]), and the B tile at (k0, n0).
__device__ __forceinline__ void CopyTiles(const float* __restrict__ A, const float* __restrict__ B,
                                          int M, int N, int K, int m0, int n0, int k0, int tid,
                                          bool b_vec, float* __restrict__ stage) {
  float* As = stage;
  float* Bs = stage + kAElems;
#pragma unroll
  for (int p = 0; p < kAElemsPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if ((kBM * kBK) % kThreads == 0 || idx < kBM * kBK) {
      const int row = idx / kBK;
      const int kc = idx % kBK;
      const int gm = m0 + row;
      const int gk = k0 + kc;
      const bool valid = gm < M && gk < K;
      CopyAsync4(&As[kc * kALd + row], valid ? A + static_cast<long long>(gm) * K + gk : A, valid);
    }
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kBChunks % kThreads == 0 || idx < kBChunks) {
      const int row = idx / (kBN / 4);
      const int nc = (idx % (kBN / 4)) * 4;
      const int gk = k0 + row;
      const int gn = n0 + nc;
      float* dst = &Bs[row * kBLd + nc];
      const float* src = B + static_cast<long long>(gk < K ? gk : 0) * N;
      if (gk >= K || gn >= N) {
        CopyAsync16(dst, B, false);
      } else if (b_vec && gn + 4 <= N) {
        CopyAsync16(dst, src + gn, true);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const bool valid = gn + i < N;
          CopyAsync4(dst + i, valid ? src + gn + i : B, valid);
        }
      }
    }
  }
}

// CopyTiles for the block's tile pair at step k0 / kBK.
__device__ __forceinline__ void CopyTiles(const BlockTile& t, int k0, float* __restrict__ stage) {
  CopyTiles(t.A, t.B, t.M, t.N, t.K, t.m0, t.n0, k0, t.tid, t.b_vec, stage);
}

// Offsets (in floats) of this thread's copies from the tile origin: A at (m0, k0), B at (k0, n0),
// edge rows and chunks clamped as MakeChunkOffsets does.
struct CopyOffsets {
  int a[kAElemsPerThread];
  int b[kBPerThread];
};

__device__ __forceinline__ CopyOffsets MakeCopyOffsets(int tid, int N, int K, int rows, int cols) {
  CopyOffsets o;
#pragma unroll
  for (int p = 0; p < kAElemsPerThread; ++p) {
    const int idx = tid + p * kThreads;
    o.a[p] = static_cast<int>(static_cast<unsigned>(ClampedRow(idx / kBK, rows)) * K + idx % kBK);
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    o.b[p] = static_cast<int>(static_cast<unsigned>(idx / (kBN / 4)) * N +
                             ClampedCol((idx % (kBN / 4)) * 4, cols, 4));
  }
  return o;
}

// CopyTiles for a tile pair on the fast path (B 16-byte aligned; whole K step): no bounds checks.
__device__ __forceinline__ void CopyTilesUnchecked(const float* __restrict__ a_tile,
                                                  const float* __restrict__ b_tile, int tid,
                                                  const CopyOffsets& o, float* __restrict__ stage) {
  float* As = stage;
  float* Bs = stage + kAElems;
#pragma unroll
  for (int p = 0; p < kAElemsPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if ((kBM * kBK) % kThreads == 0 || idx < kBM * kBK) {
      CopyAsync4(&As[(idx % kBK) * kALd + idx / kBK], a_tile + o.a[p], true);
    }
  }
#pragma unroll
  for (int p = 0; p < kBPerThread; ++p) {
    const int idx = tid + p * kThreads;
    if (kBChunks % kThreads == 0 || idx < kBChunks) {
      CopyAsync16(&Bs[(idx / (kBN / 4)) * kBLd + (idx % (kBN / 4)) * 4], b_tile + o.b[p],
                  true);
    }
  }
}

// ---- The main loops, one per pipeline: accum += this block's share of A * B -----------------
//
// Each works on a copy of `accum` of its own, copied back at its end, rather than on the caller's
// array: NVVM then promotes the accumulators to registers before it optimizes the loop, as when
// the loops were part of the kernel (on the caller's array, the PTX and SASS of the cp.async and
// split-K candidates changed). The copies cost nothing once inlined.

__device__ __forceinline__ void ZeroAccumulators(Accumulators& acc) {
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0.0f;
  }
}

__device__ __forceinline__ void CopyAccumulators(const Accumulators& from, Accumulators& to) {
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) to[i][j] = from[i][j];
  }
}

// Register-staged, one stage (db=0; the seed's pipeline): each step's loads wait for the math of
// the step before, with the seed's checked loads throughout. Never split (split-K needs db=1).
__device__ __forceinline__ void SingleStageMainLoop(const BlockTile& t, int steps, float* smem,
                                                    Accumulators& accum) {
  Accumulators acc;
  CopyAccumulators(accum, acc);
  Staging staging;
  LoadTiles(t, 0, staging);
  StoreTiles(smem, t.tid, staging);
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    ComputeTile(smem, t.trow, t.tcol, acc);
    if (step + 1 < steps) {
      __syncthreads();
      LoadTiles(t, (step + 1) * kBK, staging);
      StoreTiles(smem, t.tid, staging);
      __syncthreads();
    }
  }
  CopyAccumulators(acc, accum);
}

// The K steps the fast path may load: whole ones, and with CT_SCALAR_B none that holds B's last
// row (its clamped chunks read on past a row's end).
__device__ __forceinline__ int FastSteps(int K) { return kScalarB ? (K - 1) / kBK : K / kBK; }

// Register-staged, double-buffered (db=1): the next tile's global loads are in flight while this
// tile's math runs, then go to the other stage; one barrier per K step. Where A and B rows are
// 16-byte aligned (or VEC=1), every block, edge tiles clamped (ClampedRow), loads without bounds
// checks until the last, partial K step: through precomputed offsets in the one loop (iloop=0),
// or (iloop=1) in a loop of its own.
__device__ __forceinline__ void PipelinedMainLoop(const BlockTile& t, const StepRange& steps,
                                                  float* smem, Accumulators& accum) {
  Accumulators acc;
  CopyAccumulators(accum, acc);
  const int M = t.M, N = t.N, K = t.K, m0 = t.m0, n0 = t.n0, tid = t.tid;
  const bool a_vec = t.a_vec, b_vec = t.b_vec;
  Staging staging;
  if (!kPartialK || steps.begin < steps.end) {
    LoadTiles(t, steps.begin * kBK, staging);
    StoreTiles(smem, tid, staging);
  }
  __syncthreads();
  const bool fast = (kVec == 1 || ((a_vec || kScalarA) && (b_vec || (kScalarB && N >= 4)))) &&
                    OffsetsFitInt(N, K);
  const int rows = M - m0, cols = N - n0;  // of the C tile inside C
  const float* a_tile = t.A + static_cast<long long>(m0) * K;
  const float* b_tile = t.B + n0;
  int stage = 0;
  if constexpr (kInteriorLoop) {
    int step = steps.begin;
    if (fast) {
      // Steps whose next tile is a whole one load it here, one branch-free basic block per step,
      // through pointers (ptxas -O1 keeps the loads at the top of it; kernel-notes.md). The
      // checked loop below takes the rest: the last step, and the one that loads a partial last
      // tile.
      const int k_next = (steps.begin + 1) * kBK;
      ChunkPtrs q = MakeChunkPtrs(a_tile + k_next, b_tile + static_cast<long long>(k_next) * N,
                                  tid, N, K, rows, cols);
      const long long b_step = static_cast<long long>(kBK) * N;
      // Steps whose tile is whole (and this split's).
      const int whole_end = kPartialK ? min(FastSteps(K), steps.end) : FastSteps(K);
      for (const int fast_steps = whole_end - 1; step < fast_steps; ++step) {
        LoadTilesStepped(tid, b_step, q, staging);
        ComputeTile(smem + stage * kStageElems, t.trow, t.tcol, acc);
        StoreTiles(smem + (stage ^ 1) * kStageElems, tid, staging);
        __syncthreads();
        stage ^= 1;
      }
    }
    // Blocks with misaligned rows, and the last steps of the others: checked loads.
    for (; step < steps.end; ++step) {
      const bool more = step + 1 < steps.end;
      if (more) LoadTiles(t, (step + 1) * kBK, staging);
      ComputeTile(smem + stage * kStageElems, t.trow, t.tcol, acc);
      if (more) StoreTiles(smem + (stage ^ 1) * kStageElems, tid, staging);
      __syncthreads();
      stage ^= 1;
    }
  } else {
    const ChunkOffsets offsets = MakeChunkOffsets(tid, N, K, rows, cols);
    for (int step = steps.begin; step < steps.end; ++step) {
      const bool more = step + 1 < steps.end;
      const int k_next = (step + 1) * kBK;
      // The next tile's global loads are in flight while this tile's math runs.
      if (more) {
        if (fast && (kScalarB ? k_next / kBK < FastSteps(K) : k_next + kBK <= K)) {
          LoadTilesUnchecked(a_tile + k_next, b_tile + static_cast<long long>(k_next) * N, tid,
                            offsets, staging);
        } else {
          LoadTiles(t, k_next, staging);
        }
      }
      ComputeTile(smem + stage * kStageElems, t.trow, t.tcol, acc);
      // The other stage was last read before the previous barrier, so it is free to overwrite.
      if (more) StoreTiles(smem + (stage ^ 1) * kStageElems, tid, staging);
      __syncthreads();
      stage ^= 1;
    }
  }
  CopyAccumulators(acc, accum);
}

// cp.async, kStages shared-memory stages (stages > 0): tiles step .. step + STAGES - 2 are in
// flight while step's math runs. One group is committed per tile slot (empty past the end), so
// "all but STAGES - 2 groups done" means tile `step` has landed for this thread; the barrier then
// makes every thread's copies visible and frees the stage read in the previous step for the next
// copy. A moves element by element (a_vec is not used). Never split (split-K needs db=1).
__device__ __forceinline__ void MultistageMainLoop(const BlockTile& t, int steps, float* smem,
                                                   Accumulators& accum) {
  Accumulators acc;
  CopyAccumulators(accum, acc);
  const int M = t.M, N = t.N, K = t.K, m0 = t.m0, n0 = t.n0, tid = t.tid;
  const bool b_vec = t.b_vec;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) CopyTiles(t, s * kBK, smem + s * kStageElems);
    CopyCommit();
  }
  // Every block copies without bounds checks until the last, partial K step (edge tiles with
  // their rows and chunks clamped), where B rows are 16-byte aligned.
  const bool fast = b_vec && OffsetsFitInt(N, K);
  const CopyOffsets offsets = MakeCopyOffsets(tid, N, K, M - m0, N - n0);
  const float* a_tile = t.A + static_cast<long long>(m0) * K;
  const float* b_tile = t.B + n0;
  int read_stage = 0;
  int write_stage = kStages - 1;
  for (int step = 0; step < steps; ++step) {
    CopyWait<kStages - 2>();
    __syncthreads();
    if (step + kStages - 1 < steps) {
      const int k_next = (step + kStages - 1) * kBK;
      if (fast && k_next + kBK <= K) {
        CopyTilesUnchecked(a_tile + k_next, b_tile + static_cast<long long>(k_next) * N, tid,
                          offsets, smem + write_stage * kStageElems);
      } else {
        CopyTiles(t, k_next, smem + write_stage * kStageElems);
      }
    }
    CopyCommit();
    ComputeTile(smem + read_stage * kStageElems, t.trow, t.tcol, acc);
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  CopyAccumulators(acc, accum);
}

// ---- Epilogues: the register tile -> C -------------------------------------------------------

// acc -> C, or added to what C holds (`accumulate`: a later split of split-K, C read past L1).
__device__ __forceinline__ void StoreTile(float* __restrict__ C, int M, int N, int m0, int n0,
                                          int trow, int tcol, bool accumulate,
                                          const Accumulators& acc) {
  const bool c_vec = kTN % 4 == 0 && N % 4 == 0 && IsAligned<16>(C);
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int gm = m0 + trow * kTM + i;
    if (gm >= M) continue;
    float* c_row = C + static_cast<long long>(gm) * N;
    if constexpr (kTN % 4 == 0) {
#pragma unroll
      for (int j = 0; j < kTN; j += 4) {
        const int gn = n0 + ThreadCol(tcol, j);
        if (c_vec && gn + 4 <= N) {
          float4 v = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
          if (accumulate) {
            const float4 o = __ldcg(reinterpret_cast<const float4*>(c_row + gn));
            v.x += o.x; v.y += o.y; v.z += o.z; v.w += o.w;
          }
          *reinterpret_cast<float4*>(c_row + gn) = v;
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            if (gn + q < N) {
              c_row[gn + q] = accumulate ? acc[i][j + q] + __ldcg(c_row + gn + q) : acc[i][j + q];
            }
          }
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const int gn = n0 + ThreadCol(tcol, j);
        if (gn < N) c_row[gn] = accumulate ? acc[i][j] + __ldcg(c_row + gn) : acc[i][j];
      }
    }
  }
}

// C's rows are misaligned (N % 4 != 0: the class built with CT_SCALAR_B) wherever a warp-tiled
// module spreads its columns: there StoreTile writes each float4 group as four scalar stores, 4
// bytes of every 16 a warp store, four instructions for each sector (Nsight Compute on an H100,
// kernel-notes.md, session 29: 7.1 bytes written a sector, 4x the store wavefronts, and the
// kernel 11-16% slower than at N % 4 == 0). Stores that do not add into C go through shared
// memory instead (the stages the main loop is done with), so that each store writes 32
// consecutive floats of a row. The aligned class compiles as before.
constexpr int kSmemFloats = (kStages > 0 ? kStages : kDoubleBuffer ? 2 : 1) * kStageElems;
constexpr bool kStagedC = kSpread && kScalarB && kThreads * 4 <= kSmemFloats;

// acc -> C through shared memory (kStagedC), one thread row and float4 group at a time: warp w's
// 4 thread rows (lanes 8r .. 8r+7 in row r) hold 32 consecutive columns of group g, which the
// warp writes to its own 4 x 32 floats of `smem` and stores back one row an instruction, lane l
// column l. Every thread of the block calls it (two block barriers: the main loop's last reads of
// `smem` before, the next tile's main loop after).
__device__ __forceinline__ void StoreTileStaged(float* __restrict__ C, int M, int N, int m0, int n0,
                                                int tid, int trow, int tcol,
                                                const Accumulators& acc, float* smem) {
  const int lane = tid % 32;
  float* const rows = smem + (tid / 32) * 128;  // this warp's 4 x 32 floats
  const int r = lane / 8;                        // this thread's row of the 4 (trow % 4)
  const int warp_row0 = trow - r;                // the warp's first thread row
  const int warp_col0 = tcol - lane % 8;         // the warp's first thread column (of 8)
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; j += 4) {
      *reinterpret_cast<float4*>(rows + r * 32 + (lane % 8) * 4) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      __syncwarp();
      const int gn = n0 + ThreadCol(warp_col0, j) + lane;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int gm = m0 + (warp_row0 + q) * kTM + i;
        if (gm < M && gn < N) C[static_cast<long long>(gm) * N + gn] = rows[q * 32 + lane];
      }
      __syncwarp();
    }
  }
  __syncthreads();
}

// The epilogue of a tile no other block adds to: StoreTile, or StoreTileStaged in its class.
__device__ __forceinline__ void StoreWholeTile(float* __restrict__ C, int M, int N, int m0, int n0,
                                               int tid, int trow, int tcol,
                                               const Accumulators& acc, float* smem) {
  if constexpr (kStagedC) {
    StoreTileStaged(C, M, N, m0, n0, tid, trow, tcol, acc, smem);
  } else {
    StoreTile(C, M, N, m0, n0, trow, tcol, /*accumulate=*/false, acc);
  }
}

#if CT_SPLITK > 1 || CT_SK > 0
// The turn counter's accesses: an acquire load and a release store at GPU scope.
__device__ __forceinline__ unsigned int LoadAcquire(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void StoreRelease(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Split-K hand-over: splits after the first add to what the earlier ones wrote, in split order,
// so results do not vary from run to run. The turn counter is read with acquire by one thread;
// the barrier passes its view on to the block (the pattern of CUTLASS's serial split-K), and C is
// read past L1 (ld.global.cg). A grid that does not split (more C tiles than turn counters, or one
// K step) leaves the counters alone: `tile` may lie past their end.
__device__ __forceinline__ void SplitKStoreTile(float* __restrict__ C, int M, int N, int m0, int n0,
                                                int tid, int trow, int tcol, const TileSplit& ts,
                                                const Accumulators& acc) {
  unsigned int* const turn = &cutune_splitk_turn[ts.splits > 1 ? ts.tile : 0];
  const bool accumulate = ts.split > 0;
  if (accumulate) {
    if (tid == 0) {
      while (LoadAcquire(turn) != static_cast<unsigned int>(ts.split)) __nanosleep(100);
    }
    __syncthreads();
  }
  StoreTile(C, M, N, m0, n0, trow, tcol, accumulate, acc);
  // Every thread's C writes come before the hand-over (barrier, then a release store).
  if (ts.splits > 1) {
    __syncthreads();
    if (tid == 0) StoreRelease(turn, ts.split + 1u == ts.splits ? 0u : ts.split + 1u);
  }
}
#endif

#if CT_SPLITK > 1
// ---- Split-K through partials: every split stores, the last one adds them in split order ----

// Accumulator e of the thread's register tile (row-major over TM x TN).
constexpr int kAccumulators = kTM * kTN;
static_assert(kAccumulators % 4 == 0, "split-K partials move float4 chunks of accumulators");
constexpr int kAccChunks = kAccumulators / 4;

// Chunk c (accumulators 4c .. 4c+3) of thread tid's partial in slot `slot` (one slot per block:
// tile * splits + split). Chunk-major with threads fastest, so each warp access is 512
// contiguous bytes.
__device__ __forceinline__ float4* PartialChunk(unsigned int slot, int chunk, int tid) {
  return &cutune_splitk_partials[(static_cast<long long>(slot) * kAccChunks + chunk) * kThreads +
                                 tid];
}

__device__ __forceinline__ float4 AccChunk(const Accumulators& acc, int c) {
  const int e = 4 * c;
  return make_float4(acc[e / kTN][e % kTN], acc[(e + 1) / kTN][(e + 1) % kTN],
                     acc[(e + 2) / kTN][(e + 2) % kTN], acc[(e + 3) / kTN][(e + 3) % kTN]);
}

__device__ __forceinline__ void SetAccChunk(Accumulators& acc, int c, const float4& v) {
  const int e = 4 * c;
  acc[e / kTN][e % kTN] = v.x;
  acc[(e + 1) / kTN][(e + 1) % kTN] = v.y;
  acc[(e + 2) / kTN][(e + 2) % kTN] = v.z;
  acc[(e + 3) / kTN][(e + 3) % kTN] = v.w;
}

// The split-K epilogue. When the grid's partials fit the module's memory, each split stores its
// partial and counts itself in (a fence, then the tile's counter); the split that arrives last
// sums the tile's partials in split order, its own read back like the others, and stores C. No
// split waits for another, and the sum is the same whichever split arrives last. Otherwise the
// splits add into C in turn (SplitKStoreTile).
__device__ __forceinline__ void SplitKEpilogue(float* __restrict__ C, int M, int N, int m0, int n0,
                                               int tid, int trow, int tcol, const TileSplit& ts,
                                               Accumulators& acc, float* smem) {
  const bool fits = static_cast<long long>(gridDim.x) * (kBM * kBN) <= CT_PARTIALS;
  if (ts.splits == 1 || !fits) {
    SplitKStoreTile(C, M, N, m0, n0, tid, trow, tcol, ts, acc);
    return;
  }
  const unsigned int first_slot = ts.tile * ts.splits;
#pragma unroll
  for (int c = 0; c < kAccChunks; ++c) __stcg(PartialChunk(first_slot + ts.split, c, tid), AccChunk(acc, c));
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (tid == 0) {
    unsigned int* const count = &cutune_splitk_turn[ts.tile];
    last = atomicAdd(count, 1u) + 1u == ts.splits;
    if (last) *count = 0;  // every split has counted: nothing else reads it in this launch
    __threadfence();
  }
  __syncthreads();
  if (!last) return;
  // In groups of chunks, so that the loads in flight fit beside the accumulators (all 32 chunks
  // of a 128-accumulator tile at once spill).
  constexpr int kGroup = kAccChunks > 16 ? 16 : kAccChunks;
#pragma unroll
  for (int g = 0; g < kAccChunks; g += kGroup) {
#pragma unroll
    for (int c = g; c < g + kGroup; ++c) SetAccChunk(acc, c, __ldcg(PartialChunk(first_slot, c, tid)));
    for (unsigned int s = 1; s < ts.splits; ++s) {
#pragma unroll
      for (int c = g; c < g + kGroup; ++c) {
        const float4 p = __ldcg(PartialChunk(first_slot + s, c, tid));
        float4 v = AccChunk(acc, c);
        v.x += p.x; v.y += p.y; v.z += p.z; v.w += p.w;
        SetAccChunk(acc, c, v);
      }
    }
  }
  StoreWholeTile(C, M, N, m0, n0, tid, trow, tcol, acc, smem);
}
#endif

#if CT_SK > 0
// ---- Stream-K: persistent blocks, an equal share of the iterations each ----------------------

// This block's share of the tiles x steps iterations: [first, end), tile-major.
struct IterationRange {
  long long first;
  long long end;
};

__device__ __forceinline__ IterationRange BlockIterations(long long total) {
  const long long workers = gridDim.x;
  return {blockIdx.x * total / workers, (blockIdx.x + 1) * total / workers};
}

// The block whose share holds iteration i: the last b with b * total / G <= i.
__device__ __forceinline__ unsigned int BlockOfIteration(long long i, long long total) {
  return static_cast<unsigned int>(((i + 1) * gridDim.x - 1) / total);
}

// One tile's part of a block's share: K steps [range.begin, range.end) of `steps`. A whole tile is
// stored; a part is handed over in block order through the turn counter of the block holding the
// tile's first steps (position 0 stores, later ones add; the last resets the counter to 0).
__device__ __forceinline__ void StreamKStoreTile(float* __restrict__ C, int M, int N, int m0, int n0,
                                                 int tid, int trow, int tcol,
                                                 const StepRange& range, int steps,
                                                 long long tile_first, long long total,
                                                 const Accumulators& acc, float* smem) {
  if (range.begin == 0 && range.end == steps) {
    StoreWholeTile(C, M, N, m0, n0, tid, trow, tcol, acc, smem);
    return;
  }
  const unsigned int head = BlockOfIteration(tile_first, total);
  const unsigned int position = blockIdx.x - head;
  unsigned int* const turn = &cutune_splitk_turn[head];
  if (position > 0) {
    if (tid == 0) {
      while (LoadAcquire(turn) != position) __nanosleep(100);
    }
    __syncthreads();
  }
  StoreTile(C, M, N, m0, n0, trow, tcol, /*accumulate=*/position > 0, acc);
  __syncthreads();
  if (tid == 0) StoreRelease(turn, range.end == steps ? 0u : position + 1u);
}

// The whole kernel for stream-K: each tile part of this block's share, last tile first (so the
// part every other block of a tile waits for, its first K steps, is the first this block does).
__device__ __forceinline__ void StreamKTiles(const float* __restrict__ A,
                                             const float* __restrict__ B, float* __restrict__ C,
                                             int M, int N, int K, float* smem) {
  const int tiles_n = CeilDiv<kBN>(N);
  const int steps = CeilDiv<kBK>(K);
  const long long total = static_cast<long long>(CeilDiv<kBM>(M)) * tiles_n * steps;
  const IterationRange share = BlockIterations(total);
  const int tid = threadIdx.x;
  const ThreadTile thread = ThreadTileOf(tid);
  const bool a_vec = kVec == 4 && K % 4 == 0 && IsAligned<16>(A);
  const bool b_vec = kVec == 4 && N % 4 == 0 && IsAligned<16>(B);
  for (long long end = share.end; end > share.first;) {
    const long long tile = (end - 1) / steps;
    const long long tile_first = tile * steps;
    const long long first = max(share.first, tile_first);
    const StepRange range{static_cast<int>(first - tile_first), static_cast<int>(end - tile_first)};
    const int m0 = static_cast<int>(tile / tiles_n) * kBM;
    const int n0 = static_cast<int>(tile % tiles_n) * kBN;
    const BlockTile t{A, B, M, N, K, m0, n0, tid, thread.row, thread.col, a_vec, b_vec};
    Accumulators acc;
    ZeroAccumulators(acc);
    PipelinedMainLoop(t, range, smem, acc);
    StreamKStoreTile(C, M, N, m0, n0, tid, thread.row, thread.col, range, steps, tile_first, total,
                     acc, smem);
    end = first;
  }
}
#endif

}  // namespace

// The dispatcher: where this block and thread work, then the candidate's main loop and epilogue.
extern "C" __global__ void CT_BOUNDS cutune_kernel(const float* __restrict__ A,
                                                    const float* __restrict__ B,
                                                    float* __restrict__ C, int M, int N, int K) {
  extern __shared__ float4 smem4[];  // float4 for 16-byte alignment of every stage
  float* smem = reinterpret_cast<float*>(smem4);
#if CT_SK > 0
  StreamKTiles(A, B, C, M, N, K, smem);
#else
  const int tiles_n = CeilDiv<kBN>(N);
  const TileSplit ts = BlockTileSplit(M, tiles_n);
  const int m0 = (ts.tile / tiles_n) * kBM;
  const int n0 = (ts.tile % tiles_n) * kBN;
  const int tid = threadIdx.x;
  const ThreadTile thread = ThreadTileOf(tid);
  const bool a_vec = kVec == 4 && K % 4 == 0 && IsAligned<16>(A);
  const bool b_vec = kVec == 4 && N % 4 == 0 && IsAligned<16>(B);
  const BlockTile t{A, B, M, N, K, m0, n0, tid, thread.row, thread.col, a_vec, b_vec};

  Accumulators acc;
  ZeroAccumulators(acc);
  const int steps = CeilDiv<kBK>(K);
  if constexpr (kStages > 0) {
    MultistageMainLoop(t, steps, smem, acc);
  } else if constexpr (kDoubleBuffer) {
    PipelinedMainLoop(t, SplitSteps(steps, ts), smem, acc);
  } else {
    SingleStageMainLoop(t, steps, smem, acc);
  }

  // The turn counters exist only in split-K modules.
#if CT_SPLITK > 1
  SplitKEpilogue(C, M, N, m0, n0, tid, thread.row, thread.col, ts, acc, smem);
#else
  StoreWholeTile(C, M, N, m0, n0, tid, thread.row, thread.col, acc, smem);
#endif
#endif  // CT_SK
}

#else  // CUTUNE_REFERENCE

// Trusted reference: one C element per thread iteration, accumulated in double.
extern "C" __global__ void cutune_reference(const float* A, const float* B, float* C, int M, int N,
                                            int K) {
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const long long m = i / N;
    const long long n = i % N;
    double sum = 0.0;
    for (int k = 0; k < K; ++k) {
      sum += static_cast<double>(A[m * K + k]) * static_cast<double>(B[k * static_cast<long long>(N) + n]);
    }
    C[i] = static_cast<float>(sum);
  }
}

#endif  // CUTUNE_REFERENCE
