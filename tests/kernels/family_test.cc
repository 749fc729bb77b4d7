// Kernel families without a GPU: registry, spaces, geometry on odd shapes, pruning, shapes,
// source hashes and device limit tables.
#include "kernels/family.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::kernels {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

DeviceLimits Limits(std::string_view arch) {
  absl::StatusOr<DeviceLimits> limits = DeviceLimits::ForArch(arch);
  EXPECT_TRUE(limits.ok()) << limits.status();
  return *limits;
}

// `base` with some parameters set to other values.
Params With(Params base, std::initializer_list<std::pair<const char*, int64_t>> changes) {
  for (const auto& [name, value] : changes) base[name] = value;
  return base;
}

uint64_t ValidCount(const Space& space) {
  uint64_t count = 0;
  space.ForEachValid([&](uint64_t, const Params&) { ++count; });
  return count;
}

TEST(RegistryTest, FindsFamiliesByNameAndListsThemWhenUnknown) {
  ASSERT_NE(FindFamily("transpose"), nullptr);
  ASSERT_NE(FindFamily("matmul"), nullptr);
  EXPECT_EQ(FindFamily("conv"), nullptr);
  EXPECT_EQ(AllFamilies().size(), 2u);
  absl::StatusOr<const KernelFamily*> found = GetFamily("matmul");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->name(), "matmul");
  absl::StatusOr<const KernelFamily*> missing = GetFamily("conv");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("unknown kernel family 'conv'"));
  EXPECT_THAT(missing.status().message(), HasSubstr("transpose, matmul"));
}

TEST(DefaultSpaceTest, SizesBaselinesAndDefines) {
  for (const KernelFamily* family : AllFamilies()) {
    const Space& space = family->default_space();
    const uint64_t valid = ValidCount(space);
    std::printf("%s: %llu cartesian, %llu valid\n", std::string(family->name()).c_str(),
                static_cast<unsigned long long>(space.CartesianSize()),
                static_cast<unsigned long long>(valid));
    EXPECT_TRUE(space.Check(family->baseline(), /*strict=*/true).ok()) << family->name();
    EXPECT_EQ(space.Violation(family->baseline()), std::nullopt) << family->name();
    // One -D define per parameter (a matmul ptxo=1 candidate adds a ptxas option; see below).
    EXPECT_EQ(family->Defines(family->baseline()).size(), space.parameters().size());
  }
  // The sweep-speed target is 400 transpose candidates; matmul's sweep (1910) stays under 2 min.
  EXPECT_EQ(ValidCount(TransposeFamily().default_space()), 423u);
  EXPECT_EQ(ValidCount(MatmulFamily().default_space()), 1910u);
  EXPECT_THAT(TransposeFamily().Defines({{"tile", 64}, {"rows", 8}}),
              ::testing::ElementsAre("-DCT_ROWS=8", "-DCT_TILE=64"));
  EXPECT_THAT(TransposeFamily().ReferenceDefines(), ::testing::ElementsAre("-DCUTUNE_REFERENCE"));
  // The ptxas optimization level is a compile option, not only a define.
  Params o1 = MatmulFamily().baseline();
  o1["ptxo"] = 1;
  EXPECT_THAT(MatmulFamily().Defines(o1), Contains("--ptxas-options=-O1"));
  EXPECT_THAT(MatmulFamily().Defines(MatmulFamily().baseline()),
              ::testing::Not(Contains(HasSubstr("ptxas"))));
  // A split-K module holds one turn counter per C tile, as many as Geometry splits at most.
  Params split = MatmulFamily().baseline();
  split["splitk"] = 4;
  EXPECT_THAT(MatmulFamily().Defines(split), Contains("-DCT_SEMAPHORES=65536"));
  // ... and 16 MiB of partial tiles (the grids that fit are summed by their last split).
  EXPECT_THAT(MatmulFamily().Defines(split), Contains("-DCT_PARTIALS=4194304"));
  EXPECT_THAT(MatmulFamily().Defines(MatmulFamily().baseline()),
              ::testing::Not(Contains(HasSubstr("SEMAPHORES"))));
  // A stream-K module holds one per block, as many as Geometry launches at most.
  Params stream = MatmulFamily().baseline();
  stream["sk"] = 2;
  EXPECT_THAT(MatmulFamily().Defines(stream), Contains("-DCT_SEMAPHORES=1024"));
}

// Each family's starters (where a quick sweep starts on a GPU no table knows) are distinct
// candidates of its default space, and leave room in a quick start's 32 for what a store knows.
TEST(DefaultSpaceTest, StartersAreCandidatesOfTheDefaultSpace) {
  for (const KernelFamily* family : AllFamilies()) {
    const std::vector<Params> starters = family->starters();
    EXPECT_GE(starters.size(), 4u) << family->name();
    EXPECT_LE(starters.size(), 16u) << family->name();
    for (size_t i = 0; i < starters.size(); ++i) {
      EXPECT_TRUE(family->default_space().Admit(starters[i], /*strict=*/true).ok())
          << family->name() << " " << FormatParams(starters[i]);
      // Written with every parameter: a quick start lists a configuration once by equality.
      EXPECT_EQ(family->default_space().Complete(starters[i]), starters[i]) << family->name();
      EXPECT_NE(starters[i], family->baseline()) << family->name();
      for (size_t j = 0; j < i; ++j) EXPECT_NE(starters[i], starters[j]) << family->name() << i;
    }
  }
}

TEST(StartersDeathTest, AMalformedStarterAbortsNamingIt) {
  EXPECT_DEATH(ParamsList({"tile=64", "tile"}), "bad configuration 'tile'");
}

// K or N not a multiple of 4: the register-staged, double-buffered float4 candidates are built
// for rows off 16-byte boundaries (their fast path loads scalars); nothing else changes, and
// aligned shapes build as without a shape.
TEST(ShapeDefinesTest, MatmulMisalignedRowsBuildTheScalarFastPath) {
  const KernelFamily& matmul = MatmulFamily();
  const Params big = {{"at", 1},    {"bk", 8},     {"bm", 128},   {"bn", 128}, {"db", 1},
                      {"iloop", 1}, {"minb", 0},   {"pad", 4},    {"ptxo", 3}, {"sk", 2},
                      {"splitk", 1}, {"stages", 0}, {"tm", 16},   {"tn", 8},   {"vec", 4},
                      {"warp", 1}};
  ASSERT_TRUE(matmul.ValidateParams(big).ok());
  EXPECT_THAT(matmul.ShapeDefines(big, {4096, 4096, 4096}), ::testing::IsEmpty());
  EXPECT_THAT(matmul.ShapeDefines(big, {}), ::testing::IsEmpty());
  EXPECT_THAT(matmul.ShapeDefines(big, {4096, 4096, 4097}),
              ::testing::ElementsAre("-DCT_SCALAR_A=1"));
  EXPECT_THAT(matmul.ShapeDefines(big, {4097, 4097, 4096}),
              ::testing::ElementsAre("-DCT_SCALAR_B=1"));
  EXPECT_THAT(matmul.ShapeDefines(big, {4097, 1023, 777}),
              ::testing::ElementsAre("-DCT_SCALAR_A=1", "-DCT_SCALAR_B=1"));
  // M's alignment does not matter: rows of A are K long, rows of B and C N long.
  EXPECT_THAT(matmul.ShapeDefines(big, {4097, 4096, 4096}), ::testing::IsEmpty());
  // The seed (vec=1: no float4 chunks) and cp.async (db=0) have no such fast path.
  EXPECT_THAT(matmul.ShapeDefines(matmul.baseline(), {4097, 1023, 777}), ::testing::IsEmpty());
  Params cp = big;
  cp["db"] = 0;
  cp["stages"] = 3;
  cp["iloop"] = 0;
  cp["sk"] = 0;
  cp["bk"] = 16;
  cp["tm"] = 8;
  cp["tn"] = 8;
  ASSERT_TRUE(matmul.ValidateParams(cp).ok());
  EXPECT_THAT(matmul.ShapeDefines(cp, {4097, 1023, 777}), ::testing::IsEmpty());
  EXPECT_THAT(TransposeFamily().ShapeDefines(TransposeFamily().baseline(), {8191, 4097}),
              ::testing::IsEmpty());
}

