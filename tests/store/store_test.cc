// Sweeps, rows and winners: lifecycle, resume, winner replacement and status codes.
#include "server/store/store.h"

#include <atomic>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/schema.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::H200;
using ::testing::HasSubstr;
using testing::Ok;
using testing::Prov;
using testing::QueryInt;
using testing::Rejected;
using testing::TempDir;
using ::testing::UnorderedElementsAre;

const Shape kShape = {8192, 8192};

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

LookupQuery Query(const Shape& shape = kShape) {
  LookupQuery q;
  q.device_model = "NVIDIA H200";
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = shape;
  q.current = Prov();
  q.family_default = {{"tile", 32}};
  return q;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("cutune.db");
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  SweepKey Key() const { return {H200(), "transpose", kShape, DType::kF32}; }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, OpensAtCurrentSchemaVersionInWalMode) {
  EXPECT_EQ(QueryInt(path_, "PRAGMA user_version"), kSchemaVersion);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(StoreTest, SweepLifecycleAndReadersNeverSeeAHalfSweep) {
  absl::StatusOr<StartedSweep> started = store_->StartOrResumeSweep(Key(), Prov(), "{\"a\":1}");
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_FALSE(started->resumed);
  const int64_t id = started->sweep_id;
  ASSERT_TRUE(store_->RecordMeasurement(id, Ok({{"tile", 32}}, 120.0)).ok());
  ASSERT_TRUE(store_->RecordMeasurement(id, Ok({{"tile", 64}}, 100.0)).ok());
  ASSERT_TRUE(
      store_->RecordMeasurement(id, Rejected({{"tile", 128}}, Outcome::kPruned, "smem > 48K"))
          .ok());

  absl::Status dup = store_->RecordMeasurement(id, Ok({{"tile", 32}}, 90.0));
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists) << dup;
  EXPECT_THAT(Msg(dup), HasSubstr("tile=32"));

  absl::StatusOr<std::set<std::string>> done = store_->FinishedCandidates(id);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(*done, UnorderedElementsAre("tile=32", "tile=64", "tile=128"));

  // While the sweep runs, neither the winner nor (by default) its rows are visible.
  EXPECT_EQ(store_->Lookup(Query()).rung, LookupRung::kFamilyDefault);
  RowQuery rows_query{"NVIDIA H200", "transpose", kShape, DType::kF32, "", false, 0};
  absl::StatusOr<std::vector<StoredRow>> rows = store_->ListRows(rows_query);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE(rows->empty());
  rows_query.include_unfinished = true;
  rows = store_->ListRows(rows_query);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 3u);

  absl::StatusOr<FinishResult> finish =
      store_->FinishSweep(id, SweepStatus::kSucceeded, {"device copy", 50.0});
  ASSERT_TRUE(finish.ok()) << finish.status();
  EXPECT_TRUE(finish->winner_changed);
  ASSERT_TRUE(finish->best.has_value());
  EXPECT_EQ(finish->best->params, (Params{{"tile", 64}}));

  LookupResult hit = store_->Lookup(Query());
  EXPECT_EQ(hit.rung, LookupRung::kExact);
  EXPECT_EQ(hit.winner.params, (Params{{"tile", 64}}));
  EXPECT_DOUBLE_EQ(hit.winner.timing.median_us, 100.0);
  EXPECT_EQ(hit.reference.name, "device copy");
  EXPECT_TRUE(hit.stale.empty());

  rows_query.include_unfinished = false;
  rows = store_->ListRows(rows_query);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].measurement.params, (Params{{"tile", 64}}));  // fastest first
  EXPECT_EQ((*rows)[1].measurement.params, (Params{{"tile", 32}}));
  EXPECT_EQ((*rows)[2].measurement.outcome, Outcome::kPruned);
  EXPECT_EQ((*rows)[2].measurement.detail, "smem > 48K");
  EXPECT_EQ((*rows)[0].measurement.resources.static_shared_bytes, 4224);
  rows_query.limit = 1;
  rows = store_->ListRows(rows_query);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);

  absl::StatusOr<SweepInfo> info = store_->GetSweep(id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, SweepStatus::kSucceeded);
  EXPECT_EQ(info->rows, 3);
  EXPECT_EQ(info->request_json, "{\"a\":1}");
  EXPECT_EQ(info->gpu_uuid, "GPU-aaaa");
  EXPECT_TRUE(info->finished_at_ms.has_value());

  absl::Status late = store_->RecordMeasurement(id, Ok({{"tile", 16}}, 80.0));
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  absl::StatusOr<FinishResult> again = store_->FinishSweep(id, SweepStatus::kFailed, {});
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(StoreTest, UnknownSweepIsNotFound) {
  EXPECT_EQ(store_->RecordMeasurement(999, Ok({{"tile", 1}}, 1.0)).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->FinishedCandidates(999).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->FinishSweep(999, SweepStatus::kSucceeded, {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetSweep(999).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, RejectsInvalidInput) {
  absl::StatusOr<StartedSweep> started = store_->StartOrResumeSweep(Key(), Prov(), "");
  ASSERT_TRUE(started.ok());
  Measurement no_time = Ok({{"tile", 8}}, 10.0);
  no_time.timing.median_us = 0;
  EXPECT_EQ(store_->RecordMeasurement(started->sweep_id, no_time).code(),
            absl::StatusCode::kInvalidArgument);
  Measurement nan = Ok({{"tile", 8}}, 10.0);
  nan.gbps = std::nan("");
  EXPECT_EQ(store_->RecordMeasurement(started->sweep_id, nan).code(),
            absl::StatusCode::kInvalidArgument);
  SweepKey bad = Key();
  bad.shape = {8192, 0};
  EXPECT_EQ(store_->StartOrResumeSweep(bad, Prov(), "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->FinishSweep(started->sweep_id, SweepStatus::kRunning, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, InterruptedSweepResumesAfterReopen) {
  absl::StatusOr<StartedSweep> started = store_->StartOrResumeSweep(Key(), Prov(), "{}");
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE(store_->RecordMeasurement(started->sweep_id, Ok({{"tile", 32}}, 120.0)).ok());
  ASSERT_TRUE(store_->RecordMeasurement(started->sweep_id, Ok({{"tile", 64}}, 100.0)).ok());
  store_.reset();  // the daemon goes away mid-sweep

  absl::StatusOr<std::unique_ptr<Store>> reopened = Store::Open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  absl::StatusOr<StartedSweep> resumed = (*reopened)->StartOrResumeSweep(Key(), Prov(), "{}");
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->sweep_id, started->sweep_id);
  absl::StatusOr<std::set<std::string>> done = (*reopened)->FinishedCandidates(resumed->sweep_id);
  ASSERT_TRUE(done.ok());
  EXPECT_THAT(*done, UnorderedElementsAre("tile=32", "tile=64"));
}

TEST_F(StoreTest, TwoCardsOfOneModelTuneTheSameKeyInTheirOwnSweeps) {
  // Seen on a two-H200 host: both cards tuning transpose 8192x8192 at once must not share rows.
  SweepKey card_a{H200("GPU-aaaa"), "transpose", {8192, 8192}, DType::kF32};
  SweepKey card_b{H200("GPU-bbbb"), "transpose", {8192, 8192}, DType::kF32};
  absl::StatusOr<StartedSweep> a = store_->StartOrResumeSweep(card_a, Prov(), "{}");
  absl::StatusOr<StartedSweep> b = store_->StartOrResumeSweep(card_b, Prov(), "{}");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(b->resumed);
  EXPECT_NE(a->sweep_id, b->sweep_id);
  ASSERT_TRUE(store_->RecordMeasurement(a->sweep_id, Ok({{"tile", 32}}, 120.0)).ok());
  ASSERT_TRUE(store_->RecordMeasurement(b->sweep_id, Ok({{"tile", 32}}, 121.0)).ok());
  // Neither closed the other; each card resumes its own.
  EXPECT_EQ(store_->GetSweep(a->sweep_id)->status, SweepStatus::kRunning);
  absl::StatusOr<StartedSweep> again = store_->StartOrResumeSweep(card_a, Prov(), "{}");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->resumed);
  EXPECT_EQ(again->sweep_id, a->sweep_id);
  ASSERT_TRUE(store_->FinishSweep(a->sweep_id, SweepStatus::kSucceeded, {"copy", 100}).ok());
  ASSERT_TRUE(store_->FinishSweep(b->sweep_id, SweepStatus::kSucceeded, {"copy", 100}).ok());
}

TEST_F(StoreTest, RunningSweepUnderOtherProvenanceIsClosedNotResumed) {
  absl::StatusOr<StartedSweep> old_sweep = store_->StartOrResumeSweep(Key(), Prov(12080), "{}");
  ASSERT_TRUE(old_sweep.ok());
  ASSERT_TRUE(store_->RecordMeasurement(old_sweep->sweep_id, Ok({{"tile", 32}}, 120.0)).ok());
  absl::StatusOr<StartedSweep> fresh = store_->StartOrResumeSweep(Key(), Prov(13000), "{}");
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->resumed);
  EXPECT_NE(fresh->sweep_id, old_sweep->sweep_id);
  absl::StatusOr<SweepInfo> old_info = store_->GetSweep(old_sweep->sweep_id);
  ASSERT_TRUE(old_info.ok());
  EXPECT_EQ(old_info->status, SweepStatus::kFailed);
  EXPECT_EQ(old_info->rows, 1);  // kept for inspection
  absl::StatusOr<std::set<std::string>> done = store_->FinishedCandidates(fresh->sweep_id);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->empty());
}

TEST_F(StoreTest, ASweepIsNotResumedUnderAnotherTimingMethod) {
  Provenance idle = Prov(), held = Prov();
  idle.timing = std::string(kTimingIdle);
  held.timing = std::string(kTimingHeld);
  absl::StatusOr<StartedSweep> old_sweep = store_->StartOrResumeSweep(Key(), idle, "{}");
  ASSERT_TRUE(old_sweep.ok());
  ASSERT_TRUE(store_->RecordMeasurement(old_sweep->sweep_id, Ok({{"tile", 32}}, 120.0)).ok());
  // The same method again resumes it...
  absl::StatusOr<StartedSweep> again = store_->StartOrResumeSweep(Key(), idle, "{}");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->resumed);
  // ...the other closes it: its rows do not compare with the new ones.
  absl::StatusOr<StartedSweep> fresh = store_->StartOrResumeSweep(Key(), held, "{}");
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->resumed);
  absl::StatusOr<SweepInfo> old_info = store_->GetSweep(old_sweep->sweep_id);
  ASSERT_TRUE(old_info.ok());
  EXPECT_EQ(old_info->status, SweepStatus::kFailed);
  EXPECT_EQ(old_info->provenance.timing, "idle");
  absl::StatusOr<SweepInfo> fresh_info = store_->GetSweep(fresh->sweep_id);
  ASSERT_TRUE(fresh_info.ok());
  EXPECT_EQ(fresh_info->provenance.timing, "held");
}

