// The store: opening and migrating the database, devices, sweeps and their rows, the winner a
// finished sweep leaves, and the in-memory winner cache lookups are answered from. Applying an
// imported table is in store_import.cc; the SQL both share is in queries.cc.
#include "server/store/store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/core/ties.h"
#include "server/store/queries.h"
#include "server/store/row_sql.h"
#include "server/store/schema.h"
#include "server/store/training_source.h"
#include "server/store/winner_rule.h"

namespace cutune::store {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view SweepStatusName(SweepStatus status) {
  switch (status) {
    case SweepStatus::kRunning:
      return "running";
    case SweepStatus::kSucceeded:
      return "succeeded";
    case SweepStatus::kFailed:
      return "failed";
    case SweepStatus::kCancelled:
      return "cancelled";
  }
  return "?";
}

absl::StatusOr<SweepStatus> ParseSweepStatus(std::string_view name) {
  for (SweepStatus s : {SweepStatus::kRunning, SweepStatus::kSucceeded, SweepStatus::kFailed,
                        SweepStatus::kCancelled}) {
    if (SweepStatusName(s) == name) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown sweep status '", std::string(name),
                                                 "' (running, succeeded, failed, cancelled)"));
}

absl::Status EntryValidator::operator()(std::string_view family, const Shape& shape,
                                        const Params& configuration) const {
  if (problem) {
    if (absl::Status s = problem(family, shape); !s.ok()) return s;
  }
  if (params) return params(family, configuration);
  return absl::OkStatus();
}

namespace {

using internal::BindMeasurement;
using internal::DeviceModelId;
using internal::ExistingWinner;
using internal::FindWinner;
using internal::KernelId;
using internal::kMeasurementColCount;
using internal::kMeasurementCols;
using internal::ModelOf;
using internal::Placeholders;
using internal::PrefixedMeasurementCols;
using internal::ProvenanceId;
using internal::QuerySweepRows;
using internal::QuerySweep;
using internal::QuerySweeps;
using internal::QueryWinners;
using internal::ReadMeasurement;
using internal::SelectId;
using internal::WriteWinner;

absl::Status ValidateMeasurement(const Measurement& m) {
  for (double v : {m.timing.median_us, m.timing.min_us, m.timing.rel_spread, m.gbps, m.tflops,
                   m.percent_of_reference, m.compile_ms}) {
    if (!std::isfinite(v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat("measurement of '", FormatParams(m.params),
                                                     "' has a negative or non-finite figure"));
    }
  }
  if (m.outcome == Outcome::kOk && (m.timing.samples <= 0 || m.timing.median_us <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("ok measurement of '", FormatParams(m.params),
                                                   "' needs samples > 0 and a median > 0"));
  }
  return absl::OkStatus();
}
absl::Status ValidateProblem(std::string_view family, const Shape& shape) {
  if (family.empty()) return absl::InvalidArgumentError("empty kernel family");
  if (shape.empty()) return absl::InvalidArgumentError("empty shape");
  for (int64_t d : shape) {
    if (d <= 0) return absl::InvalidArgumentError(absl::StrCat("bad shape ", FormatShape(shape)));
  }
  return absl::OkStatus();
}

// The ok row of the sweep with `params`, or with none given the fastest (ties in time broken by
// parameters); empty when there is no such row.
absl::StatusOr<std::optional<StoredRow>> OkRow(Db& db, int64_t sweep_id, const Params* params) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat("SELECT measured_at_ms, ", kMeasurementCols,
                       " FROM rows WHERE sweep_id = ?1 AND outcome = 'ok' AND "
                       "(?2 IS NULL OR params = ?2) ORDER BY median_us, params LIMIT 1"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, sweep_id);
  if (params != nullptr) stmt->Bind(2, FormatParams(*params));
  absl::StatusOr<bool> found = stmt->Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<StoredRow>();
  absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 1);
  if (!m.ok()) return m.status();
  return std::optional<StoredRow>(StoredRow{sweep_id, *std::move(m), stmt->Int(0)});
}

}  // namespace

// What lookups are answered from: the winners the validator accepts, indexed, and every device
// model. Replaced whole after each write that changes either.
struct Store::WinnerCache {
  std::shared_ptr<const WinnerIndex> index;  // shared by the snapshots of one refresh
  std::vector<DeviceModel> models;  // every device model, by name
  ModelMap predictors;
  Deferrals deferrals;  // own prediction models that give way to another (ChooseDeferrals)
  std::vector<ModelComparison> comparisons;  // what they were chosen from
};

