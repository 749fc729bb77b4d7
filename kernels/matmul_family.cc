// The matmul family: C = A * B, f32, row-major, any M, N, K (kernels/matmul.cu).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/embedded.h"
#include "kernels/family.h"

namespace cutune::kernels {
namespace {

// Counters in a split-K module (CT_SEMAPHORES, 256 KiB): shapes with more C tiles than this run
// unsplit.
constexpr int64_t kSplitKMaxTiles = 65536;
// Floats of partial tiles in a split-K module (CT_PARTIALS, 16 MiB): grids whose partials
// (blocks x BM x BN) fit are summed by the last split, larger ones add into C in turn.
constexpr int64_t kSplitKPartials = int64_t{1} << 22;
// Turn counters in a stream-K module, one per block: the most blocks its grid has.
constexpr int64_t kStreamKMaxBlocks = 1024;

int64_t Threads(const Params& p) {
  return (Get(p, "bm") / Get(p, "tm")) * (Get(p, "bn") / Get(p, "tn"));
}

bool RegisterTiled(const Params& p) { return Get(p, "tm") * Get(p, "tn") > 1; }

// Mirrors the shared-memory layout in matmul.cu.
int64_t StageFloats(const Params& p) {
  const int64_t bm = Get(p, "bm"), bn = Get(p, "bn"), bk = Get(p, "bk"), pad = Get(p, "pad");
  const int64_t a = Get(p, "at") ? bk * (bm + pad) : bm * (bk + pad);
  return a + bk * (bn + pad);
}

class MatmulFamilyImpl final : public KernelFamily {
 public:
  MatmulFamilyImpl()
      : space_(
            {
                {"bm", {32, 64, 128, 256}, "block tile rows (of C)"},
                {"bn", {32, 64, 128, 256}, "block tile columns (of C)"},
                {"bk", {8, 16, 32}, "K depth of one shared-memory step"},
                {"tm", {1, 4, 8, 16}, "register tile rows per thread"},
                {"tn", {1, 4, 8, 16}, "register tile columns per thread"},
                {"vec", {1, 4}, "float4 global loads where K/N alignment allows"},
                {"at", {0, 1}, "store the A tile transposed in shared memory"},
                {"pad", {0, 4}, "floats of padding per shared-memory row"},
                {"db", {0, 1}, "double-buffered shared memory with register prefetch"},
                {"warp", {0, 1}, "warps as 4x8 blocks of thread tiles, columns spread"},
                {"minb", {0, 1, 2}, "__launch_bounds__ minimum blocks per SM (0: none)"},
                {"stages",
                 {0, 2, 3, 4},
                 "cp.async shared-memory pipeline depth (0: stage through registers, see db)"},
                {"iloop",
                 {0, 1},
                 "interior blocks run a loop of their own with pointer-stepped loads (db=1)"},
                {"ptxo", {3, 1}, "ptxas optimization level (-O3 default, -O1)"},
                {"splitk",
                 {1, 2, 4, 8, 16},
                 "K splits per C tile, summed in split order (for grids too small to fill the "
                 "GPU)"},
                // Added in space v8: configurations recorded before have none (sk=0).
                {"sk",
                 {0, 1, 2},
                 "stream-K: persistent blocks per SM, each an equal share of every tile's K "
                 "steps (0: one block per C tile)",
                 /*absent=*/0},
            },
            {
                {"bm % tm == 0 and bn % tn == 0",
                 {"bm", "bn", "tm", "tn"},
                 [](const Params& p) {
                   return Get(p, "bm") % Get(p, "tm") == 0 && Get(p, "bn") % Get(p, "tn") == 0;
                 }},
                {"tm x tn <= 128 accumulators per thread (more spill)",
                 {"tm", "tn"},
                 [](const Params& p) { return Get(p, "tm") * Get(p, "tn") <= 128; }},
                {"128-accumulator thread tiles (tm x tn = 128): bk=8, at most 256 threads, minb <= "
                 "1 "
                 "(bk=16 needs more than 255 registers)",
                 {"bm", "bn", "bk", "tm", "tn", "minb"},
                 [](const Params& p) {
                   return Get(p, "tm") * Get(p, "tn") < 128 ||
                          (Get(p, "bk") == 8 && Threads(p) <= 256 && Get(p, "minb") <= 1);
                 }},
                {"minb=1 only for 128-accumulator thread tiles (elsewhere minb 0 or 2 covers it)",
                 {"tm", "tn", "minb"},
                 [](const Params& p) {
                   return Get(p, "minb") != 1 || Get(p, "tm") * Get(p, "tn") == 128;
                 }},
                {"16-wide thread tiles (tm or tn = 16) with warp tiling (warp=1)",
                 {"tm", "tn", "warp"},
                 [](const Params& p) {
                   return (Get(p, "tm") < 16 && Get(p, "tn") < 16) || Get(p, "warp") == 1;
                 }},
                {"tm and tn are both 1 or both at least 4",
                 {"tm", "tn"},
                 [](const Params& p) { return (Get(p, "tm") == 1) == (Get(p, "tn") == 1); }},
                {"1x1 thread tiles only in the seed's 32x32x32 block tile",
                 {"bm", "bn", "bk", "tm", "tn"},
                 [](const Params& p) {
                   return RegisterTiled(p) ||
                          (Get(p, "bm") == 32 && Get(p, "bn") == 32 && Get(p, "bk") == 32);
                 }},
                {"register-tiled blocks have 128, 256 or 512 threads",
                 {"bm", "bn", "tm", "tn"},
                 [](const Params& p) {
                   const int64_t t = Threads(p);
                   return !RegisterTiled(p) || t == 128 || t == 256 || t == 512;
                 }},
                // Space v10: 128x32 and 32x128 tiles, split (kernel-notes.md, session 32: on an
                // H100 8192x32x8192 172.2 -> 155.3 us with 128x32 8x4 split 8, 16x8192x8192
                // 157.9 -> 138.0 us with 32x128 4x8 split 8; unsplit, or as 256x64 and 64x256,
                // they never came within 3% of a shape's winner).
                {"register-tiled blocks are at most twice as tall as wide or wide as tall, but "
                 "128x32 and 32x128 tiles that split K (splitk > 1)",
                 {"bm", "bn", "tm", "tn", "splitk"},
                 [](const Params& p) {
                   const int64_t bm = Get(p, "bm"), bn = Get(p, "bn");
                   if (!RegisterTiled(p) || (bm <= 2 * bn && bn <= 2 * bm)) return true;
                   return bm * bn == 128 * 32 && std::min(bm, bn) == 32 && Get(p, "splitk") > 1;
                 }},
                {"register tiles load float4 (vec=4) into a transposed A tile (at=1)",
                 {"tm", "tn", "vec", "at"},
                 [](const Params& p) {
                   return !RegisterTiled(p) || (Get(p, "vec") == 4 && Get(p, "at") == 1);
                 }},
                {"bk x (bm + bn) <= 4096 floats per shared-memory stage",
                 {"bm", "bn", "bk"},
                 [](const Params& p) {
                   return Get(p, "bk") * (Get(p, "bm") + Get(p, "bn")) <= 4096;
                 }},
                {"warp tiling (warp=1) needs whole 4x8 blocks of thread tiles",
                 {"bm", "bn", "tm", "tn", "warp"},
                 [](const Params& p) {
                   const int64_t rows = Get(p, "bm") / Get(p, "tm");
                   const int64_t cols = Get(p, "bn") / Get(p, "tn");
                   return Get(p, "warp") == 0 || (rows % 4 == 0 && cols % 8 == 0);
                 }},
                {"register-tiled blocks pipeline their tiles (db=1 or stages > 0)",
                 {"tm", "tn", "db", "stages"},
                 [](const Params& p) {
                   return !RegisterTiled(p) || Get(p, "db") == 1 || Get(p, "stages") > 0;
                 }},
                {"cp.async stages (stages > 0) with db=0, pad=4 and tm x tn >= 32",
                 {"tm", "tn", "pad", "db", "stages"},
                 [](const Params& p) {
                   return Get(p, "stages") == 0 ||
                          (Get(p, "db") == 0 && Get(p, "pad") == 4 &&
                           Get(p, "tm") * Get(p, "tn") >= 32);
                 }},
                {"minb x threads <= 512 (more caps registers below 128 per thread)",
                 {"bm", "bn", "tm", "tn", "minb"},
                 [](const Params& p) { return Get(p, "minb") * Threads(p) <= 512; }},
                // H200, kernel-notes.md: +3.5% at 4096^3 and 8192^3 for the 128x256, 16x8 winner
                // with ptxo=1; 20% slower on the 64x64x32, 8x4 tile that wins 8192x64x8192.
                {"iloop=1 only with db=1 and tm x tn >= 64 (slower on smaller thread tiles)",
                 {"tm", "tn", "db", "iloop"},
                 [](const Params& p) {
                   return Get(p, "iloop") == 0 ||
                          (Get(p, "db") == 1 && Get(p, "tm") * Get(p, "tn") >= 64);
                 }},
                // -O1 keeps the interior loop's global loads at its top, where -O3 sinks them
                // past most of the FFMAs (SASS); in the one-loop kernel it gained 0.6%.
                {"ptxo=1 only with iloop=1",
                 {"iloop", "ptxo"},
                 [](const Params& p) { return Get(p, "ptxo") == 3 || Get(p, "iloop") == 1; }},
                // Split-K pays where a shape has fewer C tiles than the GPU has block slots
                // (8192x64x8192: 128 tiles of 64x64); it is the small tiles such shapes use. 32x64
                // and 64x32 tiles split 4 ways reach 96% of cuBLAS at 16x8192x8192 (65.7% without
                // them), and the interior loop (iloop=1) split 2 ways 87% at 2048x512x8192 (80%
                // without): bench/results/kernel-notes.md, session 6.
                // 16 splits are for the smallest of them: 256x256x16384 has 16 tiles of 64x64
                // (kernel-notes.md, session 11). Space v9: 128x128 tiles of 64 or more
                // accumulators split 2 to 8 ways (2048x512x8192: 384 us split 4, against
                // stream-K's 421 us and the 64x128 tile's 409 us split 2 in the same run;
                // kernel-notes.md, sessions 19 and 21); more splits lose to the serial sum of
                // their 64 KiB partials, and minb=2 caps them at 128 registers, where they spill.
                // So does the 8x16 tile's interior loop split: one value (4-8 bytes) across its
                // main loop at 255 registers, where unsplit it takes 247.
                {"splitk > 1 only with db=1, stages=0 and pad=4, on block tiles of 32x64 to "
                 "64x128 with bk >= 16 (16 splits up to 64x64), or 128x128 tiles of tm x tn >= 64 "
                 "with minb <= 1 and at most 8 splits, but for the 8x16 interior loop",
                 {"bm", "bn", "bk", "tm", "tn", "pad", "db", "minb", "stages", "iloop", "splitk"},
                 [](const Params& p) {
                   const int64_t area = Get(p, "bm") * Get(p, "bn");
                   const int64_t splitk = Get(p, "splitk");
                   if (splitk == 1) return true;
                   if (Get(p, "db") != 1 || Get(p, "stages") != 0 || Get(p, "pad") != 4) {
                     return false;
                   }
                   if (Get(p, "bm") == 128 && Get(p, "bn") == 128) {
                     const bool spills = Get(p, "tn") == 16 && Get(p, "tm") == 8 &&
                                         Get(p, "iloop") == 1;
                     return Get(p, "tm") * Get(p, "tn") >= 64 && Get(p, "minb") <= 1 &&
                            splitk <= 8 && !spills;
                   }
                   return Get(p, "bk") >= 16 && area >= 32 * 64 &&
                          area <= (splitk == 16 ? 64 * 64 : 64 * 128);
                 }},
                // Stream-K evens out the last wave of any grid (4096^3: 1024 tiles of 128x128 on
                // 264 block slots) and fills under-filled ones by sharing K steps:
                // bench/results/kernel-notes.md, session 10.
                {"sk > 0 only with db=1, stages=0, splitk=1, pad=4, warp=1 and tm x tn >= 32",
                 {"tm", "tn", "pad", "db", "warp", "stages", "splitk", "sk"},
                 [](const Params& p) {
                   return Get(p, "sk") == 0 ||
                          (Get(p, "db") == 1 && Get(p, "stages") == 0 && Get(p, "splitk") == 1 &&
                           Get(p, "pad") == 4 && Get(p, "warp") == 1 &&
                           Get(p, "tm") * Get(p, "tn") >= 32);
                 }},
            }) {}