TEST_F(StoreTest, AWinnerTimedAnotherWayIsReplacedWhateverItsTime) {
  Provenance idle = Prov(), held = Prov();
  idle.timing = std::string(kTimingIdle);
  held.timing = std::string(kTimingHeld);
  testing::RunSweep(*store_, H200(), "transpose", kShape, held, {Ok({{"tile", 32}}, 100.0)});
  // Slower, timed the same way: kept.
  testing::RunSweep(*store_, H200(), "transpose", kShape, held, {Ok({{"tile", 64}}, 110.0)});
  EXPECT_EQ(store_->Lookup(Query()).winner.params, (Params{{"tile", 32}}));
  // Slower, timed the other way: the two times do not compare, the newer sweep's winner stands.
  testing::RunSweep(*store_, H200(), "transpose", kShape, idle, {Ok({{"tile", 16}}, 130.0)});
  LookupResult hit = store_->Lookup(Query());
  EXPECT_EQ(hit.winner.params, (Params{{"tile", 16}}));
  EXPECT_EQ(hit.provenance.timing, "idle");
  EXPECT_TRUE(hit.stale.empty());  // not stale: the configuration is as right
  absl::StatusOr<std::vector<Winner>> winners = store_->ListWinners("NVIDIA H200");
  ASSERT_TRUE(winners.ok());
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ(winners->front().provenance.timing, "idle");
}