Store::Store(Db writer, Db reader, StoreOptions options)
    : options_(std::move(options)), writer_(std::move(writer)), reader_(std::move(reader)) {}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                  const StoreOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("empty database path");
  absl::StatusOr<Db> writer = Db::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!writer.ok()) return writer.status();
  sqlite3_busy_timeout(writer->get(), 5000);
  // Check the version before any pragma that writes to the file: a database from a newer
  // cutune must be left exactly as it is.
  absl::StatusOr<int64_t> version = writer->QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) return Migrate(*writer);  // reports FAILED_PRECONDITION
  {
    absl::StatusOr<Stmt> wal = Stmt::Prepare(*writer, "PRAGMA journal_mode = WAL");
    if (!wal.ok()) return wal.status();
    absl::StatusOr<bool> wal_row = wal->Step();
    if (!wal_row.ok()) return wal_row.status();
    if (!*wal_row || wal->Text(0) != "wal") {
      return absl::FailedPreconditionError(absl::StrCat("cannot use WAL journal for ", path,
                                                        " (got '", *wal_row ? wal->Text(0) : "",
                                                        "'); is it on a network file system?"));
    }
  }
  if (absl::Status s = writer->Exec(options.durable
                                        ? "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON"
                                        : "PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Migrate(*writer); !s.ok()) return s;

  absl::StatusOr<Db> reader = Db::Open(path, SQLITE_OPEN_READWRITE);
  if (!reader.ok()) return reader.status();
  sqlite3_busy_timeout(reader->get(), 5000);
  if (absl::Status s = reader->Exec("PRAGMA query_only = ON"); !s.ok()) return s;

  std::unique_ptr<Store> store(new Store(*std::move(writer), *std::move(reader), options));
  std::lock_guard<std::mutex> lock(store->write_mu_);
  if (absl::Status s = store->RefreshCacheLocked(); !s.ok()) return s;
  return store;
}

void Store::DropRefused(std::vector<Winner>& winners, bool log) {
  if (!options_.validator) return;
  std::erase_if(winners, [&](const Winner& w) {
    absl::Status s = options_.validator(w.family, w.shape, w.measurement.params);
    if (s.ok()) return false;
    if (log) {
      const Params& params = w.measurement.params;
      std::string line = absl::StrCat(
          "cutune store: skipping winner ", w.family, " ", FormatShape(w.shape), " ",
          params.empty() ? "(no parameters)" : FormatParams(params), " of ", w.device.name, ": ",
          s.message());
      std::lock_guard<std::mutex> lock(log_mu_);
      if (logged_.insert(line).second) std::cerr << line << "\n";
    }
    return true;
  });
}

absl::Status Store::RefreshCacheLocked(bool retrain) {
  absl::StatusOr<std::vector<Winner>> winners = QueryWinners(writer_, "");
  if (!winners.ok()) return winners.status();
  DropRefused(*winners, /*log=*/true);
  auto cache = std::make_shared<WinnerCache>();
  cache->index = std::make_shared<const WinnerIndex>(*std::move(winners));
  absl::StatusOr<Stmt> models = Stmt::Prepare(
      writer_,
      "SELECT name, cc_major, cc_minor, sm_count, total_memory_bytes FROM device_models "
      "ORDER BY name");
  if (!models.ok()) return models.status();
  while (true) {
    absl::StatusOr<bool> row = models->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    cache->models.push_back({models->Text(0), static_cast<int>(models->Int(1)),
                             static_cast<int>(models->Int(2)), static_cast<int>(models->Int(3)),
                             models->Int(4)});
  }
  uint64_t generation = 0;  // of the models trained here (0: the previous snapshot's)
  if (retrain || !cache_) {
    absl::StatusOr<TrainingSet> set = GatherTrainingLocked(*cache->index);
    if (!set.ok()) return set.status();
    generation = ++training_generation_;
    TrainModels(*std::move(set), cache->models, *cache);
    models_behind_ = false;
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (generation > 0) {
    published_generation_ = generation;
  } else {
    // The models of the snapshot this one replaces, read under the same lock as the swap: a
    // RetrainModels may have published since the winners were read above.
    cache->predictors = cache_->predictors;
    cache->deferrals = cache_->deferrals;
    cache->comparisons = cache_->comparisons;
  }
  cache_ = std::move(cache);
  return absl::OkStatus();
}

absl::StatusOr<Store::TrainingSet> Store::GatherTrainingLocked(const WinnerIndex& index) {
  // Tuned shapes: the accepted winners, by (device model, family, dtype), of the one kernel
  // source each key trains on (TrainingSource).
  TrainingSet set;
  auto& tuned = set.tuned;
  auto& observed = set.observed;
  std::map<ModelKey, std::vector<const Winner*>> by_key;
  for (const Winner& w : index.winners()) {
    by_key[ModelKey{w.device.name, w.family, w.dtype}].push_back(&w);
  }
  for (const auto& [key, winners] : by_key) {
    const std::string current =
        options_.current_source ? options_.current_source(key.family) : std::string();
    const std::string& source = set.sources[key] =
        TrainingSource(winners, current, predict::Model::kMinPredictedShapes);
    for (const Winner* w : winners) {
      if (w->provenance.source_hash != source) continue;
      tuned[key].push_back({w->shape, w->measurement.params, w->measurement.timing.median_us,
                            w->measurement.resources});
    }
  }
  // Observations of that source: ok rows of finished sweeps and imported matrix cells (and
  // cells whose table named no source), with their ptxas reports (a near-winner member's
  // occupancy; a cell has its member's where its table carried one).
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      writer_,
      "SELECT m.name, k.family, s.dtype, s.shape, r.params, r.median_us, r.registers, "
      "r.static_shared_bytes, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes, "
      "r.constant_bytes, k.source_hash FROM rows r "
      "JOIN sweeps s ON r.sweep_id = s.id JOIN kernels k ON s.kernel_id = k.id "
      "JOIN device_models m ON s.device_model_id = m.id "
      "WHERE r.outcome = 'ok' AND r.median_us > 0 AND s.status != 'running' "
      "UNION ALL SELECT m.name, c.family, c.dtype, c.shape, c.params, c.time_us, c.registers, "
      "c.static_shared_bytes, c.stack_bytes, c.spill_store_bytes, c.spill_load_bytes, "
      "c.constant_bytes, c.source_hash FROM matrix_cells c "
      "JOIN device_models m ON c.device_model_id = m.id");
  if (!stmt.ok()) return stmt.status();
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<DType> dtype = ParseDType(stmt->Text(2));
    absl::StatusOr<Shape> shape = ParseShape(stmt->Text(3));
    absl::StatusOr<Params> params = ParseParams(stmt->Text(4));
    if (!dtype.ok() || !shape.ok() || !params.ok()) continue;  // not a tuned shape's member
    ModelKey key{stmt->Text(0), stmt->Text(1), *dtype};
    if (!tuned.count(key)) continue;
    const std::string source = stmt->Text(12);
    if (!source.empty() && source != set.sources[key]) continue;  // another kernel's time
    const ResourceUsage resources{static_cast<int>(stmt->Int(6)), static_cast<int>(stmt->Int(7)),
                                  static_cast<int>(stmt->Int(8)), static_cast<int>(stmt->Int(9)),
                                  static_cast<int>(stmt->Int(10)), static_cast<int>(stmt->Int(11))};
    observed[key].push_back({*std::move(shape), *std::move(params), stmt->Double(5), resources});
  }
  return set;
}