// Each constraint's `reads` names every parameter it reads: the walk that checks a rule as soon
// as its reads are set finds the candidates a check of every combination finds (all 17.7
// million of matmul's, as an odometer: the last parameter the fastest digit).
TEST(DefaultSpaceTest, ConstraintsReadOnlyTheParametersTheyName) {
  for (const KernelFamily* family : AllFamilies()) {
    const Space& space = family->default_space();
    const std::vector<Parameter>& parameters = space.parameters();
    Params params = space.At(0);
    std::vector<size_t> digits(parameters.size(), 0);
    std::vector<uint64_t> every;
    for (uint64_t index = 0; index < space.CartesianSize(); ++index) {
      if (!space.Violation(params)) every.push_back(index);
      for (size_t i = parameters.size(); i-- > 0;) {
        const std::vector<int64_t>& values = parameters[i].values;
        const bool carry = ++digits[i] == values.size();
        if (carry) digits[i] = 0;
        params[parameters[i].name] = values[digits[i]];
        if (!carry) break;
      }
    }
    std::vector<uint64_t> walked;
    space.ForEachValid([&](uint64_t index, const Params&) { walked.push_back(index); });
    EXPECT_EQ(walked, every) << family->name();
  }
}

TEST(DefaultSpaceTest, HoldsTheConfigurationsThePerformanceTargetsNeed) {
  const Params transpose = {{"smem", 1}, {"tile", 64}, {"rows", 16}, {"vec", 4},
                            {"pad", 0},  {"swizzle", 1}, {"minb", 0}};
  EXPECT_EQ(TransposeFamily().default_space().Violation(transpose), std::nullopt);
  const Params matmul = {{"bm", 128}, {"bn", 128},   {"bk", 8},    {"tm", 8},   {"tn", 8},
                         {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
                         {"minb", 2}, {"stages", 0}, {"iloop", 0}, {"ptxo", 3}, {"splitk", 1}};
  EXPECT_EQ(MatmulFamily().default_space().Violation(matmul), std::nullopt);
  // The 4096^3 winner on the H200 (bench/results/h200.md): 128 accumulators, its own interior
  // loop; and the lab's best with ptxas -O1 (kernel-notes.md).
  Params winner = {{"bm", 128}, {"bn", 128},   {"bk", 8},    {"tm", 16},  {"tn", 8},
                   {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
                   {"minb", 1}, {"stages", 0}, {"iloop", 1}, {"ptxo", 3}, {"splitk", 1}};
  EXPECT_EQ(MatmulFamily().default_space().Violation(winner), std::nullopt);
  winner["bn"] = 256;
  winner["pad"] = 0;
  winner["ptxo"] = 1;
  EXPECT_EQ(MatmulFamily().default_space().Violation(winner), std::nullopt);
  Params small = matmul;
  small["iloop"] = 1;
  small["ptxo"] = 3;
  EXPECT_EQ(MatmulFamily().default_space().Violation(small), std::nullopt);
  small["tn"] = 4;
  small["minb"] = 0;
  EXPECT_THAT(MatmulFamily().default_space().Violation(small),
              Optional(std::string(
                  "iloop=1 only with db=1 and tm x tn >= 64 (slower on smaller thread tiles)")));
  small = matmul;
  small["ptxo"] = 1;
  EXPECT_THAT(MatmulFamily().default_space().Violation(small),
              Optional(std::string("ptxo=1 only with iloop=1")));
  // Split-K: the lab's best for 8192x64x8192 (kernel-notes.md, session 4) is in; big tiles are not.
  Params skinny = With(matmul, {{"bn", 64}, {"bk", 16}, {"splitk", 4}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(skinny), std::nullopt);
  // Session 6's: 32x64 and 64x32 tiles split (16x8192x8192), the interior loop split
  // (2048x512x8192).
  const Params tiny = With(skinny, {{"bm", 32}, {"tm", 4}, {"tn", 4}, {"bk", 32}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(tiny), std::nullopt) << FormatParams(tiny);
  // A 128x128 tile splits only without a cap of 128 registers (minb=2 spills): space v9.
  const std::string split_rule =
      "splitk > 1 only with db=1, stages=0 and pad=4, on block tiles of 32x64 to 64x128 with "
      "bk >= 16 (16 splits up to 64x64), or 128x128 tiles of tm x tn >= 64 with minb <= 1 and at "
      "most 8 splits, but for the 8x16 interior loop";
  skinny["bn"] = 128;
  EXPECT_THAT(MatmulFamily().default_space().Violation(skinny), Optional(split_rule));
  // Space v9: the 4096^3 kernel split 4 ways, 2048x512x8192's best in the lab (kernel-notes.md,
  // session 19: 384 us against stream-K's 421 us); not 16 ways, not the 8x16 tile's interior
  // loop (it spills split), and not a 64x128 tile with bk=8.
  Params big = With(winner, {{"bn", 128}, {"minb", 0}, {"pad", 4}, {"splitk", 4}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(big), std::nullopt) << FormatParams(big);
  big["splitk"] = 16;
  EXPECT_THAT(MatmulFamily().default_space().Violation(big), Optional(split_rule));
  big = With(big, {{"splitk", 8}, {"tm", 8}, {"tn", 16}});
  EXPECT_THAT(MatmulFamily().default_space().Violation(big), Optional(split_rule));
  big["iloop"] = 0;
  big["ptxo"] = 3;
  EXPECT_EQ(MatmulFamily().default_space().Violation(big), std::nullopt) << FormatParams(big);
  big["bm"] = 64;
  big["tn"] = 8;
  EXPECT_THAT(MatmulFamily().default_space().Violation(big), Optional(split_rule));
  // 16 splits for the smallest of them: the lab's best at 256x256x16384 (kernel-notes.md,
  // session 11) is in, a 64x128 tile split 16 ways is not.
  Params deep =
      With(matmul, {{"bm", 64}, {"bn", 64}, {"bk", 32}, {"tm", 8}, {"tn", 4}, {"splitk", 16}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(deep), std::nullopt) << FormatParams(deep);
  deep["bn"] = 128;
  EXPECT_NE(MatmulFamily().default_space().Violation(deep), std::nullopt) << FormatParams(deep);
  // Space v10: 128x32 and 32x128 tiles, split only (kernel-notes.md, session 32: 8192x32x8192's
  // and 16x8192x8192's best on an H100); not unsplit, and no other 4:1 tile.
  const std::string aspect_rule =
      "register-tiled blocks are at most twice as tall as wide or wide as tall, but 128x32 and "
      "32x128 tiles that split K (splitk > 1)";
  Params tall =
      With(matmul,
           {{"bm", 128}, {"bn", 32}, {"bk", 16}, {"tm", 8}, {"tn", 4}, {"warp", 1}, {"splitk", 8}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(tall), std::nullopt) << FormatParams(tall);
  Params wide = With(tall, {{"bm", 32}, {"bn", 128}, {"tm", 4}, {"tn", 8}});
  EXPECT_EQ(MatmulFamily().default_space().Violation(wide), std::nullopt) << FormatParams(wide);
  tall["splitk"] = 1;
  EXPECT_THAT(MatmulFamily().default_space().Violation(tall), Optional(aspect_rule));
  wide = With(wide, {{"bm", 64}, {"bn", 256}, {"tm", 8}, {"tn", 8}, {"bk", 8}, {"splitk", 1}});
  EXPECT_THAT(MatmulFamily().default_space().Violation(wide), Optional(aspect_rule));
  // Issue 7's variants: float4 shared-memory transposes (the H200 winner), cp.async stages.
  Params transpose4 = transpose;
  transpose4["swizzle"] = 2;
  transpose4["rows"] = 8;
  EXPECT_EQ(TransposeFamily().default_space().Violation(transpose4), std::nullopt);
  transpose4["vec"] = 2;
  EXPECT_THAT(TransposeFamily().default_space().Violation(transpose4),
              Optional(std::string("swizzle=2 needs vec=4 and tile/rows a multiple of 4")));
  for (int64_t stages : {2, 3, 4}) {
    Params pipelined = matmul;
    pipelined["db"] = 0;
    pipelined["stages"] = stages;
    EXPECT_EQ(MatmulFamily().default_space().Violation(pipelined), std::nullopt) << stages;
    EXPECT_EQ(MatmulFamily().SharedBytes(pipelined), stages * (8 * 132 + 8 * 132) * 4);
  }
}

TEST(DefaultSpaceTest, ConstraintTextExplainsRejections) {
  Params params = TransposeFamily().baseline();
  params["rows"] = 64;
  EXPECT_THAT(TransposeFamily().default_space().Violation(params),
              Optional(std::string("tile % rows == 0")));
  params = TransposeFamily().baseline();
  params["swizzle"] = 1;
  EXPECT_THAT(TransposeFamily().default_space().Violation(params),
              Optional(std::string("pad and swizzle exclude each other")));
  params = MatmulFamily().baseline();
  params["tm"] = 4;
  EXPECT_THAT(MatmulFamily().default_space().Violation(params),
              Optional(std::string("tm and tn are both 1 or both at least 4")));
}

// Replays the kernels' 1-D tile numbering and checks that the blocks cover every element once.
void ExpectTilesCover(int64_t rows, int64_t cols, int64_t tile_rows, int64_t tile_cols,
                      uint64_t grid, const std::string& what) {
  const int64_t tiles_x = CeilDiv(cols, tile_cols);
  const int64_t tiles_y = CeilDiv(rows, tile_rows);
  ASSERT_EQ(grid, static_cast<uint64_t>(tiles_x * tiles_y)) << what;
  std::vector<bool> seen(static_cast<size_t>(tiles_x * tiles_y), false);
  for (uint64_t block = 0; block < grid; ++block) {
    const int64_t tile_col = static_cast<int64_t>(block) % tiles_x;
    const int64_t tile_row = static_cast<int64_t>(block) / tiles_x;
    ASSERT_LT(tile_row * tile_rows, rows) << what;
    ASSERT_LT(tile_col * tile_cols, cols) << what;
    const size_t tile = static_cast<size_t>(tile_row * tiles_x + tile_col);
    ASSERT_FALSE(seen[tile]) << what;
    seen[tile] = true;
  }
  EXPECT_GE(tiles_y * tile_rows, rows) << what;
  EXPECT_GE(tiles_x * tile_cols, cols) << what;
}

// Replays the store windows of the transpose's padded and swizzle=1 kernels: the block of tile
// row tr writes, of output row o (an input column), output columns [tr*tile - d, tr*tile - d +
// tile) with d = (o*rows + base) % 8, base being where `out` starts past a 32-byte sector (in
// floats; the launch contract guarantees 16 bytes, so 0 or 4). Checks that `tile_rows` tile rows
// write every output element exactly once and that each window starts on a sector, or at column
// 0, and reads only input rows the block loaded (tr*tile - 8 .. tr*tile + tile - 1).
void ExpectSectorWindowsCover(int64_t rows, int64_t cols, int64_t tile, int64_t tile_rows,
                              int64_t base, const std::string& what) {
  for (int64_t o = 0; o < cols; ++o) {
    const int64_t d = (o * rows + base) % 8;
    int64_t next = 0;  // the first output column of row o not yet written
    for (int64_t tr = 0; tr < tile_rows; ++tr) {
      const int64_t begin = std::max<int64_t>(tr * tile - d, 0);
      const int64_t end = std::min<int64_t>(tr * tile - d + tile, rows);
      if (begin >= end) continue;
      ASSERT_EQ(begin, next) << what << ": output row " << o << ", tile row " << tr;
      ASSERT_TRUE(begin == 0 || (o * rows + base + begin) % 8 == 0) << what;
      ASSERT_GE(begin, tr * tile - 8) << what;
      ASSERT_LE(end, tr * tile + tile) << what;
      next = end;
    }
    ASSERT_EQ(next, rows) << what << ": output row " << o << " not written to its end";
  }
}

TEST(GeometryTest, TransposeCoversOddShapes) {
  const KernelFamily& family = TransposeFamily();
  for (const Shape& shape : {Shape{8191, 4097}, Shape{1, 1}, Shape{1, 4099}, Shape{4099, 3},
                             Shape{64, 64}, Shape{57, 64}, Shape{8192, 4096}}) {
    family.default_space().ForEachValid([&](uint64_t, const Params& p) {
      const LaunchGeometry g = family.Geometry(p, shape, 132);
      const std::string what = FormatParams(p) + " " + FormatShape(shape);
      EXPECT_EQ(g.ThreadsPerBlock(), static_cast<uint64_t>(family.ThreadsPerBlock(p))) << what;
      // Each thread moves vec columns of tile/rows rows: the block spans the tile exactly.
      EXPECT_EQ(g.block[0] * p.at("vec"), static_cast<uint64_t>(p.at("tile"))) << what;
      EXPECT_EQ(g.block[1] * (p.at("tile") / p.at("rows")), static_cast<uint64_t>(p.at("tile")));
      EXPECT_EQ(g.dynamic_shared_bytes, 0u);
      const int64_t tile = p.at("tile");
      if (p.at("smem") == 0 || p.at("swizzle") == 2) {  // windows on the matrix's tiles
        ExpectTilesCover(shape[0], shape[1], tile, tile, g.grid[0], what);
        EXPECT_EQ(family.SharedBytes(p), p.at("smem") * tile * (tile + p.at("pad")) * 4) << what;
        return;
      }
      // Windows on sectors: the tile holds 8 more input rows.
      EXPECT_EQ(family.SharedBytes(p), (tile + 8) * (tile + p.at("pad")) * 4) << what;
      // The kernel numbers blocks tile row first, with this count of tile rows (its own
      // formula, kernels/transpose.cu): the grid must hold exactly that many columns of them.
      const int64_t tiles_x = CeilDiv(shape[1], tile);
      const int64_t tile_rows = (shape[0] + 6) / tile + 1;
      ASSERT_EQ(g.grid[0], static_cast<uint64_t>(tile_rows * tiles_x)) << what;
      if (shape[0] * shape[1] > 1 << 16) return;  // the big shapes once per tile edge, below
      for (int64_t base : {0, 4}) {
        ExpectSectorWindowsCover(shape[0], shape[1], tile, tile_rows, base, what);
      }
    });
    for (int64_t tile : {16, 32, 64}) {
      Params p = family.baseline();
      p["tile"] = tile;
      const LaunchGeometry g = family.Geometry(p, shape, 132);
      const int64_t tiles_x = CeilDiv(shape[1], tile);
      for (int64_t base : {0, 4}) {
        ExpectSectorWindowsCover(shape[0], shape[1], tile,
                                 static_cast<int64_t>(g.grid[0]) / tiles_x, base,
                                 FormatParams(p) + " " + FormatShape(shape));
      }
    }
    const LaunchGeometry reference = family.ReferenceGeometry(shape);
    EXPECT_GE(reference.grid[0] * reference.ThreadsPerBlock(),
              static_cast<uint64_t>(shape[0] * shape[1]));
  }
}

TEST(GeometryTest, MatmulCoversOddShapes) {
  const KernelFamily& family = MatmulFamily();
  for (const Shape& shape : {Shape{1000, 1000, 77}, Shape{4097, 1023, 777}, Shape{1, 1, 1}}) {
    family.default_space().ForEachValid([&](uint64_t, const Params& p) {
      const LaunchGeometry g = family.Geometry(p, shape, 132);
      const std::string what = FormatParams(p) + " " + FormatShape(shape);
      EXPECT_EQ(g.ThreadsPerBlock(),
                static_cast<uint64_t>((p.at("bm") / p.at("tm")) * (p.at("bn") / p.at("tn"))))
          << what;
      EXPECT_EQ(g.dynamic_shared_bytes, static_cast<uint32_t>(family.SharedBytes(p))) << what;
      if (p.at("sk") > 0) {
        // Stream-K: sk blocks per SM, never more than the (tile, K step) iterations (each block
        // has at least one) nor than the module's 1024 turn counters.
        const int64_t iterations = CeilDiv(shape[0], p.at("bm")) * CeilDiv(shape[1], p.at("bn")) *
                                   CeilDiv(shape[2], p.at("bk"));
        EXPECT_EQ(g.grid[0], static_cast<uint32_t>(std::min<int64_t>(
                                 {iterations, p.at("sk") * 132, 1024})))
            << what;
        return;
      }
      // Split-K: the splits of one C tile are adjacent blocks; a shape splits at most once per
      // K step (1x1x1 never).
      const int64_t splits = std::min(p.at("splitk"), CeilDiv(shape[2], p.at("bk")));
      ASSERT_EQ(g.grid[0] % splits, 0u) << what;
      ExpectTilesCover(shape[0], shape[1], p.at("bm"), p.at("bn"), g.grid[0] / splits, what);
    });
  }
  // More C tiles than a split-K module has turn counters (65536): no split.
  Params split = family.baseline();
  split["splitk"] = 4;
  EXPECT_EQ(family.Geometry(split, {8192, 64, 8192}, 132).grid[0], 256u * 2 * 4);
  EXPECT_EQ(family.Geometry(split, {256 * 32, 256 * 32, 64}, 132).grid[0], 256u * 256 * 2);
  EXPECT_EQ(family.Geometry(split, {256 * 32 + 1, 256 * 32, 64}, 132).grid[0], 257u * 256);
  // The seed's kernel: 32x32 threads, A and B tiles of 32x32 floats.
  const LaunchGeometry seed = family.Geometry(family.baseline(), {4096, 4096, 4096}, 132);
  EXPECT_EQ(seed.ThreadsPerBlock(), 1024u);
  EXPECT_EQ(seed.grid[0], 128u * 128u);
  EXPECT_EQ(seed.dynamic_shared_bytes, 2u * 32 * 32 * 4);
}

// Configurations recorded before space v8 (tables, stored winners) have no `sk`: they are the
// same kernel as sk=0, with the same launch.
TEST(ValidateEntryTest, MatmulConfigurationsFromBeforeStreamKStillValidate) {
  Params v7 = {{"bm", 128}, {"bn", 128},   {"bk", 8},    {"tm", 16},  {"tn", 8},
               {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
               {"minb", 1}, {"stages", 0}, {"iloop", 1}, {"ptxo", 3}, {"splitk", 1}};
  EXPECT_TRUE(ValidateEntry("matmul", {4096, 4096, 4096}, v7).ok())
      << ValidateEntry("matmul", {4096, 4096, 4096}, v7);
  Params v8 = v7;
  v8["sk"] = 0;
  const KernelFamily& family = MatmulFamily();
  EXPECT_EQ(family.Geometry(v7, {4096, 4096, 4096}, 132).grid,
            family.Geometry(v8, {4096, 4096, 4096}, 132).grid);
  EXPECT_THAT(family.Defines(v7), ::testing::Not(Contains(HasSubstr("CT_SK"))));
}

// Stream-K's grid follows the GPU: sk blocks per SM. The kernel's arithmetic replayed (matmul.cu,
// BlockIterations and BlockOfIteration): the blocks' shares cover every (tile, K step) once, none
// is empty, and each tile split between blocks has one head block (its first steps), whose turn
// counter (one per block) no other split tile uses.
TEST(GeometryTest, StreamKSharesEveryIterationOnce) {
  const KernelFamily& family = MatmulFamily();
  Params p = {{"bm", 128}, {"bn", 128},   {"bk", 8},     {"tm", 16},   {"tn", 8},
              {"vec", 4},  {"at", 1},     {"pad", 4},    {"db", 1},    {"warp", 1},
              {"minb", 1}, {"stages", 0}, {"iloop", 1},  {"ptxo", 3},  {"splitk", 1},
              {"sk", 2}};
  ASSERT_TRUE(family.ValidateParams(p).ok()) << family.ValidateParams(p);
  EXPECT_EQ(family.Geometry(p, {4096, 4096, 4096}, 132).grid[0], 264u);
  EXPECT_EQ(family.Geometry(p, {4096, 4096, 4096}, 108).grid[0], 216u);
  EXPECT_EQ(family.Geometry(p, {4096, 4096, 4096}, 0).grid[0], 2u);     // unknown: one SM
  EXPECT_EQ(family.Geometry(p, {4096, 4096, 4096}, 600).grid[0], 1024u);  // the counters
  EXPECT_EQ(family.Geometry(p, {100, 100, 16}, 132).grid[0], 2u);        // 1 tile, 2 steps
  for (const Shape& shape : {Shape{4096, 4096, 4096}, Shape{127, 8192, 4096}, Shape{1, 1, 1},
                             Shape{256, 256, 16384}, Shape{4097, 1023, 777}}) {
    const int64_t tiles = CeilDiv(shape[0], 128) * CeilDiv(shape[1], 128);
    const int64_t steps = CeilDiv(shape[2], 8);
    const int64_t total = tiles * steps;
    const int64_t workers = family.Geometry(p, shape, 132).grid[0];
    std::vector<int> parts(static_cast<size_t>(tiles), 0);
    std::map<int64_t, int64_t> head_of_tile;
    int64_t covered = 0;
    for (int64_t b = 0; b < workers; ++b) {
      const int64_t first = b * total / workers, end = (b + 1) * total / workers;
      ASSERT_LT(first, end) << FormatShape(shape) << " block " << b;
      covered += end - first;
      for (int64_t e = end; e > first;) {  // the kernel's walk, last tile first
        const int64_t tile = (e - 1) / steps, tile_first = tile * steps;
        const int64_t f = std::max(first, tile_first);
        ++parts[static_cast<size_t>(tile)];
        const int64_t head = ((tile_first + 1) * workers - 1) / total;
        EXPECT_LE(head, b);
        EXPECT_EQ(f == tile_first, head == b) << "the head holds the tile's first step";
        if (f != tile_first || e != tile_first + steps) head_of_tile[tile] = head;
        e = f;
      }
    }
    EXPECT_EQ(covered, total) << FormatShape(shape);
    std::set<int64_t> counters;
    for (const auto& [tile, head] : head_of_tile) {
      EXPECT_TRUE(counters.insert(head).second) << "turn counter " << head << " shared";
    }
  }
}

// The output tile's fit, from the family's OutputTile (matmul tiles M and N, not K; transpose
// tiles both).
TEST(GeometryTest, OutputTilesAndTheirCoverage) {
  Params mm = MatmulFamily().baseline();
  mm["bm"] = 64;
  mm["bn"] = 128;
  EXPECT_EQ(MatmulFamily().OutputTile(mm), (std::vector<int64_t>{64, 128, 0}));
  EXPECT_DOUBLE_EQ(TileCoverage(MatmulFamily(), mm, {1024, 1024, 3}), 1.0) << "K is not tiled";
  EXPECT_DOUBLE_EQ(TileCoverage(MatmulFamily(), mm, {1000, 1000, 3}),
                   (1000.0 / 1024) * (1000.0 / 1024));
  const Params tr = TransposeFamily().baseline();
  const int64_t tile = tr.at("tile");
  EXPECT_DOUBLE_EQ(TileCoverage(TransposeFamily(), tr, {tile, 2 * tile - 1}),
                   (2.0 * tile - 1) / (2.0 * tile));
  // One block per SM: 1024x1024 in 64x128 tiles is 128 blocks, 128 of 132 SMs busy.
  EXPECT_DOUBLE_EQ(LaunchEfficiency(MatmulFamily(), mm, {1024, 1024, 1024}, 132), 128.0 / 132);
}

TEST(PruneTest, ThreadsAndSharedMemoryAgainstTheArchitecture) {
  Params too_many = TransposeFamily().baseline();
  too_many["tile"] = 64;  // 64 x 32 threads
  EXPECT_THAT(TransposeFamily().PruneForDevice(too_many, Limits("sm_90")),
              Optional(HasSubstr("2048 threads per block exceed the device limit of 1024")));
  EXPECT_EQ(TransposeFamily().PruneForDevice(TransposeFamily().baseline(), Limits("sm_90")),
            std::nullopt);

  // 2 stages x 48 x (256 + 256) floats = 196608 bytes: fits sm_90 (227 KB), not sm_80 (163 KB).
  Params big = MatmulFamily().baseline();
  big.insert_or_assign("bm", 256);
  big.insert_or_assign("bn", 256);
  big.insert_or_assign("bk", 48);
  big.insert_or_assign("tm", 16);
  big.insert_or_assign("tn", 16);
  big.insert_or_assign("at", 1);
  big.insert_or_assign("db", 1);
  EXPECT_EQ(MatmulFamily().SharedBytes(big), 196608);
  EXPECT_EQ(MatmulFamily().PruneForDevice(big, Limits("sm_90")), std::nullopt);
  EXPECT_THAT(MatmulFamily().PruneForDevice(big, Limits("sm_80")),
              Optional(HasSubstr("196608 bytes of shared memory per block exceed the opt-in "
                                 "limit of 166912 on sm_80")));
  EXPECT_THAT(MatmulFamily().PruneForDevice(big, Limits("sm_86")),
              Optional(HasSubstr("limit of 101376 on sm_86")));
}

TEST(PruneTest, CompiledRegistersAndSharedMemory) {
  const KernelFamily& family = MatmulFamily();
  Params p = {{"bm", 256}, {"bn", 128}, {"bk", 8},   {"tm", 8},   {"tn", 8},  {"vec", 4},
              {"at", 1},   {"pad", 4},  {"db", 1},   {"warp", 1}, {"minb", 0}};
  ASSERT_EQ(family.ThreadsPerBlock(p), 512);
  const DeviceLimits sm90 = Limits("sm_90");
  ResourceUsage usage;
  usage.registers = 128;  // 128 x 512 = 65536: exactly the limit
  EXPECT_EQ(family.PruneCompiled(p, usage, sm90), std::nullopt);
  usage.registers = 122;  // allocated in units of 8 per thread: 128
  EXPECT_EQ(family.PruneCompiled(p, usage, sm90), std::nullopt);
  usage.registers = 130;  // allocated as 136 x 512 = 69632
  EXPECT_THAT(family.PruneCompiled(p, usage, sm90),
              Optional(HasSubstr("130 registers x 512 threads (69632 allocated) exceed the limit "
                                 "of 65536 registers per block on sm_90")));
  usage.registers = 256;
  EXPECT_THAT(family.PruneCompiled(p, usage, sm90),
              Optional(HasSubstr("256 registers per thread exceed the limit of 255")));
  usage.registers = 32;
  usage.static_shared_bytes = 200 * 1024;
  EXPECT_EQ(family.PruneCompiled(p, usage, sm90), std::nullopt);
  EXPECT_THAT(family.PruneCompiled(p, usage, Limits("sm_80")),
              Optional(HasSubstr("204800 bytes of shared memory per block exceed")));
}

TEST(ShapeTest, ValidateShapeNamesTheProblem) {
  const KernelFamily& transpose = TransposeFamily();
  const KernelFamily& matmul = MatmulFamily();
  EXPECT_TRUE(transpose.ValidateShape({8191, 4097}).ok());
  EXPECT_TRUE(matmul.ValidateShape({4097, 1023, 777}).ok());
  EXPECT_TRUE(transpose.ValidateShape({1, int64_t{1} << 30}).ok());
  EXPECT_TRUE(transpose.ValidateShape({2, int64_t{1} << 30}).ok());  // exactly 2^31 elements

  const std::vector<std::pair<Shape, std::string>> bad_transpose = {
      {{4096}, "expected 2 dimensions (rows, cols), got 1"},
      {{4096, 4096, 1}, "expected 2 dimensions"},
      {{0, 5}, "dimension rows must be positive, got 0"},
      {{5, -3}, "dimension cols must be positive, got -3"},
      {{1, (int64_t{1} << 30) + 1}, "dimension cols=1073741825 exceeds the limit of 2^30"},
      {{3, int64_t{1} << 30}, "has more than 2^31 elements"},
  };
  for (const auto& [shape, message] : bad_transpose) {
    absl::Status status = transpose.ValidateShape(shape);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << FormatShape(shape);
    EXPECT_THAT(status.message(), HasSubstr(message)) << FormatShape(shape);
  }
  absl::Status rank = matmul.ValidateShape({64, 64});
  EXPECT_THAT(rank.message(), HasSubstr("expected 3 dimensions (M, N, K), got 2"));
  absl::Status a_too_big = matmul.ValidateShape({65536, 16, 65536});
  EXPECT_EQ(a_too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a_too_big.message(), HasSubstr("matrix MxK = 65536x65536"));
  absl::Status b_too_big = matmul.ValidateShape({16, 65536, 65536});
  EXPECT_THAT(b_too_big.message(), HasSubstr("matrix KxN = 65536x65536"));
}

void ExpectRefused(const absl::Status& status, const std::string& expected_in_message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(expected_in_message));
}

TEST(ValidateEntryTest, AcceptsEveryCandidateOfTheDefaultSpaces) {
  for (const KernelFamily* family : AllFamilies()) {
    const Shape shape = family->dims().size() == 2 ? Shape{4096, 4096} : Shape{512, 512, 512};
    uint64_t refused = 0;
    family->default_space().ForEachValid([&](uint64_t, const Params& params) {
      refused += !ValidateEntry(family->name(), shape, params).ok();
    });
    EXPECT_EQ(refused, 0u) << family->name();
    EXPECT_TRUE(family->ValidateParams(family->baseline()).ok()) << family->name();
  }
}

TEST(ValidateEntryTest, RefusesWhatWouldCrashTheGeometry) {
  const Shape square = {8192, 8192};
  Params params = TransposeFamily().baseline();
  params["vec"] = 0;
  ExpectRefused(ValidateEntry("transpose", square, params),
                "parameter vec=0 is not in the space (values: 1,2,4)");
  params = TransposeFamily().baseline();
  params["tile"] = 0;
  ExpectRefused(ValidateEntry("transpose", square, params), "parameter tile=0 is not in the space");
  params = TransposeFamily().baseline();
  params["rows"] = std::numeric_limits<int64_t>::min();
  ExpectRefused(ValidateEntry("transpose", square, params),
                "parameter rows=-9223372036854775808 is not in the space");
  ExpectRefused(ValidateEntry("transpose", square, {}), "missing parameter 'smem'");
  params = TransposeFamily().baseline();
  params["tiles"] = 32;
  ExpectRefused(ValidateEntry("transpose", square, params), "unknown parameter 'tiles'");
  // In the space but breaking a constraint: 16 rows of a 32-row block do not tile it.
  params = TransposeFamily().baseline();
  params["tile"] = 16;
  ExpectRefused(ValidateEntry("transpose", square, params),
                "breaks a constraint: tile % rows == 0");
  Params matmul = MatmulFamily().baseline();
  matmul["bm"] = 0;
  ExpectRefused(ValidateEntry("matmul", {4096, 4096, 4096}, matmul),
                "parameter bm=0 is not in the space (values: 32,64,128,256)");

  ExpectRefused(ValidateEntry("transpose", {64, 64, 64}, TransposeFamily().baseline()),
                "expected 2 dimensions (rows, cols), got 3");
  ExpectRefused(ValidateEntry("matmul", {4096, 0, 4096}, MatmulFamily().baseline()),
                "dimension N must be positive, got 0");
  ExpectRefused(ValidateEntry("conv", square, TransposeFamily().baseline()),
                "unknown kernel family 'conv' (known: transpose, matmul)");

  // Its two halves, which the store asks separately.
  EXPECT_TRUE(ValidateProblem("transpose", square).ok());
  ExpectRefused(ValidateProblem("transpose", {64, 64, 64}), "expected 2 dimensions");
  ExpectRefused(ValidateProblem("conv", square), "unknown kernel family 'conv'");
  EXPECT_TRUE(ValidateParams("matmul", MatmulFamily().baseline()).ok());
  ExpectRefused(ValidateParams("matmul", matmul), "parameter bm=0 is not in the space");
  ExpectRefused(ValidateParams("conv", {}), "unknown kernel family 'conv'");
}

TEST(ValidateEntryTest, NoSingleBadValueCrashesIt) {
  const int64_t values[] = {0, -1, 1, 3, 1024, std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()};
  for (const KernelFamily* family : AllFamilies()) {
    const Shape shape = family->dims().size() == 2 ? Shape{4096, 4096} : Shape{512, 512, 512};
    for (const Parameter& parameter : family->default_space().parameters()) {
      for (int64_t value : values) {
        Params params = family->baseline();
        params[parameter.name] = value;
        absl::Status s = ValidateEntry(family->name(), shape, params);
        const bool listed = std::find(parameter.values.begin(), parameter.values.end(), value) !=
                            parameter.values.end();
        if (!listed) {
          ExpectRefused(s, absl::StrCat("parameter ", parameter.name, "=", value,
                                        " is not in the space"));
        }
        // What passes is safe to launch.
        if (s.ok()) {
          EXPECT_GT(family->Geometry(params, shape, 132).block[0], 0u);
        }
      }
    }
  }
}

TEST(WorkTest, BytesFlopsAndBuffers) {
  EXPECT_EQ(TransposeFamily().BytesMoved({8192, 4096}), 2.0 * 8192 * 4096 * 4);
  EXPECT_EQ(TransposeFamily().Flops({8192, 4096}), 0);
  EXPECT_TRUE(TransposeFamily().memory_bound());
  EXPECT_TRUE(TransposeFamily().verification().exact);
  EXPECT_EQ(MatmulFamily().BytesMoved({100, 200, 300}), (100.0 * 300 + 300 * 200 + 100 * 200) * 4);
  EXPECT_EQ(MatmulFamily().Flops({100, 200, 300}), 2.0 * 100 * 200 * 300);
  EXPECT_FALSE(MatmulFamily().memory_bound());
  EXPECT_FALSE(MatmulFamily().verification().exact);
  EXPECT_GT(MatmulFamily().verification().max_rel_error, 0);
  const BufferPlan plan = MatmulFamily().Buffers({100, 200, 300});
  EXPECT_THAT(plan.inputs, ::testing::ElementsAre(100 * 300, 300 * 200));
  EXPECT_EQ(plan.output, 100 * 200);
  EXPECT_THAT(TransposeFamily().Buffers({7, 9}).inputs, ::testing::ElementsAre(63));
}

// The launch contract clients receive must be the entry point the source declares: parse the
// `extern "C" __global__ void ... cutune_kernel(...)` parameter list and compare, argument by
// argument, with Arguments() and ArgumentCType.
TEST(ContractTest, ArgumentsAreTheSourcesEntryPoint) {
  for (const KernelFamily* family : AllFamilies()) {
    SCOPED_TRACE(std::string(family->name()));
    const std::string source(family->source());
    const size_t at = source.find("cutune_kernel(", source.find("extern \"C\" __global__"));
    ASSERT_NE(at, std::string::npos);
    const size_t open = at + std::string("cutune_kernel(").size();
    std::string list = source.substr(open, source.find(')', open) - open);
    std::vector<std::string> declared;
    for (absl::string_view piece : absl::StrSplit(list, ',')) {
      std::string part(piece);
      part = std::string(absl::StripAsciiWhitespace(absl::StrReplaceAll(part, {{"__restrict__", ""}, {"\n", " "}})));
      while (part.find("  ") != std::string::npos) part = absl::StrReplaceAll(part, {{"  ", " "}});
      declared.push_back(part);
    }
    std::vector<std::string> contract;
    int inputs = 0, outputs = 0;
    const std::vector<std::string> dims = family->dims();
    for (const KernelArgument& a : family->Arguments()) {
      const std::string type = ArgumentCType(a, "f32");
      contract.push_back(type.back() == '*' ? type.substr(0, type.size() - 1) + " " + "*" + a.name
                                            : type + " " + a.name);
      if (a.role == KernelArgument::Role::kInput) ++inputs;
      if (a.role == KernelArgument::Role::kOutput) ++outputs;
      if (a.role == KernelArgument::Role::kDimension) {
        ASSERT_EQ(a.extent.size(), 1u);
        EXPECT_EQ(dims.at(a.extent[0]), a.name) << "a dimension argument is named as its dim";
      } else {
        EXPECT_EQ(a.extent.size(), 2u);
      }
    }
    // The source writes "const float* A": normalise both to "const float *A".
    for (std::string& d : declared) d = absl::StrReplaceAll(d, {{"* ", " *"}});
    EXPECT_EQ(contract, declared);
    EXPECT_EQ(outputs, 1);
    EXPECT_GE(inputs, 1);
  }
}

TEST(ContractTest, AttributesAndConcurrencyFollowTheConfiguration) {
  LaunchGeometry small;
  small.dynamic_shared_bytes = kDefaultDynamicSharedLimit;
  EXPECT_TRUE(FunctionAttributes(small).empty());
  LaunchGeometry big;
  big.dynamic_shared_bytes = kDefaultDynamicSharedLimit + 4;
  ASSERT_EQ(FunctionAttributes(big).size(), 1u);
  EXPECT_EQ(FunctionAttributes(big)[0].name, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES");
  EXPECT_EQ(FunctionAttributes(big)[0].value, kDefaultDynamicSharedLimit + 4);
  Params split = MatmulFamily().baseline();
  EXPECT_EQ(MatmulFamily().LaunchConcurrency(split), Concurrency::kAny);
  split["splitk"] = 4;
  EXPECT_EQ(MatmulFamily().LaunchConcurrency(split), Concurrency::kOneModulePerStream);
  Params stream = MatmulFamily().baseline();
  stream["sk"] = 1;
  EXPECT_EQ(MatmulFamily().LaunchConcurrency(stream), Concurrency::kOneModulePerStream);
  EXPECT_EQ(TransposeFamily().LaunchConcurrency(TransposeFamily().baseline()), Concurrency::kAny);
}

TEST(SourceTest, HashesAreStableAndDistinct) {
  const std::string transpose = TransposeFamily().source_hash();
  EXPECT_EQ(transpose, TransposeFamily().source_hash());
  EXPECT_EQ(transpose.size(), 64u);
  EXPECT_NE(transpose, MatmulFamily().source_hash());
  for (const KernelFamily* family : AllFamilies()) {
    EXPECT_THAT(std::string(family->source()), HasSubstr("extern \"C\" __global__ void"));
    EXPECT_THAT(std::string(family->source()), HasSubstr(std::string(KernelFamily::kKernelName)));
    EXPECT_THAT(std::string(family->source()),
                HasSubstr(std::string(KernelFamily::kReferenceName)));
    EXPECT_THAT(std::string(family->source()), HasSubstr("#ifndef CUTUNE_REFERENCE"));
  }
  EXPECT_THAT(std::string(SupportSource()), HasSubstr(std::string(kFillName)));
  EXPECT_THAT(std::string(SupportSource()), HasSubstr(std::string(kCompareName)));
}

// NVRTC has no file system and clients receive the source as text: embed.cmake writes
// kernels/common.cuh into each source that includes it, which also puts the header under
// source_hash(). The #line directives keep diagnostics pointing at the files themselves.
TEST(SourceTest, EmbeddedSourcesInlineTheSharedHeader) {
  for (const KernelFamily* family : {&MatmulFamily(), &TransposeFamily()}) {
    SCOPED_TRACE(std::string(family->name()));
    const std::string source(family->source());
    EXPECT_THAT(source, HasSubstr("\n#line 1 \"common.cuh\"\n"));
    EXPECT_THAT(source, HasSubstr("#define CUTUNE_KERNELS_COMMON_CUH_"));
    EXPECT_THAT(source, HasSubstr("\"" + std::string(family->name()) + ".cu\""));
    for (absl::string_view line : absl::StrSplit(source, '\n')) {
      EXPECT_FALSE(absl::StartsWith(line, "#include \"")) << line;
    }
  }
  EXPECT_THAT(std::string(SupportSource()), Not(HasSubstr("common.cuh")));
}

TEST(DeviceLimitsTest, KnownArchitectures) {
  EXPECT_EQ(Limits("sm_90").max_shared_per_block_optin, 227 * 1024);
  EXPECT_EQ(Limits("sm_90").max_shared_per_sm, 228 * 1024);
  EXPECT_EQ(Limits("sm_90").sm_count, 132);
  EXPECT_EQ(Limits("sm_80").max_shared_per_block_optin, 163 * 1024);
  EXPECT_EQ(Limits("sm_86").max_shared_per_block_optin, 99 * 1024);
  EXPECT_EQ(Limits("sm_89").max_shared_per_block_optin, 99 * 1024);
  EXPECT_EQ(Limits("sm_75").max_shared_per_block_optin, 64 * 1024);
  EXPECT_EQ(Limits("sm_70").max_shared_per_block_optin, 96 * 1024);
  for (const char* arch : {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}) {
    const DeviceLimits limits = Limits(arch);
    EXPECT_EQ(limits.Arch(), arch);
    EXPECT_EQ(limits.max_registers_per_block, 65536);
    EXPECT_EQ(limits.max_threads_per_block, 1024);
  }
  absl::StatusOr<DeviceLimits> unknown = DeviceLimits::ForArch("sm_42");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("sm_90"));
  EXPECT_EQ(DeviceLimits::ForArch("gfx90a").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DeviceLimits::ForArch("sm_").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceLimitsTest, ResidentLimitsByComputeCapability) {
  absl::StatusOr<DeviceLimits> hopper = DeviceLimits::ForComputeCapability(9, 0);
  ASSERT_TRUE(hopper.ok()) << hopper.status();
  EXPECT_EQ(hopper->max_threads_per_sm, 2048);
  EXPECT_EQ(hopper->max_blocks_per_sm, 32);
  EXPECT_EQ(hopper->max_registers_per_sm, 65536);
  EXPECT_EQ(Limits("sm_89").max_threads_per_sm, 1536);
  EXPECT_EQ(Limits("sm_89").max_blocks_per_sm, 24);
  EXPECT_EQ(Limits("sm_75").max_threads_per_sm, 1024);
  EXPECT_EQ(Limits("sm_75").max_blocks_per_sm, 16);
  EXPECT_EQ(DeviceLimits::ForComputeCapability(0, 0).status().code(), absl::StatusCode::kNotFound);
}

// The occupancy calculator: the tightest of threads, allocated registers, shared memory (with
// the 1 KB reserved per block) and the block limit. The configuration is the H200 table's
// 128x128 member (128 threads, 251 registers: 256 allocated per thread, 2 blocks).
TEST(OccupancyTest, ResidentBlocksAreTheTightestLimit) {
  const KernelFamily& family = MatmulFamily();
  Params p = {{"bm", 128}, {"bn", 128},   {"bk", 8},    {"tm", 16},  {"tn", 8},
              {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
              {"minb", 0}, {"stages", 0}, {"iloop", 1}, {"ptxo", 3}, {"splitk", 1},
              {"sk", 0}};
  ASSERT_TRUE(family.ValidateParams(p).ok()) << family.ValidateParams(p);
  const LaunchGeometry g = family.Geometry(p, {4096, 4096, 4096}, 132);
  ASSERT_EQ(g.ThreadsPerBlock(), 128u);
  const DeviceLimits h200 = Limits("sm_90");
  ResourceUsage usage;
  usage.registers = 251;
  EXPECT_EQ(ResidentBlocks(g, usage, h200), 2) << "registers bind";
  const int64_t by_shared = h200.max_shared_per_sm / (family.SharedBytes(p) + 1024);
  usage.registers = 0;  // unknown: threads (16) or shared memory bind
  EXPECT_EQ(ResidentBlocks(g, usage, h200), std::min<int64_t>(16, by_shared));
  usage.static_shared_bytes = 100 * 1024;  // ptxas' figure wins over the launch's
  EXPECT_EQ(ResidentBlocks(g, usage, h200), 2);
  usage.static_shared_bytes = 0;
  // sm_75: 1024 threads per SM bind (8 blocks), or its 64 KB of shared memory, with no
  // reserved kilobyte before cc 8.0.
  usage.registers = 32;
  EXPECT_EQ(ResidentBlocks(g, usage, Limits("sm_75")),
            std::min<int64_t>(8, 64 * 1024 / family.SharedBytes(p)));
  usage.registers = 255 * 2;  // more than a block's worth of the register file: still one
  EXPECT_EQ(ResidentBlocks(g, usage, h200), 1);
  // FitLaunch counts the occupancy it is given: the second term is the first over 2 blocks.
  usage.registers = 251;
  const LaunchFigures fit = FitLaunch(family, p, {4096, 4096, 4096}, usage, &h200, 132);
  ASSERT_EQ(fit.cost_terms.size(), 5u);
  EXPECT_EQ(fit.efficiency, LaunchEfficiency(family, p, {4096, 4096, 4096}, 132));
  EXPECT_EQ(fit.cost_terms[0], 8 * (512 * 128.0 * 128 * 8)) << "1024 tiles: 8 per SM";
  EXPECT_EQ(fit.cost_terms[1], 4 * (512 * 128.0 * 128 * 8)) << "4 at 2 a time";
  EXPECT_EQ(FitLaunch(family, p, {4096, 4096, 4096}, usage, nullptr, 132).cost_terms[1],
            fit.cost_terms[0]) << "an unknown architecture: one block at a time";
}

// Matmul's cost terms for the busiest SM: blocks one at a time, blocks `resident` at once,
// epilogues, the hand-over chain, operand loads.
TEST(CostTermsTest, MatmulCountsTheBusiestSmsWork) {
  const KernelFamily& family = MatmulFamily();
  Params p = {{"bm", 64},  {"bn", 64},    {"bk", 16},   {"tm", 8},   {"tn", 4},
              {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
              {"minb", 0}, {"stages", 0}, {"iloop", 0}, {"ptxo", 3}, {"splitk", 1},
              {"sk", 0}};
  ASSERT_TRUE(family.ValidateParams(p).ok()) << family.ValidateParams(p);
  const double tile = 64 * 64;
  const double loads = (1024.0 * 1024 * 16 * 2) / 132;
  // 256 tiles of 64 steps: two blocks on the busiest SM one at a time, one wave at 4 a time.
  std::vector<double> terms = family.CostTerms(p, {1024, 1024, 1024}, family.Geometry(p, {1024, 1024, 1024}, 132), 132, 4);
  EXPECT_EQ(terms, (std::vector<double>{2 * 64 * tile * 16, 64 * tile * 16, tile, 0, loads}));
  // Split 8 ways: 2048 blocks of 8 steps, 9 tiles of epilogue each (its partial, then the
  // sum), 7 hand-overs per tile.
  p["splitk"] = 8;
  ASSERT_TRUE(family.ValidateParams(p).ok()) << family.ValidateParams(p);
  terms = family.CostTerms(p, {1024, 1024, 1024}, family.Geometry(p, {1024, 1024, 1024}, 132), 132, 4);
  EXPECT_EQ(terms, (std::vector<double>{16 * 8 * tile * 16, 4 * 8 * tile * 16, 4 * 9 * tile,
                                        7 * tile, loads}));
  // Stream-K, 2 blocks per SM over 4096^3 in 128x128 tiles of 8 steps: 524288 iterations on 264
  // blocks, at most 1986 each, over up to 5 tiles; tiles shared by 2 blocks at most.
  Params sk = {{"bm", 128}, {"bn", 128},   {"bk", 8},    {"tm", 16},  {"tn", 8},
               {"vec", 4},  {"at", 1},     {"pad", 4},   {"db", 1},   {"warp", 1},
               {"minb", 1}, {"stages", 0}, {"iloop", 1}, {"ptxo", 3}, {"splitk", 1},
               {"sk", 2}};
  ASSERT_TRUE(family.ValidateParams(sk).ok()) << family.ValidateParams(sk);
  terms = family.CostTerms(sk, {4096, 4096, 4096}, family.Geometry(sk, {4096, 4096, 4096}, 132), 132, 2);
  ASSERT_EQ(terms.size(), 5u);
  const double big = 128 * 128;
  EXPECT_EQ(terms[0], 2 * 1986 * big * 8);
  EXPECT_EQ(terms[1], 1986 * big * 8);
  EXPECT_EQ(terms[2], 2 * 5 * big);
  EXPECT_EQ(terms[3], big);
  EXPECT_TRUE(FitLaunch(TransposeFamily(), TransposeFamily().baseline(), {64, 64}, {}, nullptr, 132).cost_terms.empty());
}

}  // namespace
}  // namespace cutune::kernels
