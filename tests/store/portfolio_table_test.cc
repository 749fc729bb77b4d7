// The store trains a prediction model per device model and family from its sweeps, answers
// untuned shapes with PREDICTED, and carries the portfolio matrix through a table without rows.
#include <algorithm>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/store/store.h"
#include "server/store/tables.h"
#include "tests/common/temp_dir.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::H200;
using testing::Ok;
using testing::Prov;
using testing::QueryInt;
using testing::RunSweep;
using testing::TempDir;

// Six square shapes, each swept with both configurations: tile 16 wins below 2048, 64 above.
void TuneGrid(Store& store) {
  for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) {
    const double work = static_cast<double>(n * n) / 1e5;
    const bool small = n < 2048;
    RunSweep(store, H200(), "transpose", {n, n}, Prov(),
             {Ok({{"pad", 1}, {"tile", 16}}, work * (small ? 1.0 : 1.4)),
              Ok({{"pad", 1}, {"tile", 64}}, work * (small ? 1.4 : 1.0))});
  }
}

LookupQuery Ask(Shape shape) {
  LookupQuery q;
  q.device_model = H200().name;
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = std::move(shape);
  q.family_default = {{"pad", 0}, {"tile", 32}};
  return q;
}

TEST(PortfolioTableTest, SweepsTrainTheModelAndTablesCarryItsMatrix) {
  TempDir dir;
  auto tuned = Store::Open(dir.File("tuned.db"));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  TuneGrid(**tuned);
  auto model = (*tuned)->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(model->HasMatrix());
  EXPECT_EQ(model->portfolio().members.size(), 2u);
  LookupResult answer = (*tuned)->Lookup(Ask({6000, 6000}));
  EXPECT_EQ(answer.rung, LookupRung::kPredicted);
  EXPECT_EQ(answer.winner.params.at("tile"), 64);

  // Without rows: the matrix travels as a portfolio naming the source of its times (version 6).
  absl::StatusOr<std::string> table = ExportTable(**tuned, {});
  ASSERT_TRUE(table.ok()) << table.status();
  const nlohmann::json j = nlohmann::json::parse(*table);
  EXPECT_EQ(j["version"], kTableVersionPortfolioSource);
  const auto& portfolio = j["devices"][0]["portfolios"][0];
  EXPECT_EQ(portfolio["source_hash"], Prov().source_hash);
  EXPECT_EQ(portfolio["family"], "transpose");
  EXPECT_EQ(portfolio["members"].size(), 2u);
  EXPECT_EQ(portfolio["matrix"].size(), 6u);
  EXPECT_EQ(portfolio["matrix"][0]["shape"], nlohmann::json({256, 256})) << "table order";

  auto server = Store::Open(dir.File("server.db"));
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(ImportTable(**server, *table, {}).ok());
  LookupResult served = (*server)->Lookup(Ask({6000, 6000}));
  EXPECT_EQ(served.rung, LookupRung::kPredicted);
  EXPECT_EQ(served.winner.params, answer.winner.params);
  EXPECT_NEAR(served.expected_slowdown, answer.expected_slowdown, 1e-4);
  // Export -> import -> export is byte for byte.
  absl::StatusOr<std::string> again = ExportTable(**server, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *table);
}

// TuneGrid's shapes with a third configuration 4% slower than each shape's winner: a
// near-winner that wins no shape, whose rows report 57 registers.
void TuneGridWithANearWinner(Store& store) {
  for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) {
    const double work = static_cast<double>(n * n) / 1e5;
    const bool small = n < 2048;
    Measurement near = Ok({{"pad", 1}, {"tile", 32}}, work * 1.04);
    near.resources.registers = 57;
    RunSweep(store, H200(), "transpose", {n, n}, Prov(),
             {Ok({{"pad", 1}, {"tile", 16}}, work * (small ? 1.0 : 1.4)),
              Ok({{"pad", 1}, {"tile", 64}}, work * (small ? 1.4 : 1.0)), near});
  }
}