void Store::TrainModels(TrainingSet set, const std::vector<DeviceModel>& models,
                        WinnerCache& into) {
  auto& tuned = set.tuned;
  auto& observed = set.observed;
  ModelMap out;
  for (auto& [key, shapes] : tuned) {
    // Training sees the shapes in one order whatever the database's, so its choices repeat.
    std::sort(shapes.begin(), shapes.end(),
              [](const predict::TunedShape& a, const predict::TunedShape& b) {
                return std::tie(a.shape, a.winner) < std::tie(b.shape, b.winner);
              });
    DeviceModel device;
    for (const DeviceModel& m : models) {
      if (m.name == key.device_model) device = m;
    }
    predict::FitFn fit = options_.fit ? options_.fit(key.family, device) : nullptr;
    predict::Model model = predict::Model::Train(shapes, observed[key], std::move(fit));
    model.set_source_hash(set.sources[key]);
    out[key] = std::make_shared<const predict::Model>(std::move(model));
  }
  into.comparisons = CompareServingModels(out, tuned, observed, models);
  into.deferrals = ChooseDeferrals(into.comparisons);
  if (options_.on_deferral_change) {
    const std::shared_ptr<const WinnerCache> previous = Snapshot();
    for (const DeferralChange& change : DeferralChanges(
             previous ? previous->deferrals : Deferrals{}, into.deferrals, into.comparisons)) {
      options_.on_deferral_change(change);
    }
  }
  into.predictors = std::move(out);
}