  std::string_view name() const override { return "matmul"; }
  std::string_view description() const override {
    return "f32 C = A * B, row-major, A MxK, B KxN, any M, N, K";
  }
  std::vector<std::string> dims() const override { return {"M", "N", "K"}; }
  std::string_view source() const override { return embedded::kMatmulSource; }
  int space_version() const override { return 10; }
  const Space& default_space() const override { return space_; }

  // The seed's 32x32 shared-memory tiled kernel: one C element per thread.
  Params baseline() const override {
    return {{"bm", 32},  {"bn", 32},    {"bk", 32},   {"tm", 1},   {"tn", 1},
            {"vec", 1},  {"at", 0},     {"pad", 0},   {"db", 0},   {"warp", 0},
            {"minb", 0}, {"stages", 0}, {"iloop", 0}, {"ptxo", 3}, {"splitk", 1},
            {"sk", 0}};
  }

  // Twelve members of the H200's portfolio (tables/nvidia-h200.json, space v10), chosen greedily
  // for the geometric mean over its 128 grid shapes of the best chosen member's time against the
  // shape's winner: 0.975 there, 0.952 on the H100's grid (ten of them are members there too);
  // from the baseline alone a quick sweep stopped 2-6x slower than the best
  // (bench/results/unseen-shapes.md, section 35). Split-K for small and K-heavy shapes, the big
  // tiles with and without stream-K.
  std::vector<Params> starters() const override {
    // One configuration a line, as FormatParams writes it.
    // clang-format off
    static const std::vector<Params> kStarters = ParamsList({
        "at=1,bk=16,bm=64,bn=64,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=2,stages=0,tm=8,tn=4,vec=4,warp=1",
        "at=1,bk=32,bm=64,bn=32,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=4,tn=4,vec=4,warp=0",
        "at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1",
        "at=1,bk=16,bm=32,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=4,tn=4,vec=4,warp=0",
        "at=1,bk=8,bm=64,bn=128,db=1,iloop=1,minb=0,pad=0,ptxo=1,sk=0,splitk=1,stages=0,tm=8,tn=8,vec=4,warp=1",
        "at=1,bk=16,bm=64,bn=64,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=8,stages=0,tm=8,tn=4,vec=4,warp=1",
        "at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=16,tn=8,vec=4,warp=1",
        "at=1,bk=32,bm=32,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=4,tn=4,vec=4,warp=0",
        "at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=2,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=8,tn=8,vec=4,warp=1",
        "at=1,bk=32,bm=32,bn=64,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=4,tn=4,vec=4,warp=0",
        "at=1,bk=16,bm=128,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=8,stages=0,tm=8,tn=4,vec=4,warp=0",
        "at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=2,pad=0,ptxo=1,sk=0,splitk=1,stages=0,tm=16,tn=4,vec=4,warp=1",
    });
    // clang-format on
    return kStarters;
  }

