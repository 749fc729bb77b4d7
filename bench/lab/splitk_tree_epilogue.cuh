// LAB (bench/lab/splitk-tree.sh): split-K partials summed up a tree of pairwise sums, the
// epilogue of the session-18 patch (bench/lab/session18/*.patch). The lab script writes it into
// a copy of kernels/matmul.cu in place of the shipped SplitKEpilogue (from "// The split-K
// epilogue." to the end of its #if block). CT_LAB_NOSUM=1 stores each split's partial and
// leaves (C unwritten, so the check fails; its time is the main loop's and the partial's store).
// Split-K's tree: whether this block is the second of two children to reach their parent, whose
// counter is the one of the boundary between them (the right child's first split - 1). Every
// thread's partial stores come first (a fence, a barrier); the second resets the counter (both
// children have counted: nothing else reads it in this launch).
__device__ __forceinline__ bool SecondChild(unsigned int first_slot, unsigned int left,
                                            unsigned int level, int tid) {
  __shared__ bool second;
  __threadfence();
  __syncthreads();
  if (tid == 0) {
    unsigned int* const count = &cutune_splitk_turn[first_slot + ((left + 1) << level) - 1];
    second = atomicAdd(count, 1u) == 1u;
    if (second) *count = 0;
    __threadfence();
  }
  __syncthreads();
  return second;
}

// The split-K epilogue. When the grid's partials fit the module's memory, a tile's splits are
// added pairwise up a binary tree over their indices: node j of level l is the sum of splits
// [j * 2^l, (j + 1) * 2^l), kept in the slot of its first split. Every split stores its partial;
// at each level, of the two children of a node the first to arrive leaves and the second adds
// their slots (left + right: the same bits whichever arrives last) into the parent's slot and
// goes up; the block completing the root adds into its registers and stores C. A node without a
// sibling (splits not a power of two) is already in its parent's slot. No split waits for
// another, the last sum is log2(splits) loads deep instead of splits deep and spread over the
// tile's blocks, and results do not vary from run to run. Otherwise the splits add into C in
// turn (SplitKStoreTile).
__device__ __forceinline__ void SplitKEpilogue(float* __restrict__ C, int M, int N, int m0, int n0,
                                               int tid, int trow, int tcol, const TileSplit& ts,
                                               Accumulators& acc) {
  const bool fits = static_cast<long long>(gridDim.x) * (kBM * kBN) <= CT_PARTIALS;
  if (ts.splits == 1 || !fits) {
    SplitKStoreTile(C, M, N, m0, n0, tid, trow, tcol, ts, acc);
    return;
  }
  const unsigned int first_slot = ts.tile * ts.splits;
#pragma unroll
  for (int c = 0; c < kAccChunks; ++c) {
    __stcg(PartialChunk(first_slot + ts.split, c, tid), AccChunk(acc, c));
  }
#ifdef CT_LAB_NOSUM
  return;  // lab: the main loop and the partial's store only (C is left unwritten: wrong answers)
#endif
  // The levels below the root (from here on the registers hold no sum: acc is only written).
  unsigned int node = ts.split, level = 0;
  for (unsigned int width = ts.splits; width > 2; width = (width + 1) / 2, ++level, node /= 2) {
    const unsigned int left = node & ~1u;
    if (left + 1 == width) continue;
    if (!SecondChild(first_slot, left, level, tid)) return;
    const unsigned int l = first_slot + (left << level), r = first_slot + ((left + 1) << level);
#pragma unroll
    for (int c = 0; c < kAccChunks; ++c) {
      const float4 a = __ldcg(PartialChunk(l, c, tid)), b = __ldcg(PartialChunk(r, c, tid));
      __stcg(PartialChunk(l, c, tid), make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
    }
  }
  // The root: two children, whatever the number of splits.
  if (!SecondChild(first_slot, 0, level, tid)) return;
  const unsigned int r = first_slot + (1u << level);
#pragma unroll
  for (int c = 0; c < kAccChunks; ++c) {
    const float4 a = __ldcg(PartialChunk(first_slot, c, tid)), b = __ldcg(PartialChunk(r, c, tid));
    SetAccChunk(acc, c, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
  }
  StoreTile(C, M, N, m0, n0, trow, tcol, /*accumulate=*/false, acc);
}