// A fit whose cost terms depend on the registers (as matmul's occupancy does); `seen` collects
// the registers it is given for the tile-32 configuration.
StoreOptions RegisterSensitiveFit(std::shared_ptr<std::vector<int>> seen) {
  StoreOptions options;
  options.fit = [seen](std::string_view, const DeviceModel&) -> predict::FitFn {
    return [seen](const Params& p, const Shape& shape, const ResourceUsage& r) {
      if (p.at("tile") == 32) seen->push_back(r.registers);
      const double work = static_cast<double>(shape[0] * shape[1]);
      return predict::LaunchFit{1.0, {work * (1.0 + r.registers / 64.0)}};
    };
  };
  return options;
}

bool HasTile32(const predict::Model& model) {
  const auto& members = model.portfolio().members;
  return std::any_of(members.begin(), members.end(),
                     [](const Params& p) { return p.at("tile") == 32; });
}

// The model the store trains sees each member's ptxas report, a near-winner's too (from its
// rows: it won no shape, so no winner carries one).
TEST(PortfolioTableTest, ANearWinnerMembersReportComesFromItsRows) {
  TempDir dir;
  auto seen = std::make_shared<std::vector<int>>();
  auto store = Store::Open(dir.File("near.db"), RegisterSensitiveFit(seen));
  ASSERT_TRUE(store.ok()) << store.status();
  TuneGridWithANearWinner(**store);
  auto model = (*store)->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(HasTile32(*model));
  ASSERT_FALSE(seen->empty());
  for (int registers : *seen) EXPECT_EQ(registers, 57);
}

// ... and a table carries it (version 4), so a table server's model prices that member as the
// tuning daemon's does and answers alike; a table whose members all won shapes has no
// "resources" (SweepsTrainTheModelAndTablesCarryItsMatrix).
TEST(PortfolioTableTest, ANearWinnersReportTravelsInVersion4) {
  TempDir dir;
  auto seen = std::make_shared<std::vector<int>>();
  auto tuned = Store::Open(dir.File("tuned.db"), RegisterSensitiveFit(seen));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  TuneGridWithANearWinner(**tuned);
  auto model = (*tuned)->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(HasTile32(*model));
  absl::StatusOr<std::string> table = ExportTable(**tuned, {});
  ASSERT_TRUE(table.ok()) << table.status();
  const nlohmann::json j = nlohmann::json::parse(*table);
  EXPECT_EQ(j["version"], kTableVersionPortfolioSource);
  const auto& portfolio = j["devices"][0]["portfolios"][0];
  ASSERT_EQ(portfolio["resources"].size(), portfolio["members"].size());
  for (size_t m = 0; m < portfolio["members"].size(); ++m) {
    EXPECT_EQ(portfolio["resources"][m]["registers"],
              portfolio["members"][m]["tile"] == 32 ? 57 : 32)
        << m;
  }

  seen->clear();
  auto server = Store::Open(dir.File("server.db"), RegisterSensitiveFit(seen));
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(ImportTable(**server, *table, {}).ok());
  auto served_model = (*server)->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_NE(served_model, nullptr);
  EXPECT_EQ(served_model->portfolio().members, model->portfolio().members);
  ASSERT_FALSE(seen->empty());
  for (int registers : *seen) EXPECT_EQ(registers, 57) << "imported with its cells";
  for (Shape shape : {Shape{300, 300}, Shape{3000, 3000}, Shape{20000, 20000}}) {
    const LookupResult answer = (*tuned)->Lookup(Ask(shape));
    const LookupResult served = (*server)->Lookup(Ask(shape));
    EXPECT_EQ(served.rung, answer.rung) << FormatShape(shape);
    EXPECT_EQ(served.winner.params, answer.winner.params) << FormatShape(shape);
    // The same within the table's rounding of times.
    EXPECT_NEAR(served.predicted_time_us, answer.predicted_time_us,
                1e-5 * answer.predicted_time_us)
        << FormatShape(shape);
  }
  absl::StatusOr<std::string> again = ExportTable(**server, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *table) << "export -> import -> export is byte for byte";
}