  // -D defines for every parameter; ptxo=1 adds the ptxas option as well, and split-K and
  // stream-K the number of turn counters their module holds.
  std::vector<std::string> Defines(const Params& params) const override {
    std::vector<std::string> options = DefinesFromParams(params);
    if (Get(params, "ptxo") == 1) options.push_back("--ptxas-options=-O1");
    if (Get(params, "splitk") > 1) {
      options.push_back("-DCT_SEMAPHORES=" + std::to_string(kSplitKMaxTiles));
      options.push_back("-DCT_PARTIALS=" + std::to_string(kSplitKPartials));
    }
    if (Get(params, "sk") > 0) {
      options.push_back("-DCT_SEMAPHORES=" + std::to_string(kStreamKMaxBlocks));
    }
    return options;
  }

  // Register-staged, double-buffered candidates with float4 loads (vec=4, db=1) take the
  // unchecked fast path on rows that are not 16-byte aligned only when compiled for it: K % 4
  // (A's rows) and N % 4 (B's rows) pick CT_SCALAR_A and CT_SCALAR_B, which load those chunks as
  // four scalars. Aligned shapes compile exactly as before (bench/results/kernel-notes.md,
  // session 16: the scalar loads in the aligned module moved its registers).
  std::vector<std::string> ShapeDefines(const Params& params, const Shape& shape) const override {
    std::vector<std::string> defines;
    if (shape.size() != 3 || Get(params, "vec") != 4 || Get(params, "db") != 1) return defines;
    if (shape[2] % 4 != 0) defines.push_back("-DCT_SCALAR_A=1");
    if (shape[1] % 4 != 0) defines.push_back("-DCT_SCALAR_B=1");
    return defines;
  }