TEST_F(StoreTest, WinnerChangesOnlyWhenFasterOrProvenanceChanged) {
  testing::RunSweep(*store_, H200(), "transpose", kShape, Prov(), {Ok({{"tile", 32}}, 100.0)});
  EXPECT_EQ(store_->Lookup(Query()).winner.params, (Params{{"tile", 32}}));

  // Slower under the same provenance: kept.
  testing::RunSweep(*store_, H200(), "transpose", kShape, Prov(), {Ok({{"tile", 64}}, 110.0)});
  EXPECT_EQ(store_->Lookup(Query()).winner.params, (Params{{"tile", 32}}));

  // Faster: replaced.
  testing::RunSweep(*store_, H200(), "transpose", kShape, Prov(), {Ok({{"tile", 16}}, 90.0)});
  EXPECT_EQ(store_->Lookup(Query()).winner.params, (Params{{"tile", 16}}));

  // Slower but measured under a new driver: the old figure is stale, the new one replaces it.
  testing::RunSweep(*store_, H200(), "transpose", kShape, Prov(13010), {Ok({{"tile", 8}}, 95.0)});
  LookupQuery q = Query();
  q.current = Prov(13010);
  LookupResult hit = store_->Lookup(q);
  EXPECT_EQ(hit.winner.params, (Params{{"tile", 8}}));
  EXPECT_TRUE(hit.stale.empty());

  // A failed sweep never changes the winner, however fast its rows.
  absl::StatusOr<StartedSweep> failed =
      store_->StartOrResumeSweep({H200(), "transpose", kShape, DType::kF32}, Prov(13010), "{}");
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(store_->RecordMeasurement(failed->sweep_id, Ok({{"tile", 4}}, 1.0)).ok());
  absl::StatusOr<FinishResult> result =
      store_->FinishSweep(failed->sweep_id, SweepStatus::kFailed, {});
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->winner_changed);
  EXPECT_EQ(store_->Lookup(q).winner.params, (Params{{"tile", 8}}));

  absl::StatusOr<std::vector<SweepInfo>> sweeps = store_->ListSweeps();
  ASSERT_TRUE(sweeps.ok());
  ASSERT_EQ(sweeps->size(), 5u);
  EXPECT_EQ(sweeps->front().id, failed->sweep_id);  // newest first
}

