// Schema migrations: databases built with the version-1, version-2 and version-5 DDL are
// migrated with their data intact; a database from a newer cutune is refused and left byte-for-byte untouched.
#include <fstream>
#include <iterator>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/schema.h"
#include "server/store/store.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::ExecSql;
using ::testing::HasSubstr;
using testing::QueryInt;
using testing::TempDir;

void ExecOrDie(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "") << "\n"
      << sql;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(MigrationTest, Version1DatabaseIsMigratedWithItsData) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ExecOrDie(db, std::string(SchemaV1Ddl()));
    ExecOrDie(db, "PRAGMA user_version = 1");
    ExecOrDie(db, R"sql(
      INSERT INTO device_models VALUES (1, 'NVIDIA H200', 9, 0, 132, 150000000000);
      INSERT INTO provenances VALUES (1, 13000, '13.0');
      INSERT INTO kernels VALUES (1, 'transpose', 'hash-v1', 1);
      INSERT INTO sweeps VALUES (1, 1, 1, 1, '4096x4096', 'f32', '{}', 'succeeded',
                                 1700000000000, 1700000060000, 'device copy', 10.0);
      INSERT INTO sweeps VALUES (2, 1, 1, 1, '2048x2048', 'f32', '{}', 'running',
                                 1700000100000, NULL, '', 0);
      INSERT INTO rows VALUES (1, 1, 'tile=32', 'ok', '', 32, 4224, 0, 0, 0, 360, 20, 12.5, 12.0,
                               0.01, 2700.0, 0, 80.0, 60.0, 1700000030000);
      INSERT INTO rows VALUES (2, 1, 'tile=128', 'pruned', 'smem', 0, 0, 0, 0, 0, 0, 0, 0, 0,
                               0, 0, 0, 0, 0, 1700000031000);
      INSERT INTO rows VALUES (3, 2, 'tile=32', 'ok', '', 32, 4224, 0, 0, 0, 360, 20, 3.5, 3.4,
                               0.01, 2400.0, 0, 70.0, 60.0, 1700000130000);
      INSERT INTO winners VALUES (1, 'transpose', 'hash-v1', '4096x4096', 'f32', 1, 1, 1,
                                  'tile=32', 'ok', '', 32, 4224, 0, 0, 0, 360, 20, 12.5, 12.0,
                                  0.01, 2700.0, 0, 80.0, 60.0, 1700000030000, 'device copy', 10.0);
    )sql");
    sqlite3_close(db);
  }

  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM gpus"), 0);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM sweeps WHERE gpu_uuid = ''"), 2);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'rows_by_time'"), 1);

  LookupQuery q;
  q.device_model = "NVIDIA H200";
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = {4096, 4096};
  q.current = {13000, "13.0", "hash-v1", 1, ""};
  LookupResult hit = (*store)->Lookup(q);
  EXPECT_EQ(hit.rung, LookupRung::kExact);
  EXPECT_EQ(hit.winner.params, (Params{{"tile", 32}}));
  EXPECT_DOUBLE_EQ(hit.winner.timing.median_us, 12.5);

  absl::StatusOr<std::vector<StoredRow>> rows =
      (*store)->ListRows({"NVIDIA H200", "transpose", {4096, 4096}, DType::kF32, "", false, 0});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].measurement.detail, "smem");

  // The v1 sweep that was running resumes under the new schema.
  // Set field by field: g++ 12 at -O3 (Release) reports the strings of a braced nested
  // aggregate as maybe-uninitialized on the exception cleanup path.
  SweepKey key;
  key.device.name = "NVIDIA H200";
  key.device.uuid = "GPU-x";
  key.device.cc_major = 9;
  key.device.sm_count = 132;
  key.device.total_memory_bytes = 150000000000;
  key.family = "transpose";
  key.shape = {2048, 2048};
  absl::StatusOr<StartedSweep> resumed = (*store)->StartOrResumeSweep(key, q.current, "{}");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->sweep_id, 2);
  absl::StatusOr<FinishResult> done =
      (*store)->FinishSweep(2, SweepStatus::kSucceeded, {"device copy", 2.5});
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->winner_changed);

  // Reopening a current database is a no-op.
  store->reset();
  absl::StatusOr<std::unique_ptr<Store>> again = Store::Open(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM winners"), 2);
}

