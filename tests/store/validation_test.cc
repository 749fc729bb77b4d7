// Configurations outside the kernel spaces: an imported table holding one is refused naming
// where, and one already in a database (written before the check existed) is never served nor
// exported, so that nothing computes a launch from it.
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "nlohmann/json.hpp"
#include "server/store/tables.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::ExecSql;
using testing::H200;
using ::testing::HasSubstr;
using testing::Ok;
using testing::Prov;
using testing::RunSweep;
using testing::TempDir;
using Json = nlohmann::json;

const std::set<std::string> kFamilies = {"transpose", "matmul"};

Params TransposeWith(const std::string& name, int64_t value) {
  Params params = kernels::TransposeFamily().baseline();
  params[name] = value;
  return params;
}

// What the daemon passes.
const EntryValidator kValidator = {kernels::ValidateProblem, kernels::ValidateParams,
                                    kernels::CanonicalParams};

ImportOptions Validated() {
  ImportOptions options;
  options.known_families = kFamilies;
  options.validator = kValidator;
  return options;
}

std::unique_ptr<Store> OpenStore(const std::string& path, const StoreOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

std::string Export(Store& store) {
  absl::StatusOr<std::string> text = ExportTable(store, {"", true});
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// A faster transpose candidate than the baseline: 64x64 tiles, 16 rows.
Params Tile64() {
  Params params = TransposeWith("tile", 64);
  params["rows"] = 16;
  return params;
}

// H200: matmul 4096^3 (winners/0, sweeps/0) and transpose 8192x8192 (winners/1, Tile64; sweeps/1,
// whose rows are Tile64 (rows/0, "rows=16" sorts first) and the baseline (rows/1)), all in the
// current spaces.
void Populate(Store& store) {
  RunSweep(store, H200(), "matmul", {4096, 4096, 4096}, Prov(13000, "hash-matmul"),
           {Ok(kernels::MatmulFamily().baseline(), 9000.0)});
  RunSweep(store, H200(), "transpose", {8192, 8192}, Prov(),
           {Ok(kernels::TransposeFamily().baseline(), 180.0), Ok(Tile64(), 150.0)});
}

LookupQuery Query(const Shape& shape) {
  LookupQuery q;
  q.device_model = "NVIDIA H200";
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = shape;
  q.current = Prov();
  q.family_default = kernels::TransposeFamily().baseline();
  return q;
}

struct BadEntryCase {
  std::string name;
  std::function<void(Json&)> mutate;
  std::string expected_in_message;
};

TEST(ValidatedImportTest, ConfigurationsOutsideTheSpaceRefuseTheTableNamingWhere) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir.File("source.db"));
  Populate(*source);
  const Json valid = Json::parse(Export(*source));
  ASSERT_EQ(valid["devices"][0]["winners"][1]["params"]["tile"], 64);

  const std::vector<BadEntryCase> cases = {
      {"vec=0", [](Json& j) { j["devices"][0]["winners"][1]["params"]["vec"] = 0; },
       "table /devices/0/winners/1/params: parameter vec=0 is not in the space (values: 1,2,4)"},
      {"tile=0", [](Json& j) { j["devices"][0]["winners"][1]["params"]["tile"] = 0; },
       "table /devices/0/winners/1/params: parameter tile=0 is not in the space"},
      {"bm=0", [](Json& j) { j["devices"][0]["winners"][0]["params"]["bm"] = 0; },
       "table /devices/0/winners/0/params: parameter bm=0 is not in the space (values: 32,64,128,256)"},
      {"no params", [](Json& j) { j["devices"][0]["winners"][1]["params"] = Json::object(); },
       "table /devices/0/winners/1/params: missing parameter"},
      {"INT64_MIN",
       [](Json& j) {
         j["devices"][0]["winners"][1]["params"]["rows"] = std::numeric_limits<int64_t>::min();
       },
       "table /devices/0/winners/1/params: parameter rows=-9223372036854775808 is not in the space"},
      {"unknown parameter", [](Json& j) { j["devices"][0]["winners"][1]["params"]["tiles"] = 8; },
       "table /devices/0/winners/1/params: unknown parameter 'tiles'"},
      {"broken constraint",
       [](Json& j) {
         j["devices"][0]["winners"][1]["params"]["tile"] = 16;
         j["devices"][0]["winners"][1]["params"]["rows"] = 32;
       },
       "table /devices/0/winners/1/params: candidate minb=0,pad=1,rows=32,smem=1,swizzle=0,tile=16,vec=1 "
       "breaks a constraint: tile % rows == 0"},
      {"3-D transpose", [](Json& j) { j["devices"][0]["winners"][1]["shape"] = {64, 64, 64}; },
       "table /devices/0/winners/1/shape: expected 2 dimensions (rows, cols), got 3"},
      {"row vec=0", [](Json& j) { j["devices"][0]["sweeps"][1]["rows"][1]["params"]["vec"] = 0; },
       "table /devices/0/sweeps/1/rows/1/params: parameter vec=0 is not in the space"},
      {"sweep 3-D transpose",
       [](Json& j) { j["devices"][0]["sweeps"][1]["shape"] = {64, 64, 64}; },
       "table /devices/0/sweeps/1/shape: expected 2 dimensions"},
      {"empty sweep of a 3-D transpose",
       [](Json& j) {
         j["devices"][0]["sweeps"][1]["shape"] = {64, 64, 64};
         j["devices"][0]["sweeps"][1]["rows"] = Json::array();
       },
       "table /devices/0/sweeps/1/shape: expected 2 dimensions"},
      {"tie vec=0",
       [](Json& j) {
         Json& w = j["devices"][0]["winners"][1];
         Json tie = w["params"];
         tie["vec"] = 0;
         w["ties"] = Json::array({tie});
         j["version"] = 2;
       },
       "table /devices/0/winners/1/ties/0: parameter vec=0 is not in the space"},
      {"unknown family",
       [](Json& j) { j["devices"][0]["winners"][1]["family"] = "conv"; },
       "table /devices/0/winners/1/family: unknown kernel family \"conv\""},
  };
  for (const BadEntryCase& c : cases) {
    SCOPED_TRACE(c.name);
    Json bad = valid;
    c.mutate(bad);
    std::unique_ptr<Store> target =
        OpenStore(dir.File("target-" + std::to_string(&c - &cases[0]) + ".db"));
    absl::StatusOr<ImportStats> stats = ImportTable(*target, bad.dump(), Validated());
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument) << stats.status();
    EXPECT_THAT(std::string(stats.status().message()), HasSubstr(c.expected_in_message));
    absl::StatusOr<std::vector<Winner>> winners = target->ListWinners("");
    ASSERT_TRUE(winners.ok());
    EXPECT_TRUE(winners->empty());  // the whole table was refused
    // Without a validator or family list (the diff tool) the table is still readable.
    EXPECT_TRUE(ParseTable(bad.dump(), {}).ok());
    EXPECT_TRUE(DiffTables(valid.dump(), bad.dump()).ok());
  }

  std::unique_ptr<Store> copy = OpenStore(dir.File("copy.db"));
  absl::StatusOr<ImportStats> stats = ImportTable(*copy, valid.dump(), Validated());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->winners_added, 2);
  EXPECT_EQ(stats->rows_added, 3);
}