TEST_F(StoreTest, WinnerTiesArePersisted) {
  ImportBatch batch;
  batch.devices.push_back({"NVIDIA H200", 9, 0, 132, int64_t{150} << 30});
  Winner w;
  w.device = batch.devices[0];
  w.family = "transpose";
  w.shape = kShape;
  w.provenance = Prov();
  w.measurement = Ok({{"tile", 32}, {"pad", 1}}, 100.0);
  w.measured_at_ms = 1700000000000;
  w.ties = {{{"tile", 32}, {"pad", 0}}, {{"tile", 64}, {"pad", 1}}};
  batch.winners.push_back(w);
  ASSERT_TRUE(store_->ApplyImport(batch, MergePolicy::kKeepFaster).ok());
  EXPECT_EQ(QueryInt(path_, "SELECT COUNT(*) FROM winners WHERE ties = "
                            "'pad=0,tile=32;pad=1,tile=64'"),
            1);
  store_.reset();
  absl::StatusOr<std::unique_ptr<Store>> reopened = Store::Open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  absl::StatusOr<std::vector<Winner>> winners = (*reopened)->ListWinners("NVIDIA H200");
  ASSERT_TRUE(winners.ok()) << winners.status();
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ(winners->front().ties, w.ties);
}

TEST_F(StoreTest, UnreadableStoredTiesAreDataLoss) {
  testing::RunSweep(*store_, H200(), "transpose", kShape, Prov(), {Ok({{"tile", 32}}, 100.0)});
  testing::ExecSql(path_, "UPDATE winners SET ties = 'tile=32;;tile'");
  absl::StatusOr<std::vector<Winner>> winners = store_->ListWinners("");
  EXPECT_EQ(winners.status().code(), absl::StatusCode::kDataLoss) << winners.status();
  EXPECT_THAT(Msg(winners.status()), HasSubstr("unreadable ties 'tile=32;;tile'"));
}