TEST(MigrationTest, Version2DatabaseOpensAndItsWinnersHaveNoTies) {
  TempDir dir;
  const std::string path = dir.File("v2.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ExecOrDie(db, std::string(SchemaStepDdl(1)));
    ExecOrDie(db, std::string(SchemaStepDdl(2)));
    ExecOrDie(db, "PRAGMA user_version = 2");
    ExecOrDie(db, R"sql(
      INSERT INTO device_models VALUES (1, 'NVIDIA H200', 9, 0, 132, 150000000000);
      INSERT INTO provenances VALUES (1, 13000, '13.0');
      INSERT INTO winners VALUES (1, 'transpose', 'hash-v2', '4096x4096', 'f32', 1, 1, NULL,
                                  'tile=32', 'ok', '', 32, 4224, 0, 0, 0, 360, 20, 12.5, 12.0,
                                  0.01, 2700.0, 0, 80.0, 60.0, 1700000030000, 'device copy', 10.0);
    )sql");
    sqlite3_close(db);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM winners WHERE ties = ''"), 1);
  absl::StatusOr<std::vector<Winner>> winners = (*store)->ListWinners("");
  ASSERT_TRUE(winners.ok()) << winners.status();
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ(winners->front().measurement.params, (Params{{"tile", 32}}));
  EXPECT_TRUE(winners->front().ties.empty());
}

// Version 5 -> 6: imported matrix cells are kept, with no ptxas report (zeros), and a table's
// member reports can be stored beside them from then on.
TEST(MigrationTest, Version5MatrixCellsAreKeptWithoutReports) {
  TempDir dir;
  const std::string path = dir.File("v5.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (int v = 1; v <= 5; ++v) ExecOrDie(db, std::string(SchemaStepDdl(v)));
    ExecOrDie(db, "PRAGMA user_version = 5");
    ExecOrDie(db, R"sql(
      INSERT INTO device_models VALUES (1, 'NVIDIA H200', 9, 0, 132, 150000000000);
      INSERT INTO matrix_cells VALUES (1, 'transpose', 'f32', '4096x4096', 'tile=32', 12.5);
    )sql");
    sqlite3_close(db);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM matrix_cells WHERE time_us = 12.5"), 1);
  EXPECT_EQ(QueryInt(path, "SELECT registers + static_shared_bytes + stack_bytes + "
                           "spill_store_bytes + spill_load_bytes + constant_bytes FROM matrix_cells"),
            0);
}

// Version 6 -> 7: imported matrix cells are kept with their reports and no known source (''),
// which counts for every source; a cell of another source of the same member and shape can then
// be stored beside one.
TEST(MigrationTest, Version6MatrixCellsAreKeptWithoutASource) {
  TempDir dir;
  const std::string path = dir.File("v6.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (int v = 1; v <= 6; ++v) ExecOrDie(db, std::string(SchemaStepDdl(v)));
    ExecOrDie(db, "PRAGMA user_version = 6");
    ExecOrDie(db, R"sql(
      INSERT INTO device_models VALUES (1, 'NVIDIA H200', 9, 0, 132, 150000000000);
      INSERT INTO matrix_cells VALUES (1, 'transpose', 'f32', '4096x4096', 'tile=32', 12.5,
                                       40, 0, 0, 0, 0, 0);
    )sql");
    sqlite3_close(db);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(path,
                     "SELECT COUNT(*) FROM matrix_cells WHERE time_us = 12.5 AND "
                     "registers = 40 AND source_hash = ''"),
            1);
  store->reset();
  ExecSql(path,
          "INSERT INTO matrix_cells (device_model_id, family, dtype, shape, params, "
          "time_us, source_hash) VALUES (1, 'transpose', 'f32', '4096x4096', 'tile=32', "
          "13.0, 'hash-new')");
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM matrix_cells"), 2);
}

TEST(MigrationTest, Version7SweepsAndWinnersHaveNoTimingRecorded) {
  TempDir dir;
  const std::string path = dir.File("v7.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (int v = 1; v <= 7; ++v) ExecOrDie(db, std::string(SchemaStepDdl(v)));
    ExecOrDie(db, "PRAGMA user_version = 7");
    ExecOrDie(db, R"sql(
      INSERT INTO device_models VALUES (1, 'NVIDIA H200', 9, 0, 132, 150000000000);
      INSERT INTO provenances VALUES (1, 13000, '13.0');
      INSERT INTO kernels VALUES (1, 'transpose', 'hash-v1', 1);
      INSERT INTO sweeps (id, device_model_id, kernel_id, provenance_id, shape, dtype,
                          request_json, status, started_at_ms, finished_at_ms)
        VALUES (1, 1, 1, 1, '4096x4096', 'f32', '{}', 'succeeded', 1000, 2000);
    )sql");
    sqlite3_close(db);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kSchemaVersion);
  absl::StatusOr<SweepInfo> sweep = (*store)->GetSweep(1);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->provenance.timing, "");  // not recorded, not guessed
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM winners WHERE timing = ''"), 0);
}

TEST(MigrationTest, EveryStepHasFrozenDdl) {
  EXPECT_EQ(SchemaStepDdl(1), SchemaV1Ddl());
  for (int v = 1; v <= kSchemaVersion; ++v) EXPECT_FALSE(SchemaStepDdl(v).empty()) << v;
  EXPECT_TRUE(SchemaStepDdl(0).empty());
  EXPECT_TRUE(SchemaStepDdl(kSchemaVersion + 1).empty());
}

TEST(MigrationTest, NewerDatabaseIsRefusedAndUntouched) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ExecOrDie(db, "CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (7);");
    ExecOrDie(db, "PRAGMA user_version = 99");
    sqlite3_close(db);
  }
  const std::string before = ReadFile(path);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("newer"));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("99"));
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(MigrationTest, NonDatabaseFileIsDataLoss) {
  TempDir dir;
  const std::string path = dir.File("garbage.db");
  std::ofstream(path) << std::string(4096, 'x');
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
}

}  // namespace
}  // namespace cutune::store
