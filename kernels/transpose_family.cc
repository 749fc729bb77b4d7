// The transpose family: out[c][r] = in[r][c], f32, any rows x cols (kernels/transpose.cu).
#include <string>
#include <vector>

#include "kernels/embedded.h"
#include "kernels/family.h"

namespace cutune::kernels {
namespace {

int64_t Threads(const Params& p) {
  // The naive kernel has vec=1 (a constraint), so one formula covers both variants.
  return Get(p, "tile") / Get(p, "vec") * Get(p, "rows");
}

// The padded and swizzle=1 kernels align each output row's window to a 32-byte sector, shifting
// it back by up to 7 elements (kernels/transpose.cu): their tile holds 8 more input rows and
// their grid one more tile row.
constexpr int64_t kHalo = 8;
bool SectorWindows(const Params& p) { return Get(p, "smem") != 0 && Get(p, "swizzle") != 2; }

// The input is read through the read-only path (NVVM emits ld.global.nc for the kernel's const
// __restrict__ pointer). Plain loads time the same and a texture object is slower on every shape
// measured (bench/results/kernel-notes.md, session 8), so the space has no load-path parameter.
class TransposeFamilyImpl final : public KernelFamily {
 public:
  TransposeFamilyImpl()
      : space_(
            {
                {"smem", {0, 1}, "1: stage tiles in shared memory; 0: the seed's naive kernel"},
                {"tile", {16, 32, 64}, "tile edge in elements"},
                {"rows", {1, 2, 4, 8, 16, 32}, "block rows; each thread moves tile/rows rows"},
                {"vec", {1, 2, 4}, "elements per global load/store (float2/float4 when aligned)"},
                {"pad", {0, 1}, "extra shared-memory column per tile row (bank conflicts)"},
                {"swizzle",
                 {0, 1, 2},
                 "1: XOR-swizzled shared-memory columns instead of padding; 2: 4x4 register "
                 "transposes, float4 shared-memory accesses swizzled at 16 bytes"},
                {"minb", {0, 2, 4}, "__launch_bounds__ minimum blocks per SM (0: none)"},
            },
            {
                {"tile % rows == 0",
                 {"tile", "rows"},
                 [](const Params& p) { return Get(p, "tile") % Get(p, "rows") == 0; }},
                {"tile % vec == 0",
                 {"tile", "vec"},
                 [](const Params& p) { return Get(p, "tile") % Get(p, "vec") == 0; }},
                {"pad and swizzle exclude each other",
                 {"pad", "swizzle"},
                 [](const Params& p) { return Get(p, "pad") == 0 || Get(p, "swizzle") == 0; }},
                {"the naive kernel (smem=0) has vec=1, pad=0, swizzle=0",
                 {"smem", "vec", "pad", "swizzle"},
                 [](const Params& p) {
                   return Get(p, "smem") != 0 ||
                          (Get(p, "vec") == 1 && Get(p, "pad") == 0 && Get(p, "swizzle") == 0);
                 }},
                {"swizzle=2 needs vec=4 and tile/rows a multiple of 4",
                 {"tile", "rows", "vec", "swizzle"},
                 [](const Params& p) {
                   return Get(p, "swizzle") != 2 ||
                          (Get(p, "vec") == 4 && (Get(p, "tile") / Get(p, "rows")) % 4 == 0);
                 }},
                {"threads per block (tile/vec x rows) between 32 and 1024",
                 {"tile", "rows", "vec"},
                 [](const Params& p) { return Threads(p) >= 32 && Threads(p) <= 1024; }},
            }) {}

  std::string_view name() const override { return "transpose"; }
  std::string_view description() const override {
    return "f32 out-of-place transpose, out[c][r] = in[r][c], any rows x cols";
  }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::string_view source() const override { return embedded::kTransposeSource; }
  int space_version() const override { return 2; }
  const Space& default_space() const override { return space_; }

  // The seed's padded 32x32 shared-memory kernel, one element per thread.
  Params baseline() const override {
    return {{"smem", 1}, {"tile", 32}, {"rows", 32}, {"vec", 1},
            {"pad", 1},  {"swizzle", 0}, {"minb", 0}};
  }

  // Four members of the H200's portfolio (tables/nvidia-h200.json), chosen as matmul's starters
  // are: within 1.5% of the winner at 90% of its 43 grid shapes (5.2% at worst). The descent
  // from the baseline alone finds the transposes' best too, in more evaluations.
  std::vector<Params> starters() const override {
    static const std::vector<Params> kStarters = ParamsList({
        "minb=0,pad=0,rows=16,smem=1,swizzle=1,tile=64,vec=2",
        "minb=0,pad=0,rows=16,smem=1,swizzle=2,tile=64,vec=4",
        "minb=0,pad=0,rows=8,smem=1,swizzle=2,tile=64,vec=4",
        "minb=2,pad=1,rows=8,smem=1,swizzle=0,tile=32,vec=2",
    });
    return kStarters;
  }

  std::vector<std::string> Defines(const Params& params) const override {
    return DefinesFromParams(params);
  }

  absl::Status ValidateShape(const Shape& shape) const override {
    return ValidateDims(shape, dims(), {{0, 1}});
  }

  int64_t ThreadsPerBlock(const Params& params) const override { return Threads(params); }

  int64_t SharedBytes(const Params& params) const override {
    if (Get(params, "smem") == 0) return 0;
    const int64_t tile = Get(params, "tile");
    const int64_t tile_rows = tile + (SectorWindows(params) ? kHalo : 0);
    return tile_rows * (tile + Get(params, "pad")) * 4;  // swizzle=2: pad=0
  }

  LaunchGeometry Geometry(const Params& params, const Shape& shape,
                          int /*sm_count*/) const override {
    const int64_t tile = Get(params, "tile");
    LaunchGeometry geometry;
    const int64_t tile_rows =
        SectorWindows(params) ? (shape[0] + kHalo - 2) / tile + 1 : CeilDiv(shape[0], tile);
    geometry.grid[0] = static_cast<uint32_t>(tile_rows * CeilDiv(shape[1], tile));
    geometry.block[0] = static_cast<uint32_t>(tile / Get(params, "vec"));
    geometry.block[1] = static_cast<uint32_t>(Get(params, "rows"));
    geometry.dynamic_shared_bytes = 0;  // the tile is a static array
    return geometry;
  }

  std::vector<int64_t> OutputTile(const Params& params) const override {
    return {Get(params, "tile"), Get(params, "tile")};
  }

  LaunchGeometry ReferenceGeometry(const Shape& shape) const override {
    LaunchGeometry geometry;
    geometry.grid[0] = static_cast<uint32_t>(CeilDiv(shape[0] * shape[1], 256));
    geometry.block[0] = 256;
    return geometry;
  }

  double BytesMoved(const Shape& shape) const override {
    return 2.0 * static_cast<double>(shape[0]) * static_cast<double>(shape[1]) * 4.0;
  }
  double Flops(const Shape&) const override { return 0; }
  bool memory_bound() const override { return true; }

  std::vector<KernelArgument> Arguments() const override {
    using Role = KernelArgument::Role;
    return {{"in", Role::kInput, {0, 1}},
            {"out", Role::kOutput, {1, 0}},
            {"rows", Role::kDimension, {0}},
            {"cols", Role::kDimension, {1}}};
  }
  Verification verification() const override { return {.exact = true, .max_rel_error = 0}; }

 private:
  Space space_;
};

}  // namespace

const KernelFamily& TransposeFamily() {
  static const TransposeFamilyImpl* const family = new TransposeFamilyImpl();
  return *family;
}

}  // namespace cutune::kernels