  absl::Status ValidateShape(const Shape& shape) const override {
    return ValidateDims(shape, dims(), {{0, 2}, {2, 1}, {0, 1}});
  }

  int64_t ThreadsPerBlock(const Params& params) const override { return Threads(params); }

  int64_t SharedBytes(const Params& params) const override {
    const int64_t stages = Get(params, "stages") > 0 ? Get(params, "stages")
                           : Get(params, "db")     ? 2
                                                   : 1;
    return stages * StageFloats(params) * 4;
  }

  // One block per C tile and K split. A shape splits at most once per K step, and not at all
  // when it has more C tiles than the module has turn counters. Stream-K: sk blocks per SM, at
  // most one per (tile, K step) and as many as the module has turn counters.
  LaunchGeometry Geometry(const Params& params, const Shape& shape, int sm_count) const override {
    LaunchGeometry geometry;
    const int64_t tiles =
        CeilDiv(shape[0], Get(params, "bm")) * CeilDiv(shape[1], Get(params, "bn"));
    geometry.block[0] = static_cast<uint32_t>(Threads(params));
    geometry.dynamic_shared_bytes = static_cast<uint32_t>(SharedBytes(params));
    if (Get(params, "sk") > 0) {
      const int64_t iterations = tiles * CeilDiv(shape[2], Get(params, "bk"));
      geometry.grid[0] = static_cast<uint32_t>(
          std::min({iterations, Get(params, "sk") * std::max(sm_count, 1), kStreamKMaxBlocks}));
      return geometry;
    }
    const int64_t splits =
        tiles > kSplitKMaxTiles
            ? 1
            : std::max<int64_t>(
                  1, std::min(Get(params, "splitk"), CeilDiv(shape[2], Get(params, "bk"))));
    geometry.grid[0] = static_cast<uint32_t>(tiles * splits);
    return geometry;
  }