// A timed row with a given spread: Ok()'s 0.4% would make most of these cases no tie.
Measurement Timed(Params params, double median_us, double rel_spread = 0.01) {
  Measurement m = Ok(std::move(params), median_us);
  m.timing.rel_spread = rel_spread;
  return m;
}

// Runs a succeeded sweep of `rows` under Prov() and finishes it with `choice`.
absl::StatusOr<FinishResult> SweepChoosing(Store& store, const std::vector<Measurement>& rows,
                                           const FinishChoice& choice,
                                           const Provenance& prov = Prov()) {
  absl::StatusOr<StartedSweep> started =
      store.StartOrResumeSweep({H200(), "transpose", kShape, DType::kF32}, prov, "{}");
  if (!started.ok()) return started.status();
  if (absl::Status s = store.RecordMeasurements(started->sweep_id, rows); !s.ok()) return s;
  return store.FinishSweep(started->sweep_id, SweepStatus::kSucceeded, {"device copy", 50.0},
                           choice);
}

std::vector<Winner> Winners(Store& store) {
  absl::StatusOr<std::vector<Winner>> winners = store.ListWinners("NVIDIA H200");
  EXPECT_TRUE(winners.ok()) << winners.status();
  return winners.ok() ? *winners : std::vector<Winner>{};
}

TEST_F(StoreTest, TheSweepsChoiceIsTheWinnerWithItsTies) {
  // The sweep names tile=32, tied with the (0.2%) faster tile=16, not the fastest row.
  absl::StatusOr<FinishResult> finish = SweepChoosing(
      *store_,
      {Timed({{"tile", 16}}, 100.0), Timed({{"tile", 32}}, 100.2), Timed({{"tile", 64}}, 120.0)},
      {Params{{"tile", 32}}, {{{"tile", 16}}}});
  ASSERT_TRUE(finish.ok()) << finish.status();
  EXPECT_TRUE(finish->winner_changed);
  ASSERT_TRUE(finish->best.has_value());
  EXPECT_EQ(finish->best->params, (Params{{"tile", 32}}));
  std::vector<Winner> winners = Winners(*store_);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].measurement.params, (Params{{"tile", 32}}));
  EXPECT_DOUBLE_EQ(winners[0].measurement.timing.median_us, 100.2);
  EXPECT_EQ(winners[0].ties, (std::vector<Params>{{{"tile", 16}}}));
  EXPECT_EQ(store_->Lookup(Query()).winner.params, (Params{{"tile", 32}}));

  // Without a choice: the fastest ok row, and no ties. tile=8 is 5% faster than tile=32.
  finish = SweepChoosing(*store_, {Timed({{"tile", 8}}, 95.0), Timed({{"tile", 4}}, 99.0)}, {});
  ASSERT_TRUE(finish.ok()) << finish.status();
  EXPECT_TRUE(finish->winner_changed);
  EXPECT_EQ(finish->best->params, (Params{{"tile", 8}}));
  winners = Winners(*store_);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].measurement.params, (Params{{"tile", 8}}));
  EXPECT_TRUE(winners[0].ties.empty());
}

