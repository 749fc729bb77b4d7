// Fixtures shared by the store tests: a temporary directory and sample devices, provenance and
// measurements.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/temp_dir.h"
#include "server/core/types.h"
#include "server/store/store.h"

namespace cutune::store::testing {

using ::cutune::testing::TempDir;

inline DeviceDescription H200(std::string uuid = "GPU-aaaa") {
  return {"NVIDIA H200", std::move(uuid), 9, 0, 132, int64_t{150} << 30};
}
inline DeviceDescription H100(std::string uuid = "GPU-bbbb") {
  return {"NVIDIA H100 80GB HBM3", std::move(uuid), 9, 0, 132, int64_t{80} << 30};
}
inline DeviceDescription A100(std::string uuid = "GPU-cccc") {
  return {"NVIDIA A100-SXM4-80GB", std::move(uuid), 8, 0, 108, int64_t{80} << 30};
}

inline Provenance Prov(int driver = 13000, std::string hash = "hash-transpose-1") {
  return {driver, "13.0", std::move(hash), 1, ""};
}

inline Measurement Ok(Params params, double median_us) {
  Measurement m;
  m.params = std::move(params);
  m.outcome = Outcome::kOk;
  m.resources = {32, 4224, 0, 0, 0, 360};
  m.timing = {20, median_us, median_us * 0.98, 0.004};
  m.gbps = 1000.0 / median_us;
  m.tflops = 0;
  m.percent_of_reference = 50.0 / median_us * 100.0;
  m.compile_ms = 61.5;
  return m;
}

inline Measurement Rejected(Params params, Outcome outcome, std::string detail) {
  Measurement m;
  m.params = std::move(params);
  m.outcome = outcome;
  m.detail = std::move(detail);
  return m;
}

// Runs a whole succeeded sweep of `rows` and returns its id.
inline int64_t RunSweep(Store& store, const DeviceDescription& device, const std::string& family,
                        const Shape& shape, const Provenance& prov,
                        const std::vector<Measurement>& rows) {
  absl::StatusOr<StartedSweep> started =
      store.StartOrResumeSweep({device, family, shape, DType::kF32}, prov, "{}");
  EXPECT_TRUE(started.ok()) << started.status();
  if (!started.ok()) return 0;
  for (const Measurement& m : rows) {
    absl::Status s = store.RecordMeasurement(started->sweep_id, m);
    EXPECT_TRUE(s.ok()) << s;
  }
  absl::StatusOr<FinishResult> done =
      store.FinishSweep(started->sweep_id, SweepStatus::kSucceeded, {"device copy", 50.0});
  EXPECT_TRUE(done.ok()) << done.status();
  return started->sweep_id;
}

// One integer from raw SQL, bypassing the store.
inline int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    } else {
      ADD_FAILURE() << "query failed: " << sql << ": " << sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

// Runs SQL on the database file directly, bypassing the store (to plant what an older or
// damaged database may hold).
inline void ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << sql << ": " << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

}  // namespace cutune::store::testing
