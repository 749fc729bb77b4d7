// Nsight Compute profiles stored with their rows (schema version 5).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/schema.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using namespace testing;
using ::testing::HasSubstr;

StoredProfile Sample(std::string version, double conflicts, int64_t at) {
  return {std::move(version),
          at,
          {{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", conflicts, ""},
           {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 87.5, "%"}}};
}

class ProfilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(dir_.File("cutune.db"));
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = std::move(*opened);
    ASSERT_TRUE(store_->UpsertDevice(H200(), 13000).ok());
    sweep_ = RunSweep(*store_, H200(), "transpose", {4096, 4096}, Prov(),
                      {Ok({{"tile", 32}}, 12.0), Ok({{"tile", 64}}, 14.0)});
  }
  // The stored rows' sequence (row id) by their tile.
  std::map<int64_t, int64_t> RowIds() {
    RowQuery query{"NVIDIA H200", "transpose", {4096, 4096}, DType::kF32, "", false, 0, 0};
    auto rows = store_->ListRows(query);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::map<int64_t, int64_t> ids;
    for (const StoredRow& row : *rows) ids[row.measurement.params.at("tile")] = row.sequence;
    return ids;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  int64_t sweep_ = 0;
};

TEST_F(ProfilesTest, AProfileIsStoredWithItsRowAndReadBack) {
  ASSERT_TRUE(store_->RecordProfile(sweep_, {{"tile", 64}}, Sample("2025.3.1.0", 4096, 1000)).ok());
  auto ids = RowIds();
  auto profiles = store_->ProfilesOfRows({ids[32], ids[64]});
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  ASSERT_EQ(profiles->size(), 1u);  // the unprofiled row has none
  const StoredProfile& p = profiles->at(ids[64]);
  EXPECT_EQ(p.ncu_version, "2025.3.1.0");
  EXPECT_EQ(p.profiled_at_ms, 1000);
  ASSERT_EQ(p.metrics.size(), 2u);
  EXPECT_EQ(p.metrics[1].name, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum");
  EXPECT_DOUBLE_EQ(p.metrics[1].value, 4096);
  EXPECT_EQ(p.metrics[0].unit, "%");
}

TEST_F(ProfilesTest, TheSameVersionReplacesAndTheNewestIsRead) {
  ASSERT_TRUE(store_->RecordProfile(sweep_, {{"tile", 32}}, Sample("2025.2.0.0", 9, 1000)).ok());
  ASSERT_TRUE(store_->RecordProfile(sweep_, {{"tile", 32}}, Sample("2025.3.1.0", 8, 2000)).ok());
  ASSERT_TRUE(store_->RecordProfile(sweep_, {{"tile", 32}}, Sample("2025.3.1.0", 0, 3000)).ok());
  const std::string path = dir_.File("cutune.db");
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM profiles"), 4);  // two versions, two metrics
  auto profiles = store_->ProfilesOfRows({RowIds()[32]});
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  const StoredProfile& p = profiles->begin()->second;
  EXPECT_EQ(p.profiled_at_ms, 3000);
  ASSERT_EQ(p.metrics.size(), 2u);
  EXPECT_DOUBLE_EQ(p.metrics[1].value, 0);
}

TEST_F(ProfilesTest, ARowThatIsNotThereIsNotFound) {
  absl::Status s = store_->RecordProfile(sweep_, {{"tile", 16}}, Sample("2025.3.1.0", 0, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no row 'tile=16' in sweep"));
  s = store_->RecordProfile(sweep_, {{"tile", 32}}, {"2025.3.1.0", 1, {}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(ProfilesMigrationTest, AVersion4StoreGainsTheTableAndKeepsItsRows) {
  TempDir dir;
  const std::string path = dir.File("v4.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (int v = 1; v <= 4; ++v) {
      ASSERT_EQ(sqlite3_exec(db, std::string(SchemaStepDdl(v)).c_str(), nullptr, nullptr, nullptr),
                SQLITE_OK)
          << v;
    }
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 4", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->UpsertDevice(H200(), 13000).ok());
    const int64_t sweep = RunSweep(**store, H200(), "transpose", {64, 64}, Prov(),
                                   {Ok({{"tile", 32}}, 2.0)});
    EXPECT_TRUE((*store)->RecordProfile(sweep, {{"tile", 32}}, Sample("2025.3.1.0", 0, 5)).ok());
  }
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM profiles"), 2);
}

}  // namespace
}  // namespace cutune::store