// An H100 whose own model gives way to the H200's (its four tuned squares alternate winners;
// ladder_test.cc has the rule): the H200's pick at 1200x1200, tile 32, is no H100 member, so
// only the table's "judged" cells (version 5) let a table server judge four shapes and give way
// as the daemon does; without them it judges three and keeps the own model.
TEST(PortfolioTableTest, TheMeasurementsAGiveWayRestsOnTravelInVersion5) {
  TempDir dir;
  auto tuned = Store::Open(dir.File("tuned.db"));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  // TuneGrid's squares with tile 32 too, 20% slower but at 1024x1024, where it wins: the
  // H200's model picks it at 1200x1200.
  for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) {
    const double work = static_cast<double>(n * n) / 1e5;
    const bool small = n < 2048;
    RunSweep(**tuned, H200(), "transpose", {n, n}, Prov(),
             {Ok({{"pad", 1}, {"tile", 16}}, work * (small ? 1.0 : 1.4)),
              Ok({{"pad", 1}, {"tile", 32}}, work * (n == 1024 ? 0.95 : 1.2)),
              Ok({{"pad", 1}, {"tile", 64}}, work * (small ? 1.4 : 1.0))});
  }
  const std::pair<int64_t, int64_t> h100[] = {{300, 16}, {600, 64}, {1200, 16}, {5000, 64}};
  for (auto [n, winner] : h100) {
    const double work = static_cast<double>(n * n) / 1e5;
    RunSweep(**tuned, testing::H100(), "transpose", {n, n}, Prov(),
             {Ok({{"pad", 1}, {"tile", 16}}, work * (winner == 16 ? 1.0 : 1.4)),
              Ok({{"pad", 1}, {"tile", 32}}, work * 1.3),
              Ok({{"pad", 1}, {"tile", 64}}, work * (winner == 64 ? 1.0 : 1.4))});
  }
  const std::string h100_name = testing::H100().name;
  ASSERT_EQ((*tuned)->GivesWayTo(h100_name, "transpose", DType::kF32), H200().name);

  absl::StatusOr<std::string> table = ExportTable(**tuned, {});
  ASSERT_TRUE(table.ok()) << table.status();
  const nlohmann::json j = nlohmann::json::parse(*table);
  EXPECT_EQ(j["version"], kTableVersionPortfolioSource);
  const nlohmann::json* judged = nullptr;
  for (const auto& dev : j["devices"]) {
    if (dev["model"] == h100_name) judged = &dev["portfolios"][0]["judged"];
  }
  ASSERT_NE(judged, nullptr);
  ASSERT_EQ(judged->size(), 1u) << judged->dump();
  EXPECT_EQ((*judged)[0]["shape"], nlohmann::json({1200, 1200}));
  EXPECT_EQ((*judged)[0]["params"]["tile"], 32);

  auto server = Store::Open(dir.File("server.db"));
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(ImportTable(**server, *table, {}).ok());
  EXPECT_EQ((*server)->GivesWayTo(h100_name, "transpose", DType::kF32), H200().name);
  LookupQuery q = Ask({6000, 6000});
  q.device_model = h100_name;
  EXPECT_EQ((*server)->Lookup(q).rung, LookupRung::kSameArchitecture);
  absl::StatusOr<std::string> again = ExportTable(**server, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *table) << "export -> import -> export is byte for byte";

  // Without the judged cells, the server cannot judge enough shapes.
  nlohmann::json bare = j;
  for (auto& dev : bare["devices"]) {
    for (auto& portfolio : dev["portfolios"]) portfolio.erase("judged");
  }
  auto blind = Store::Open(dir.File("blind.db"));
  ASSERT_TRUE(blind.ok());
  ASSERT_TRUE(ImportTable(**blind, bare.dump(), {}).ok());
  EXPECT_EQ((*blind)->GivesWayTo(h100_name, "transpose", DType::kF32), "");
}