  // The terms of matmul's time (fitted per member over a grid: bench/results/unseen-shapes.md,
  // section 14), each for the busiest SM: its blocks' multiply-adds of whole tiles (padding
  // included) counted as if it ran one block at a time and as if it ran `resident` at once (a
  // lone block is latency-bound, a full SM throughput-bound), its blocks' epilogues (stores;
  // split-K's partials and their sum; stream-K's tile parts, each added into C), the longest
  // chain of hand-overs through one tile (they run one after another), and the operands' loads
  // (A once per column of tiles, B once per row) over the SMs.
  std::vector<double> CostTerms(const Params& params, const Shape& shape,
                                const LaunchGeometry& geometry, int sm_count,
                                int resident) const override {
    const int64_t bm = Get(params, "bm"), bn = Get(params, "bn"), bk = Get(params, "bk");
    const int64_t tiles_m = CeilDiv(shape[0], bm), tiles_n = CeilDiv(shape[1], bn);
    const int64_t tiles = tiles_m * tiles_n;
    const int64_t steps = CeilDiv(shape[2], bk);
    const int64_t sms = std::max(sm_count, 1);
    const int64_t blocks = std::max<int64_t>(geometry.grid[0], 1);
    const double tile = static_cast<double>(bm * bn);
    int64_t block_steps = 0;  // the most K steps one block does
    double epilogue = 0;      // the most tile elements one block stores or adds
    int64_t chain = 1;        // the most blocks adding into one tile, in turn
    if (Get(params, "sk") > 0) {
      const int64_t total = tiles * steps;
      const int64_t share = total / blocks;  // blocks <= total, so at least 1
      block_steps = CeilDiv(total, blocks);
      const bool aligned = total % blocks == 0 && (share % steps == 0 || steps % share == 0);
      const int64_t parts = CeilDiv(block_steps, steps) + (aligned ? 0 : 1);
      epilogue = 2 * tile * static_cast<double>(parts);
      if (steps > share) chain = std::min(blocks, CeilDiv(steps, share) + (aligned ? 0 : 1));
      else if (!aligned) chain = 2;
    } else {
      const int64_t splits = std::max<int64_t>(blocks / std::max<int64_t>(tiles, 1), 1);
      block_steps = CeilDiv(steps, splits);
      epilogue = tile * static_cast<double>(splits > 1 ? splits + 1 : 1);
      chain = splits;
    }
    const double block_work = static_cast<double>(block_steps) * tile * static_cast<double>(bk);
    const double one_at_a_time = static_cast<double>(CeilDiv(blocks, sms));
    const double at_once = static_cast<double>(CeilDiv(blocks, sms * std::max(resident, 1)));
    const double loads = (static_cast<double>(shape[0]) * static_cast<double>(shape[2]) *
                              static_cast<double>(tiles_n) +
                          static_cast<double>(shape[2]) * static_cast<double>(shape[1]) *
                              static_cast<double>(tiles_m)) /
                         static_cast<double>(sms);
    return {one_at_a_time * block_work, at_once * block_work, at_once * epilogue,
            static_cast<double>(chain - 1) * tile, loads};
  }