TEST_F(StoreTest, TiesAreStoredOnceInCanonicalOrder) {
  absl::StatusOr<FinishResult> finish = SweepChoosing(
      *store_,
      {Timed({{"tile", 16}}, 100.0), Timed({{"tile", 32}}, 100.2), Timed({{"tile", 64}}, 100.4)},
      {Params{{"tile", 16}}, {{{"tile", 64}}, {{"tile", 32}}, {{"tile", 64}}}});
  ASSERT_TRUE(finish.ok()) << finish.status();
  EXPECT_EQ(Winners(*store_)[0].ties, (std::vector<Params>{{{"tile", 32}}, {{"tile", 64}}}));
}

TEST_F(StoreTest, AChoiceThatIsNotAnOkRowOfTheSweepChangesNothing) {
  const std::vector<Measurement> rows = {
      Timed({{"tile", 16}}, 100.0), Timed({{"tile", 32}}, 100.2),
      Rejected({{"tile", 128}}, Outcome::kPruned, "smem > 227 KiB")};
  absl::StatusOr<StartedSweep> started = store_->StartOrResumeSweep(Key(), Prov(), "{}");
  ASSERT_TRUE(started.ok());
  const int64_t id = started->sweep_id;
  ASSERT_TRUE(store_->RecordMeasurements(id, rows).ok());
  auto finish = [&](const FinishChoice& choice) {
    return store_->FinishSweep(id, SweepStatus::kSucceeded, {"device copy", 50.0}, choice)
        .status();
  };
  absl::Status s = finish({Params{{"tile", 8}}, {}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_EQ(Msg(s), absl::StrCat("the chosen winner 'tile=8' is not an ok row of sweep ", id));
  s = finish({Params{{"tile", 128}}, {}});  // recorded, but pruned
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(Msg(s), HasSubstr("'tile=128' is not an ok row"));
  s = finish({Params{{"tile", 32}}, {{{"tile", 128}}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_EQ(Msg(s), absl::StrCat("the tie 'tile=128' is not an ok row of sweep ", id));
  s = finish({Params{{"tile", 32}}, {{{"tile", 32}}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(Msg(s), "the chosen winner 'tile=32' is listed among its own ties");
  s = finish({Params{{"tile", 32}}, {Params{}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(Msg(s), "a tie without parameters");
  s = finish({std::nullopt, {{{"tile", 16}}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(Msg(s), "a sweep's ties need the winner they are tied with");

  // Nothing was written: the sweep still runs, no winner, and it can still finish.
  EXPECT_EQ(store_->GetSweep(id)->status, SweepStatus::kRunning);
  EXPECT_TRUE(Winners(*store_).empty());
  ASSERT_TRUE(finish({Params{{"tile", 32}}, {{{"tile", 16}}}}).ok());
  EXPECT_EQ(Winners(*store_)[0].measurement.params, (Params{{"tile", 32}}));
}

TEST_F(StoreTest, AWinnerATieApartKeepsTheCanonicallyFirstConfiguration) {
  auto winner = [&] { return Winners(*store_).at(0).measurement.params; };
  ASSERT_TRUE(SweepChoosing(*store_, {Timed({{"tile", 32}}, 100.0)}, {}).ok());
  EXPECT_EQ(winner(), (Params{{"tile", 32}}));

  // Tied (0.5% apart, 1% spread) and canonically first: replaces, though 0.5% slower.
  absl::StatusOr<FinishResult> r = SweepChoosing(*store_, {Timed({{"tile", 16}}, 100.5)}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->winner_changed);
  EXPECT_EQ(winner(), (Params{{"tile", 16}}));

  // Tied and canonically later: kept, though 0.5% faster.
  r = SweepChoosing(*store_, {Timed({{"tile", 64}}, 100.0)}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->winner_changed);
  EXPECT_EQ(winner(), (Params{{"tile", 16}}));

  // The same configuration re-measured a noise apart: kept (figures and ties as they were).
  r = SweepChoosing(*store_, {Timed({{"tile", 16}}, 100.2), Timed({{"tile", 8}}, 100.3)},
                    {Params{{"tile", 16}}, {{{"tile", 8}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->winner_changed);
  EXPECT_TRUE(Winners(*store_)[0].ties.empty());

  // Faster beyond the noise: replaces, whatever the canonical order.
  r = SweepChoosing(*store_, {Timed({{"tile", 128}}, 90.0)}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->winner_changed);
  EXPECT_EQ(winner(), (Params{{"tile", 128}}));

  // Slower beyond the noise: kept.
  r = SweepChoosing(*store_, {Timed({{"tile", 4}}, 95.0)}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->winner_changed);

  // A stale stored winner (another driver) is replaced even by a tied, canonically later one.
  r = SweepChoosing(*store_, {Timed({{"tile", 256}}, 90.1)}, {}, Prov(13010));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->winner_changed);
  EXPECT_EQ(winner(), (Params{{"tile", 256}}));
}

TEST_F(StoreTest, RecordsDeviceModelsAndIndividualGpus) {
  ASSERT_TRUE(store_->UpsertDevice(H200("GPU-1"), 13000).ok());
  ASSERT_TRUE(store_->UpsertDevice(H200("GPU-2"), 13000).ok());
  ASSERT_TRUE(store_->UpsertDevice(H200("GPU-1"), 13010).ok());
  absl::StatusOr<std::vector<DeviceModel>> models = store_->ListDeviceModels();
  ASSERT_TRUE(models.ok());
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0].sm_count, 132);
  EXPECT_EQ((*models)[0].cc_major, 9);
  EXPECT_EQ(QueryInt(path_, "SELECT COUNT(*) FROM gpus"), 2);
  EXPECT_EQ(QueryInt(path_, "SELECT driver_version FROM gpus WHERE uuid = 'GPU-1'"), 13010);
}

}  // namespace
}  // namespace cutune::store

namespace cutune::store {
namespace {

// Readers running next to the writer only ever see whole sweeps: every sweep writes exactly
// kRows rows, so a row count that is not a multiple of kRows would be half a sweep.
TEST(StoreConcurrencyTest, ReadersNeverSeeHalfASweep) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<Store>> opened = Store::Open(dir.File("c.db"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  constexpr int kSweeps = 15;
  constexpr int kRows = 5;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      RowQuery q{"NVIDIA H200", "transpose", kShape, DType::kF32, "", false, 0};
      while (!done.load()) {
        // Winner first: once a winner is visible, its sweep's rows must be too.
        LookupResult hit = store.Lookup(Query());
        absl::StatusOr<std::vector<StoredRow>> rows = store.ListRows(q);
        if (!rows.ok() || rows->size() % kRows != 0) ++bad;
        if (hit.rung == LookupRung::kExact && rows.ok() && rows->empty()) ++bad;
        ++reads;
      }
    });
  }
  for (int s = 0; s < kSweeps; ++s) {
    std::vector<Measurement> rows;
    for (int r = 0; r < kRows; ++r) rows.push_back(Ok({{"tile", r}, {"sweep", s}}, 100.0 - s - r));
    testing::RunSweep(store, H200(), "transpose", kShape, Prov(), rows);
  }
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(store.Lookup(Query()).winner.params,
            (Params{{"sweep", kSweeps - 1}, {"tile", kRows - 1}}));
}

}  // namespace
}  // namespace cutune::store