// One configuration of two kernel sources is two kernels: a model learns from one source's
// winners, rows and cells, never their fastest mixed. A grid swept with an older source, whose
// times are half the current one's, and again with the current source: the model's matrix holds
// the current source's times and names it; a table carries it, and a table server's model (and
// another table of the old source imported beside it) learns the same.
TEST(PortfolioTableTest, AModelLearnsFromOneKernelSource) {
  TempDir dir;
  StoreOptions options;
  options.current_source = [](std::string_view) { return std::string("hash-new"); };
  auto tune = [&](Store& store, const std::string& source, double scale) {
    for (int64_t n : {256, 512, 1024, 4096, 8192, 16384}) {
      const double work = static_cast<double>(n * n) / 1e5 * scale;
      RunSweep(store, H200(), "transpose", {n, n}, Prov(13000, source),
               {Ok({{"pad", 1}, {"tile", 16}}, work), Ok({{"pad", 1}, {"tile", 64}}, work * 1.2)});
    }
  };
  auto expect_new = [](const Store& store, const std::string& where) {
    auto model = store.PredictionModel(H200().name, "transpose", DType::kF32);
    ASSERT_NE(model, nullptr) << where;
    EXPECT_EQ(model->source_hash(), "hash-new") << where;
    const predict::Portfolio& p = model->portfolio();
    ASSERT_EQ(p.shapes.size(), 6u) << where << ": one tuned shape per grid shape";
    for (size_t s = 0; s < p.shapes.size(); ++s) {
      const double work = static_cast<double>(p.shapes[s][0] * p.shapes[s][0]) / 1e5;
      // (A table rounds times to 6 significant digits.)
      EXPECT_NEAR(p.best_us[s], work, work * 1e-5) << where << " " << FormatShape(p.shapes[s]);
      for (size_t m = 0; m < p.members.size(); ++m) {
        EXPECT_GT(p.Time(s, m), work * 0.99) << where << ": an older source's time merged in";
      }
    }
  };
  auto tuned = Store::Open(dir.File("tuned.db"), options);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  tune(**tuned, "hash-old", 0.5);
  tune(**tuned, "hash-new", 1.0);
  expect_new(**tuned, "tuned");

  absl::StatusOr<std::string> table = ExportTable(**tuned, {});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(nlohmann::json::parse(*table)["devices"][0]["portfolios"][0]["source_hash"],
            "hash-new");
  // The old grid's table alone, as an older store exported it.
  auto old_store = Store::Open(dir.File("old.db"));
  ASSERT_TRUE(old_store.ok());
  tune(**old_store, "hash-old", 0.5);
  absl::StatusOr<std::string> old_table = ExportTable(**old_store, {});
  ASSERT_TRUE(old_table.ok()) << old_table.status();
  nlohmann::json old_v5 = nlohmann::json::parse(*old_table);
  old_v5["version"] = kTableVersionJudged;
  for (auto& portfolio : old_v5["devices"][0]["portfolios"]) portfolio.erase("source_hash");

  // A table server importing the old table (without a portfolio source: its winners' is taken)
  // and then the new one keeps both sources' cells apart and learns from the current one.
  auto server = Store::Open(dir.File("server.db"), options);
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(ImportTable(**server, old_v5.dump(), {}).ok());
  ASSERT_TRUE(ImportTable(**server, *table, {}).ok());
  expect_new(**server, "server");
  EXPECT_EQ(
      QueryInt(dir.File("server.db"),
               "SELECT COUNT(DISTINCT source_hash) FROM matrix_cells WHERE source_hash <> ''"),
      2);

  // Too few shapes of the current source for a model: the older grid answers until more are.
  auto partial = Store::Open(dir.File("partial.db"), options);
  ASSERT_TRUE(partial.ok());
  tune(**partial, "hash-old", 0.5);
  RunSweep(**partial, H200(), "transpose", {256, 256}, Prov(13000, "hash-new"),
           {Ok({{"pad", 1}, {"tile", 64}}, 0.1)});
  auto model = (*partial)->PredictionModel(H200().name, "transpose", DType::kF32);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->source_hash(), "hash-old");
  EXPECT_EQ(model->portfolio().shapes.size(), 6u);
  // Its answers carry the older source's provenance, stale for a build of the new one, though
  // the shape its pick was measured at (256x256) has a winner of the new source too.
  LookupQuery q = Ask({240, 240});
  q.current = Prov(13000, "hash-new");
  LookupResult answer = (*partial)->Lookup(q);
  EXPECT_EQ(answer.rung, LookupRung::kPredicted);
  EXPECT_EQ(answer.provenance.source_hash, "hash-old");
  EXPECT_THAT(answer.stale,
              ::testing::Contains(::testing::HasSubstr("kernel source hash differs")));
}