std::shared_ptr<const predict::Model> Store::PredictionModel(std::string_view device_model,
                                                             std::string_view family,
                                                             DType dtype) const {
  std::shared_ptr<const WinnerCache> cache = Snapshot();
  auto found = cache->predictors.find(
      ModelKey{std::string(device_model), std::string(family), dtype});
  return found == cache->predictors.end() ? nullptr : found->second;
}

ModelMap Store::PredictionModels() const { return Snapshot()->predictors; }

std::vector<ModelComparison> Store::ModelComparisons() const {
  return Snapshot()->comparisons;
}

std::string Store::GivesWayTo(std::string_view device_model, std::string_view family,
                              DType dtype) const {
  std::shared_ptr<const WinnerCache> cache = Snapshot();
  auto found =
      cache->deferrals.find(ModelKey{std::string(device_model), std::string(family), dtype});
  return found == cache->deferrals.end() ? "" : found->second;
}

std::shared_ptr<const Store::WinnerCache> Store::Snapshot() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return cache_;
}

absl::Status Store::UpsertDevice(const DeviceDescription& device, int driver_version) {
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, ModelOf(device), /*update=*/true);
  if (!model_id.ok()) return model_id.status();
  if (!device.uuid.empty()) {
    absl::StatusOr<Stmt> stmt = Stmt::Prepare(
        writer_,
        "INSERT INTO gpus (uuid, device_model_id, driver_version, first_seen_ms, last_seen_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (uuid) DO UPDATE SET device_model_id = ?2, "
        "driver_version = ?3, last_seen_ms = ?4");
    if (!stmt.ok()) return stmt.status();
    stmt->Bind(1, device.uuid).Bind(2, *model_id).Bind(3, driver_version).Bind(4, NowMs());
    if (absl::Status s = stmt->Run(); !s.ok()) return s;
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return RefreshCacheLocked();  // the model list lookups resolve against
}