// A configuration written before a parameter was added (matmul without `sk`) is the same
// configuration as the one with its absent value (sk=0): a table's winner, ties, sweep rows and
// portfolio members come in in that one spelling, and two spellings of one configuration are one
// (the faster row, the faster cell), not a duplicate in the portfolio.
TEST(ValidatedImportTest, AConfigurationWrittenBeforeAParameterWasAddedIsCompleted) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir.File("source.db"));
  Populate(*source);
  Json table = Json::parse(Export(*source));
  table["version"] = kTableVersionPortfolios;
  Json& device = table["devices"][0];
  ASSERT_EQ(device["winners"][0]["family"], "matmul");
  const Json with_sk = device["winners"][0]["params"];
  ASSERT_EQ(with_sk["sk"], 0);
  Json without_sk = with_sk;
  without_sk.erase("sk");
  device["winners"][0]["params"] = without_sk;
  device["winners"][0]["ties"] = Json::array({with_sk});  // the winner itself, once completed
  Json old_row = device["sweeps"][0]["rows"][0];
  old_row["params"] = without_sk;
  old_row["time_us"] = 8500.0;  // faster than the row written with sk=0 (9000)
  device["sweeps"][0]["rows"].push_back(old_row);
  device["portfolios"] = Json::array(
      {{{"family", "matmul"},
        {"dtype", "f32"},
        {"members", Json::array({with_sk, without_sk})},
        {"matrix", Json::array({{{"shape", {4096, 4096, 4096}},
                                 {"best_us", 8500.0},
                                 {"times_us", {9000.0, 8500.0}}}})}}});

  absl::StatusOr<ImportBatch> batch = ParseTable(table.dump(), kFamilies, kValidator);
  ASSERT_TRUE(batch.ok()) << batch.status();
  const Params completed = kernels::MatmulFamily().baseline();
  ASSERT_EQ(completed.at("sk"), 0);
  ASSERT_EQ(batch->winners.size(), 2u);
  EXPECT_EQ(batch->winners[0].measurement.params, completed);
  EXPECT_TRUE(batch->winners[0].ties.empty());
  ASSERT_EQ(batch->sweeps[0].rows.size(), 1u);
  EXPECT_EQ(batch->sweeps[0].rows[0].measurement.params, completed);
  EXPECT_DOUBLE_EQ(batch->sweeps[0].rows[0].measurement.timing.median_us, 8500.0);
  ASSERT_EQ(batch->cells.size(), 1u);
  EXPECT_EQ(batch->cells[0].params, completed);
  EXPECT_DOUBLE_EQ(batch->cells[0].time_us, 8500.0);

  // Without the family's rules (the diff tool) configurations stay as written.
  absl::StatusOr<ImportBatch> raw = ParseTable(table.dump(), {});
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_FALSE(raw->winners[0].measurement.params.contains("sk"));

  // Written twice in one spelling it is still a duplicate.
  device["sweeps"][0]["rows"][1]["params"] = with_sk;
  absl::StatusOr<ImportBatch> twice = ParseTable(table.dump(), kFamilies, kValidator);
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("appears twice in this sweep"));
}