TEST(PortfolioTableTest, BadPortfoliosAreRefusedWhere) {
  TempDir dir;
  auto store = Store::Open(dir.File("s.db"));
  ASSERT_TRUE(store.ok());
  TuneGrid(**store);
  absl::StatusOr<std::string> table = ExportTable(**store, {});
  ASSERT_TRUE(table.ok());
  // Each edit starts from the table as version 3 wrote it (no "source_hash").
  auto refuse = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& where) {
    nlohmann::json j = nlohmann::json::parse(*table);
    j["version"] = kTableVersionPortfolios;
    for (auto& portfolio : j["devices"][0]["portfolios"]) portfolio.erase("source_hash");
    edit(j);
    auto other = Store::Open(dir.File("other.db"));
    ASSERT_TRUE(other.ok());
    absl::StatusOr<ImportStats> stats = ImportTable(**other, j.dump(), {});
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument) << where;
    EXPECT_THAT(std::string(stats.status().message()), ::testing::HasSubstr(where));
  };
  refuse([](auto& j) { j["version"] = 2; }, "/devices/0/portfolios");
  refuse([](auto& j) { j["devices"][0]["portfolios"][0]["matrix"][1]["times_us"].push_back(1); },
         "/devices/0/portfolios/0/matrix/1/times_us");
  refuse([](auto& j) { j["devices"][0]["portfolios"][0]["matrix"][0]["times_us"][0] = -1; },
         "/devices/0/portfolios/0/matrix/0/times_us/0");
  refuse([](auto& j) { j["devices"][0]["portfolios"][0]["members"] = 3; },
         "/devices/0/portfolios/0/members");
  refuse([](auto& j) { j["devices"][0]["portfolios"].push_back(j["devices"][0]["portfolios"][0]); },
         "/devices/0/portfolios/1");
  // Members' reports: version 4, one per member, each a whole report.
  const nlohmann::json report = {{"registers", 40}, {"static_shared_bytes", 0},
                                 {"stack_bytes", 0},  {"spill_store_bytes", 0},
                                 {"spill_load_bytes", 0}, {"constant_bytes", 0}};
  refuse(
      [&](auto& j) {
        j["devices"][0]["portfolios"][0]["resources"] = {report, report};
      },
      "/devices/0/portfolios/0/resources: needs table version 4 (this table is version 3)");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionMemberResources;
        j["devices"][0]["portfolios"][0]["resources"] = {report};
      },
      "/devices/0/portfolios/0/resources: expected an array of 2 reports");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionMemberResources;
        nlohmann::json bad = report;
        bad["registers"] = -1;
        j["devices"][0]["portfolios"][0]["resources"] = {report, bad};
      },
      "/devices/0/portfolios/0/resources/1/registers");
  // Judged cells: version 5, each a shape of the family, parameters of its space and a time.
  const nlohmann::json cell = {
      {"shape", {1200, 1200}}, {"params", {{"pad", 1}, {"tile", 32}}}, {"time_us", 19.0}};
  refuse([&](auto& j) { j["devices"][0]["portfolios"][0]["judged"] = {cell}; },
         "/devices/0/portfolios/0/judged: needs table version 5");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionJudged;
        nlohmann::json bad = cell;
        bad["time_us"] = 0;
        j["devices"][0]["portfolios"][0]["judged"] = {cell, bad};
      },
      "/devices/0/portfolios/0/judged/1/time_us");
  // The source of its times: version 6, a non-empty string.
  refuse([&](auto& j) { j["devices"][0]["portfolios"][0]["source_hash"] = "hash-transpose-1"; },
         "/devices/0/portfolios/0/source_hash: needs table version 6");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionPortfolioSource;
        j["devices"][0]["portfolios"][0]["source_hash"] = "";
      },
      "/devices/0/portfolios/0/source_hash");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionPortfolioSource;
        j["devices"][0]["portfolios"][0]["source_hash"] = 7;
      },
      "/devices/0/portfolios/0/source_hash");
  refuse(
      [&](auto& j) {
        j["version"] = kTableVersionJudged;
        nlohmann::json bad = cell;
        bad["shape"] = {1200, -1};
        j["devices"][0]["portfolios"][0]["judged"] = {bad};
      },
      "/devices/0/portfolios/0/judged/0/shape");
}

}  // namespace
}  // namespace cutune::store
