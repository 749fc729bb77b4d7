// Kills a writer process with SIGKILL at random points, many times, then checks that the
// database is intact, holds no partial or inconsistent rows, and that the sweep resumes to
// completion with every candidate recorded exactly once.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "tests/store/test_util.h"
#include "tests/store/writer_rows.h"

namespace cutune::store {
namespace {

using testing::QueryInt;
using testing::TempDir;

constexpr int kCandidates = 300;
// The simulated GPU work per candidate keeps the whole sweep (>= 0.9 s) longer than the sum of
// the kill delays (~0.6 s), so the kills interrupt it however fast the disk is.
constexpr int kWorkUs = 3000;
constexpr int kKills = 30;

// Starts the writer; returns its pid.
pid_t SpawnWriter(const std::string& db) {
  pid_t pid = fork();
  if (pid == 0) {
    std::string n = std::to_string(kCandidates), us = std::to_string(kWorkUs);
    execl(CUTUNE_STORE_WRITER, CUTUNE_STORE_WRITER, db.c_str(), n.c_str(), us.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Every stored row must be one of the writer's candidates, complete and unaltered.
void CheckRows(const std::string& db_path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT params, outcome, detail, registers, samples, median_us, "
                               "min_us, rel_spread, gbps, percent_of_reference, compile_ms, "
                               "measured_at_ms FROM rows",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    for (int col = 0; col < 12; ++col) {
      ASSERT_NE(sqlite3_column_type(stmt, col), SQLITE_NULL) << "NULL in column " << col;
    }
    std::string params = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    absl::StatusOr<Params> parsed = ParseParams(params);
    ASSERT_TRUE(parsed.ok()) << params;
    ASSERT_TRUE(parsed->contains("idx")) << params;
    Measurement want = writer_rows::Candidate(static_cast<int>(parsed->at("idx")));
    SCOPED_TRACE(params);
    EXPECT_EQ(params, FormatParams(want.params));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1))),
              OutcomeName(want.outcome));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2))),
              want.detail);
    EXPECT_EQ(sqlite3_column_int(stmt, 3), want.resources.registers);
    EXPECT_EQ(sqlite3_column_int(stmt, 4), want.timing.samples);
    EXPECT_EQ(sqlite3_column_double(stmt, 5), want.timing.median_us);
    EXPECT_EQ(sqlite3_column_double(stmt, 6), want.timing.min_us);
    EXPECT_EQ(sqlite3_column_double(stmt, 7), want.timing.rel_spread);
    EXPECT_EQ(sqlite3_column_double(stmt, 8), want.gbps);
    EXPECT_EQ(sqlite3_column_double(stmt, 9), want.percent_of_reference);
    EXPECT_EQ(sqlite3_column_double(stmt, 10), want.compile_ms);
    EXPECT_GT(sqlite3_column_int64(stmt, 11), 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

std::string IntegrityCheck(const std::string& db_path) {
  sqlite3* db = nullptr;
  std::string result = "open failed";
  if (sqlite3_open(db_path.c_str(), &db) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return result;
}

TEST(StoreCrashTest, SigkilledWriterLeavesNoPartialRowsAndResumes) {
  TempDir dir;
  const std::string db = dir.File("crash.db");
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, 40000);

  int killed_mid_run = 0;
  for (int i = 0; i < kKills; ++i) {
    pid_t pid = SpawnWriter(db);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
      ++killed_mid_run;
    } else {
      // Finished before the kill: then it must have succeeded, never failed.
      ASSERT_TRUE(WIFEXITED(status));
      ASSERT_EQ(WEXITSTATUS(status), 0) << "writer failed in run " << i;
    }
  }
  EXPECT_GE(killed_mid_run, kKills / 2);

  ASSERT_EQ(IntegrityCheck(db), "ok");
  CheckRows(db);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM (SELECT sweep_id, params FROM rows GROUP BY "
                     "sweep_id, params HAVING COUNT(*) > 1)"),
            0);
  // Every interrupted run resumed the same sweep instead of starting over.
  EXPECT_LE(QueryInt(db, "SELECT COUNT(*) FROM sweeps"), 1);
  const int64_t rows_after_kills = QueryInt(db, "SELECT COUNT(*) FROM rows");
  EXPECT_LT(rows_after_kills, kCandidates) << "the kills should interrupt the sweep";

  pid_t pid = SpawnWriter(db);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  EXPECT_EQ(IntegrityCheck(db), "ok");
  CheckRows(db);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM sweeps"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM sweeps WHERE status = 'succeeded'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM rows"), kCandidates);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT params) FROM rows"), kCandidates);

  // The winner is the fastest ok candidate of the whole sweep.
  int best = -1;
  for (int i = 0; i < kCandidates; ++i) {
    Measurement m = writer_rows::Candidate(i);
    if (m.outcome == Outcome::kOk &&
        (best < 0 || m.timing.median_us < writer_rows::Candidate(best).timing.median_us)) {
      best = i;
    }
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  LookupQuery q;
  q.device_model = "NVIDIA H200";
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = {4096, 4096};
  q.current = writer_rows::Prov();
  LookupResult hit = (*store)->Lookup(q);
  EXPECT_EQ(hit.rung, LookupRung::kExact);
  EXPECT_EQ(hit.winner.params, writer_rows::Candidate(best).params);
}

}  // namespace
}  // namespace cutune::store