TEST(StoredWinnerTest, OneTheValidatorRefusesIsSkippedNotServed) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    std::unique_ptr<Store> store = OpenStore(path);
    Populate(*store);
    RunSweep(*store, H200(), "transpose", {4096, 4096}, Prov(),
             {Ok(TransposeWith("rows", 8), 40.0)});
  }
  // What an older cutune imported without the space check.
  ExecSql(path,
          "UPDATE winners SET params = 'minb=0,pad=1,rows=32,smem=1,swizzle=0,tile=64,vec=0' "
          "WHERE family = 'transpose' AND shape = '8192x8192'");
  ExecSql(path,
          "UPDATE rows SET params = 'minb=0,pad=1,rows=32,smem=1,swizzle=0,tile=64,vec=0' "
          "WHERE params = 'minb=0,pad=1,rows=16,smem=1,swizzle=0,tile=64,vec=1'");

  // Without a validator the stored winner is served: vec=0 divides by zero in Geometry.
  {
    std::unique_ptr<Store> unchecked = OpenStore(path);
    EXPECT_EQ(unchecked->Lookup(Query({8192, 8192})).winner.params.at("vec"), 0);
  }

  ::testing::internal::CaptureStderr();
  std::unique_ptr<Store> store = OpenStore(path, {kValidator});
  // Another write that changes winners refreshes the cache: the skip is reported once.
  RunSweep(*store, H200(), "transpose", {2048, 2048}, Prov(), {Ok(TransposeWith("rows", 16), 9.0)});
  const std::string log = ::testing::internal::GetCapturedStderr();
  const std::string line =
      "cutune store: skipping winner transpose 8192x8192 "
      "minb=0,pad=1,rows=32,smem=1,swizzle=0,tile=64,vec=0 of NVIDIA H200: parameter vec=0 is not "
      "in the space (values: 1,2,4)\n";
  EXPECT_THAT(log, HasSubstr(line));
  EXPECT_EQ(log.find(line), log.rfind(line)) << log;

  // The lookup lands on the nearest valid winner, and its answer can be launched.
  const LookupResult near = store->Lookup(Query({8192, 8192}));
  EXPECT_EQ(near.rung, LookupRung::kNearestShape);
  EXPECT_EQ(near.tuned_shape, (Shape{4096, 4096}));
  EXPECT_TRUE(kernels::TransposeFamily().ValidateParams(near.winner.params).ok());
  EXPECT_GT(kernels::TransposeFamily().Geometry(near.winner.params, {8192, 8192}, 132).grid[0], 0u);
  absl::StatusOr<std::vector<DeviceModel>> models = store->ListDeviceModels();
  ASSERT_TRUE(models.ok());
  EXPECT_EQ(models->size(), 1u);

  // Export leaves the winner and the row out, so that it imports again with the check.
  absl::StatusOr<std::vector<Winner>> winners = store->ListWinners("NVIDIA H200");
  ASSERT_TRUE(winners.ok());
  EXPECT_EQ(winners->size(), 3u);  // matmul, transpose 4096 and 2048
  const std::string exported = Export(*store);
  EXPECT_THAT(exported, ::testing::Not(HasSubstr("\"vec\":0")));
  std::unique_ptr<Store> copy = OpenStore(dir.File("copy.db"));
  absl::StatusOr<ImportStats> stats = ImportTable(*copy, exported, Validated());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->winners_added, 3);
  EXPECT_EQ(stats->rows_added, 4);  // of 5: the planted row is left out
}

TEST(StoredWinnerTest, WithNoValidWinnerTheLookupAnswersTheFamilyDefault) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    std::unique_ptr<Store> store = OpenStore(path);
    RunSweep(*store, H200(), "transpose", {8192, 8192}, Prov(),
             {Ok(kernels::TransposeFamily().baseline(), 180.0)});
  }
  ExecSql(path, "UPDATE winners SET params = ''");
  ::testing::internal::CaptureStderr();
  std::unique_ptr<Store> store = OpenStore(path, {kValidator});
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("cutune store: skipping winner transpose 8192x8192 (no parameters) of "
                        "NVIDIA H200: "
                        "missing parameter 'smem'"));
  const LookupResult answer = store->Lookup(Query({8192, 8192}));
  EXPECT_EQ(answer.rung, LookupRung::kFamilyDefault);
  EXPECT_EQ(answer.winner.params, kernels::TransposeFamily().baseline());
}

}  // namespace
}  // namespace cutune::store