absl::StatusOr<StartedSweep> Store::StartOrResumeSweep(const SweepKey& key,
                                                       const Provenance& provenance,
                                                       std::string_view request_json) {
  if (absl::Status s = ValidateProblem(key.family, key.shape); !s.ok()) return s;
  if (provenance.source_hash.empty()) return absl::InvalidArgumentError("empty source hash");
  if (absl::Status s = UpsertDevice(key.device, provenance.driver_version); !s.ok()) return s;

  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, ModelOf(key.device), false);
  if (!model_id.ok()) return model_id.status();
  absl::StatusOr<int64_t> kernel_id = KernelId(writer_, key.family, provenance);
  if (!kernel_id.ok()) return kernel_id.status();
  absl::StatusOr<int64_t> prov_id = ProvenanceId(writer_, provenance);
  if (!prov_id.ok()) return prov_id.status();

  absl::StatusOr<Stmt> running = Stmt::Prepare(
      writer_,
      "SELECT s.id, s.kernel_id, s.provenance_id, s.timing FROM sweeps s JOIN kernels k ON k.id = "
      "s.kernel_id WHERE s.device_model_id = ?1 AND k.family = ?2 AND s.shape = ?3 AND "
      "s.dtype = ?4 AND s.status = 'running' "
      // Another card of the same model may be tuning the same key right now: its sweep is its
      // own. Sweeps recorded without a card (schema v1) can be resumed by any.
      "AND (?5 = '' OR s.gpu_uuid IS NULL OR s.gpu_uuid = '' OR s.gpu_uuid = ?5) "
      "ORDER BY s.id DESC");
  if (!running.ok()) return running.status();
  running->Bind(1, *model_id)
      .Bind(2, key.family)
      .Bind(3, FormatShape(key.shape))
      .Bind(4, DTypeName(key.dtype))
      .Bind(5, key.device.uuid);
  std::optional<int64_t> resume;
  std::vector<int64_t> superseded;
  while (true) {
    absl::StatusOr<bool> row = running->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (!resume && running->Int(1) == *kernel_id && running->Int(2) == *prov_id &&
        running->Text(3) == provenance.timing) {
      resume = running->Int(0);
    } else {
      superseded.push_back(running->Int(0));
    }
  }
  for (int64_t id : superseded) {
    // Rows measured under another driver, compiler, kernel source or timing method must not be
    // mixed into this sweep; the old sweep is closed as failed and its rows stay for inspection.
    absl::StatusOr<Stmt> close = Stmt::Prepare(
        writer_, "UPDATE sweeps SET status = 'failed', finished_at_ms = ?2 WHERE id = ?1");
    if (!close.ok()) return close.status();
    close->Bind(1, id).Bind(2, NowMs());
    if (absl::Status s = close->Run(); !s.ok()) return s;
  }
  StartedSweep started;
  if (resume) {
    started = {*resume, true};
  } else {
    absl::StatusOr<Stmt> ins = Stmt::Prepare(
        writer_,
        "INSERT INTO sweeps (device_model_id, kernel_id, provenance_id, shape, dtype, "
        "request_json, status, started_at_ms, gpu_uuid, timing) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
        "'running', ?7, ?8, ?9)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, *model_id)
        .Bind(2, *kernel_id)
        .Bind(3, *prov_id)
        .Bind(4, FormatShape(key.shape))
        .Bind(5, DTypeName(key.dtype))
        .Bind(6, request_json)
        .Bind(7, NowMs())
        .Bind(8, key.device.uuid)
        .Bind(9, provenance.timing);
    if (absl::Status s = ins->Run(); !s.ok()) return s;
    started = {sqlite3_last_insert_rowid(writer_.get()), false};
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return started;
}

absl::StatusOr<std::optional<SweepInfo>> Store::LatestSweepOfRequest(
    const SweepKey& key, const Provenance& provenance, std::string_view request_json) {
  if (absl::Status s = ValidateProblem(key.family, key.shape); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<std::vector<SweepInfo>> sweeps =
      QuerySweeps(reader_, "WHERE s.request_json = ?1 ORDER BY s.id DESC", request_json);
  if (!sweeps.ok()) return sweeps.status();
  for (SweepInfo& info : *sweeps) {
    const Provenance& p = info.provenance;
    if (info.device_model == key.device.name &&
        (info.gpu_uuid.empty() || key.device.uuid.empty() || info.gpu_uuid == key.device.uuid) &&
        info.family == key.family && info.shape == key.shape && info.dtype == key.dtype &&
        p.driver_version == provenance.driver_version &&
        p.nvrtc_version == provenance.nvrtc_version && p.source_hash == provenance.source_hash &&
        p.space_version == provenance.space_version && p.timing == provenance.timing) {
      return std::move(info);
    }
  }
  return std::nullopt;
}

absl::Status Store::ReopenSweep(int64_t sweep_id) {
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<SweepInfo> sweep = QuerySweep(writer_, sweep_id);
  if (!sweep.ok()) return sweep.status();
  const SweepStatus status = sweep->status;
  if (status != SweepStatus::kCancelled && status != SweepStatus::kFailed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sweep ", sweep_id, " is ", ToAbsl(SweepStatusName(status)), "; only a cancelled or "
        "failed sweep can be reopened"));
  }
  absl::StatusOr<Stmt> update = Stmt::Prepare(
      writer_, "UPDATE sweeps SET status = 'running', finished_at_ms = NULL WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, sweep_id);
  if (absl::Status s = update->Run(); !s.ok()) return s;
  return txn->Commit();
}

absl::StatusOr<std::set<std::string>> Store::FinishedCandidates(int64_t sweep_id) {
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<ReadSnapshot> snap = ReadSnapshot::Begin(reader_);
  if (!snap.ok()) return snap.status();
  absl::StatusOr<Stmt> exists = Stmt::Prepare(reader_, "SELECT id FROM sweeps WHERE id = ?1");
  if (!exists.ok()) return exists.status();
  exists->Bind(1, sweep_id);
  if (absl::StatusOr<int64_t> id = SelectId(*exists, absl::StrCat("no sweep ", sweep_id));
      !id.ok()) {
    return id.status();
  }
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(reader_, "SELECT params FROM rows WHERE sweep_id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, sweep_id);
  std::set<std::string> out;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.insert(stmt->Text(0));
  }
  return out;
}

absl::Status Store::RecordMeasurement(int64_t sweep_id, const Measurement& measurement) {
  return RecordMeasurements(sweep_id, {measurement});
}

absl::Status Store::RecordMeasurements(int64_t sweep_id,
                                       const std::vector<Measurement>& measurements) {
  for (const Measurement& measurement : measurements) {
    if (absl::Status s = ValidateMeasurement(measurement); !s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<Stmt> status = Stmt::Prepare(writer_, "SELECT status FROM sweeps WHERE id = ?1");
  if (!status.ok()) return status.status();
  status->Bind(1, sweep_id);
  absl::StatusOr<bool> found = status->Step();
  if (!found.ok()) return found.status();
  if (!*found) return absl::NotFoundError(absl::StrCat("no sweep ", sweep_id));
  if (status->Text(0) != "running") {
    return absl::FailedPreconditionError(absl::StrCat("sweep ", sweep_id, " is ", status->Text(0),
                                                      "; rows can only be added to a "
                                                      "running sweep"));
  }
  status->Reset();
  absl::StatusOr<Stmt> ins = Stmt::Prepare(
      writer_, absl::StrCat("INSERT INTO rows (sweep_id, measured_at_ms, ", kMeasurementCols,
                            ") VALUES (?1, ?2, ", Placeholders(3, kMeasurementColCount), ")"));
  if (!ins.ok()) return ins.status();
  for (const Measurement& measurement : measurements) {
    ins->Reset();
    ins->Bind(1, sweep_id).Bind(2, NowMs());
    BindMeasurement(*ins, 3, measurement);
    if (absl::Status s = ins->Run(); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::AlreadyExistsError(absl::StrCat("candidate '",
                                                     FormatParams(measurement.params),
                                                     "' is already recorded in sweep ", sweep_id));
      }
      return s;
    }
  }
  return txn->Commit();
}

absl::Status Store::UpdateTiming(int64_t sweep_id, const Measurement& m) {
  if (m.outcome != Outcome::kOk || m.timing.samples <= 0 || m.timing.median_us <= 0) {
    return absl::InvalidArgumentError("only an ok row with samples and a median can be updated");
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Stmt> update = Stmt::Prepare(
      writer_,
      "UPDATE rows SET samples = ?3, median_us = ?4, min_us = ?5, rel_spread = ?6, gbps = ?7, "
      "tflops = ?8, percent_of_reference = ?9 WHERE sweep_id = ?1 AND params = ?2 AND "
      "outcome = 'ok' AND sweep_id IN (SELECT id FROM sweeps WHERE status = 'running')");
  if (!update.ok()) return update.status();
  update->Bind(1, sweep_id)
      .Bind(2, FormatParams(m.params))
      .Bind(3, static_cast<int64_t>(m.timing.samples))
      .Bind(4, m.timing.median_us)
      .Bind(5, m.timing.min_us)
      .Bind(6, m.timing.rel_spread)
      .Bind(7, m.gbps)
      .Bind(8, m.tflops)
      .Bind(9, m.percent_of_reference);
  if (absl::Status s = update->Run(); !s.ok()) return s;
  if (sqlite3_changes(writer_.get()) == 0) {
    return absl::NotFoundError(absl::StrCat("no ok row '", FormatParams(m.params),
                                            "' in running sweep ", sweep_id));
  }
  return absl::OkStatus();
}

absl::Status Store::Checkpoint() {
  std::lock_guard<std::mutex> lock(write_mu_);
  return writer_.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

absl::StatusOr<FinishResult> Store::FinishSweep(int64_t sweep_id, SweepStatus status,
                                                const Reference& reference,
                                                const FinishChoice& choice, Retrain retrain) {
  if (status == SweepStatus::kRunning) {
    return absl::InvalidArgumentError("a sweep cannot finish as 'running'");
  }
  if (!choice.winner && !choice.ties.empty()) {
    return absl::InvalidArgumentError("a sweep's ties need the winner they are tied with");
  }
  std::vector<Params> ties = choice.ties;
  for (const Params& tie : ties) {
    if (tie.empty()) return absl::InvalidArgumentError("a tie without parameters");
    if (tie == *choice.winner) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chosen winner '", FormatParams(tie), "' is listed among its own ties"));
    }
  }
  std::sort(ties.begin(), ties.end(), CanonicalBefore);
  ties.erase(std::unique(ties.begin(), ties.end()), ties.end());
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<SweepInfo> sweep = QuerySweep(writer_, sweep_id);
  if (!sweep.ok()) return sweep.status();
  const SweepInfo& info = *sweep;
  if (info.status != SweepStatus::kRunning) {
    return absl::FailedPreconditionError(absl::StrCat("sweep ", sweep_id, " already finished as ",
                                                      ToAbsl(SweepStatusName(info.status))));
  }
  absl::StatusOr<Stmt> update =
      Stmt::Prepare(writer_,
                    "UPDATE sweeps SET status = ?2, finished_at_ms = ?3, reference_name = ?4, "
                    "reference_us = ?5 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->Bind(1, sweep_id)
      .Bind(2, SweepStatusName(status))
      .Bind(3, NowMs())
      .Bind(4, reference.name)
      .Bind(5, reference.time_us);
  if (absl::Status s = update->Run(); !s.ok()) return s;

  FinishResult result;
  absl::StatusOr<std::optional<StoredRow>> best =
      OkRow(writer_, sweep_id, choice.winner ? &*choice.winner : nullptr);
  if (!best.ok()) return best.status();
  if (choice.winner && !best->has_value()) {
    return absl::NotFoundError(absl::StrCat("the chosen winner '", FormatParams(*choice.winner),
                                            "' is not an ok row of sweep ", sweep_id));
  }
  for (const Params& tie : ties) {
    absl::StatusOr<std::optional<StoredRow>> row = OkRow(writer_, sweep_id, &tie);
    if (!row.ok()) return row.status();
    if (!row->has_value()) {
      return absl::NotFoundError(absl::StrCat("the tie '", FormatParams(tie),
                                              "' is not an ok row of sweep ", sweep_id));
    }
  }
  if (best->has_value()) {
    Measurement m = (*best)->measurement;
    result.best = m;
    const int64_t best_measured_at = (*best)->measured_at_ms;
    if (status == SweepStatus::kSucceeded) {
      Winner w;
      w.device.name = info.device_model;
      w.family = info.family;
      w.shape = info.shape;
      w.dtype = info.dtype;
      w.provenance = info.provenance;
      w.measurement = std::move(m);
      w.reference = reference;
      w.measured_at_ms = best_measured_at;
      w.sweep_id = sweep_id;
      w.ties = std::move(ties);
      absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, w.device, false);
      if (!model_id.ok()) return model_id.status();
      absl::StatusOr<int64_t> prov_id = ProvenanceId(writer_, info.provenance);
      if (!prov_id.ok()) return prov_id.status();
      absl::StatusOr<std::optional<ExistingWinner>> existing =
          FindWinner(writer_, *model_id, w.family, w.provenance.source_hash, w.shape, w.dtype);
      if (!existing.ok()) return existing.status();
      // A winner timed another way is replaced whatever its time: the two do not compare.
      bool replace = !existing->has_value() || (*existing)->provenance_id != *prov_id ||
                     (*existing)->space_version != w.provenance.space_version ||
                     (*existing)->timing != w.provenance.timing ||
                     Supersedes(w.measurement, (*existing)->measurement);
      if (replace) {
        if (absl::Status s = WriteWinner(writer_, *model_id, *prov_id, w); !s.ok()) return s;
        result.winner_changed = true;
      }
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  // A finished sweep's rows are new observations for the prediction models.
  if (result.winner_changed || status == SweepStatus::kSucceeded) {
    models_behind_ = true;  // until a training has read these rows (a failed refresh too)
    if (absl::Status s = RefreshCacheLocked(/*retrain=*/retrain == Retrain::kNow); !s.ok()) {
      return s;
    }
  }
  return result;
}

absl::Status Store::RetrainModels() {
  std::lock_guard<std::mutex> training(train_mu_);
  absl::StatusOr<TrainingSet> set;
  std::vector<DeviceModel> models;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (!models_behind_) return absl::OkStatus();
    const std::shared_ptr<const WinnerCache> now = Snapshot();
    set = GatherTrainingLocked(*now->index);
    if (!set.ok()) return set.status();
    models = now->models;
    models_behind_ = false;  // a sweep finishing from here on asks for another round
    generation = ++training_generation_;
  }
  // Seconds of training, without the write lock: sweeps go on recording meanwhile.
  WinnerCache trained;
  TrainModels(*std::move(set), models, trained);
  // Into the newest snapshot (a sweep may have finished since): its winners, these models. A
  // FinishSweep that copied the older models meanwhile has set models_behind_ again; models
  // trained since on newer data (an import) stay.
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (generation < published_generation_) return absl::OkStatus();
  published_generation_ = generation;
  auto cache = std::make_shared<WinnerCache>(*cache_);
  cache->predictors = std::move(trained.predictors);
  cache->comparisons = std::move(trained.comparisons);
  cache->deferrals = std::move(trained.deferrals);
  cache_ = std::move(cache);
  return absl::OkStatus();
}

absl::StatusOr<SweepInfo> Store::GetSweep(int64_t sweep_id) {
  std::lock_guard<std::mutex> lock(read_mu_);
  return QuerySweep(reader_, sweep_id);
}

absl::StatusOr<std::vector<SweepInfo>> Store::ListSweeps() {
  std::lock_guard<std::mutex> lock(read_mu_);
  return QuerySweeps(reader_, "ORDER BY s.id DESC", "");
}

absl::StatusOr<std::vector<StoredRow>> Store::ListRows(const RowQuery& query) {
  if (absl::Status s = ValidateProblem(query.family, query.shape); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      reader_,
      absl::StrCat("SELECT r.sweep_id, r.measured_at_ms, r.rowid, ", PrefixedMeasurementCols("r."),
                   " FROM rows r JOIN sweeps s ON s.id = r.sweep_id "
                   "JOIN device_models m ON m.id = s.device_model_id "
                   "JOIN kernels k ON k.id = s.kernel_id "
                   "WHERE m.name = ?1 AND k.family = ?2 AND s.shape = ?3 AND s.dtype = ?4 "
                   "AND (?5 = '' OR k.source_hash = ?5) AND (?6 OR s.status <> 'running') "
                   "AND (?8 = 0 OR r.sweep_id = ?8) "
                   "ORDER BY r.outcome <> 'ok', CASE WHEN r.outcome = 'ok' THEN r.median_us END, "
                   "r.outcome, r.params, r.sweep_id LIMIT ?7"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, query.device_model)
      .Bind(2, query.family)
      .Bind(3, FormatShape(query.shape))
      .Bind(4, DTypeName(query.dtype))
      .Bind(5, query.source_hash)
      .Bind(6, int64_t{query.include_unfinished ? 1 : 0})
      .Bind(7, int64_t{query.limit > 0 ? query.limit : -1})
      .Bind(8, query.sweep_id);
  std::vector<StoredRow> out;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 3);
    if (!m.ok()) return m.status();
    out.push_back({stmt->Int(0), *std::move(m), stmt->Int(1), stmt->Int(2)});
  }
  return out;
}

absl::StatusOr<std::vector<DeviceModel>> Store::ListDeviceModels() {
  // From the in-memory snapshot: resolving a device model is on every lookup's path.
  return Snapshot()->models;
}

absl::StatusOr<std::vector<Winner>> Store::ListWinners(std::string_view device_model) {
  absl::StatusOr<std::vector<Winner>> winners;
  {
    std::lock_guard<std::mutex> lock(read_mu_);
    winners = QueryWinners(reader_, device_model);
  }
  if (winners.ok()) DropRefused(*winners, /*log=*/false);  // the cache has said so already
  return winners;
}

absl::StatusOr<std::vector<SweepWithRows>> Store::ListFinishedSweeps(
    std::string_view device_model) {
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<ReadSnapshot> snap = ReadSnapshot::Begin(reader_);
  if (!snap.ok()) return snap.status();
  absl::StatusOr<std::vector<SweepInfo>> sweeps =
      QuerySweeps(reader_, "WHERE s.status <> 'running' AND (?1 = '' OR m.name = ?1) ORDER BY s.id",
                  device_model);
  if (!sweeps.ok()) return sweeps.status();
  std::vector<SweepWithRows> out;
  for (SweepInfo& info : *sweeps) {
    absl::StatusOr<std::vector<StoredRow>> rows = QuerySweepRows(reader_, info.id);
    if (!rows.ok()) return rows.status();
    const EntryValidator& validator = options_.validator;
    if (validator.problem && !validator.problem(info.family, info.shape).ok()) continue;
    if (validator.params) {
      std::erase_if(*rows, [&](const StoredRow& row) {
        return !validator.params(info.family, row.measurement.params).ok();
      });
    }
    out.push_back({std::move(info), *std::move(rows)});
  }
  return out;
}

LookupResult Store::Lookup(const LookupQuery& query) const {
  std::shared_ptr<const WinnerCache> cache = Snapshot();
  return Ladder(query, {*cache->index, &cache->predictors, &cache->deferrals});
}

}  // namespace cutune::store