  std::vector<int64_t> OutputTile(const Params& params) const override {
    return {Get(params, "bm"), Get(params, "bn"), 0};
  }

  LaunchGeometry ReferenceGeometry(const Shape& shape) const override {
    LaunchGeometry geometry;
    geometry.grid[0] = static_cast<uint32_t>(CeilDiv(shape[0] * shape[1], 256));
    geometry.block[0] = 256;
    return geometry;
  }

  double BytesMoved(const Shape& shape) const override {
    const double m = static_cast<double>(shape[0]);
    const double n = static_cast<double>(shape[1]);
    const double k = static_cast<double>(shape[2]);
    return (m * k + k * n + m * n) * 4.0;
  }
  double Flops(const Shape& shape) const override {
    return 2.0 * static_cast<double>(shape[0]) * static_cast<double>(shape[1]) *
           static_cast<double>(shape[2]);
  }
  bool memory_bound() const override { return false; }

  std::vector<KernelArgument> Arguments() const override {
    using Role = KernelArgument::Role;
    return {{"A", Role::kInput, {0, 2}},  {"B", Role::kInput, {2, 1}},
            {"C", Role::kOutput, {0, 1}}, {"M", Role::kDimension, {0}},
            {"N", Role::kDimension, {1}}, {"K", Role::kDimension, {2}}};
  }
  Concurrency LaunchConcurrency(const Params& params) const override {
    return Get(params, "splitk") > 1 || Get(params, "sk") > 0 ? Concurrency::kOneModulePerStream
                                                               : Concurrency::kAny;
  }
  // f32 accumulation against a double reference: relative L2 error grows like 2^-24 sqrt(K).
  Verification verification() const override { return {.exact = false, .max_rel_error = 1e-4}; }

 private:
  Space space_;
};

}  // namespace

const KernelFamily& MatmulFamily() {
  static const MatmulFamilyImpl* const family = new MatmulFamilyImpl();
  return *family;
}

}  // namespace cutune::kernels
