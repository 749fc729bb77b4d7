// The persistent store: devices, sweeps, every candidate's measurement row, and the winner per
// (device model, family, source hash, shape, dtype). Backed by SQLite in WAL mode with
// synchronous=FULL; one writer connection and one reader connection, each behind its own mutex.
// Lookups are answered from an in-memory copy of the winners table, rebuilt after every write
// that changes winners, so the hot path never touches SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/ladder.h"
#include "server/store/sqlite.h"
#include "server/store/winner.h"

namespace cutune::store {

enum class SweepStatus { kRunning, kSucceeded, kFailed, kCancelled };
std::string_view SweepStatusName(SweepStatus status);  // "running", "succeeded", ...
absl::StatusOr<SweepStatus> ParseSweepStatus(std::string_view name);

// What a sweep tunes. The kernel's source hash and space version travel in Provenance.
struct SweepKey {
  DeviceDescription device;
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
};

struct SweepInfo {
  int64_t id = 0;
  std::string device_model;
  std::string gpu_uuid;
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
  Provenance provenance;
  SweepStatus status = SweepStatus::kRunning;
  int64_t started_at_ms = 0;
  std::optional<int64_t> finished_at_ms;
  std::string request_json;
  Reference reference;
  int64_t rows = 0;
};

struct StoredRow {
  int64_t sweep_id = 0;
  Measurement measurement;
  int64_t measured_at_ms = 0;
  // The row's place in the store (SQLite rowid): rows are written as candidates finish, so it
  // orders a sweep's rows as they were measured (ListRows only; 0 elsewhere).
  int64_t sequence = 0;
};

struct SweepWithRows {
  SweepInfo info;
  std::vector<StoredRow> rows;  // ordered by FormatParams
};

struct StartedSweep {
  int64_t sweep_id = 0;
  bool resumed = false;
};

// What a sweep names as its answer (server/core/ties.h): the canonical pick among the finalists
// tied with the fastest, and the configurations tied with it (itself excluded). Empty: the
// sweep's fastest ok row, with no ties.
struct FinishChoice {
  std::optional<Params> winner;
  std::vector<Params> ties;
};

struct FinishResult {
  bool winner_changed = false;
  // The sweep's candidate winner: the chosen row, or without a choice the fastest ok row.
  std::optional<Measurement> best;
};

struct RowQuery {
  std::string device_model;
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
  std::string source_hash;          // empty: any
  bool include_unfinished = false;  // rows of running sweeps are hidden unless asked for
  int limit = 0;                    // 0: all
  int64_t sweep_id = 0;             // 0: rows of every sweep of the key; else only that sweep's
};

enum class MergePolicy { kKeepFaster, kKeepNewer, kFailOnConflict };

// An Nsight Compute profile of one stored row (profiles.cc): its counters as ncu read them.
struct ProfileMetric {
  std::string name;
  double value = 0;
  std::string unit;
};
struct StoredProfile {
  std::string ncu_version;
  int64_t profiled_at_ms = 0;
  std::vector<ProfileMetric> metrics;  // by name
};

// The kernel families' rules, which the store does not link: whether a family accepts a problem
// (family, shape), and whether a configuration is in the family's space. Each answers OK or
// INVALID_ARGUMENT saying why; the daemon passes {kernels::ValidateProblem,
// kernels::ValidateParams}. Parameters outside the space can crash whoever computes a launch from
// them (a zero divisor), so a stored winner refused here is never served. Empty: no checks.
struct EntryValidator {
  std::function<absl::Status(std::string_view family, const Shape& shape)> problem;
  // Asked only about a problem `problem` accepted.
  std::function<absl::Status(std::string_view family, const Params& params)> params;
  // The family's one spelling of a configuration (parameters added since it was recorded filled
  // in; the daemon passes kernels::CanonicalParams), applied before `params` to what a table
  // brings in. Empty: configurations are kept as written.
  std::function<Params(std::string_view family, Params params)> canonical;

  explicit operator bool() const { return problem != nullptr || params != nullptr; }
  // Both: OK, or the first refusal.
  absl::Status operator()(std::string_view family, const Shape& shape,
                          const Params& configuration) const;
  Params Canonical(std::string_view family, Params configuration) const {
    return canonical ? canonical(family, std::move(configuration)) : configuration;
  }
};

// How configurations of a family launch on a device model (its SM count and compute capability;
// 0s when unknown): the prediction models' fit hook for that family and device, made once per
// model (the daemon passes the families' launch efficiency and cost terms: service::StoreRules).
// Empty, or returning nullptr: efficiency 1 everywhere and no cost terms.
using FitFn =
    std::function<predict::FitFn(std::string_view family, const DeviceModel& device)>;

struct StoreOptions {
  // Empty: every stored winner and row is trusted.
  EntryValidator validator = {};
  // false: no fsync (synchronous = OFF), for a store thrown away with its process (an offline
  // table's); a crash may then lose or corrupt it.
  bool durable = true;
  FitFn fit = {};
  // The kernel source this build compiles for a family (its SHA-256; empty: not known), which
  // the family's prediction models train on where it has the shapes for one (TrainingSource).
  // Empty: every model trains on the source most of its winners have.
  std::function<std::string(std::string_view family)> current_source = {};
  // Called by the training that finds it (under the store's write lock, or in RetrainModels:
  // possibly beside an import's) for each change of which prediction model answers a device
  // model's untuned shapes (ChooseDeferrals); cutuned logs it. Empty: nobody is told.
  std::function<void(const DeferralChange&)> on_deferral_change = {};
};

// One cell of a portfolio matrix imported from a table: a member's time at a tuned shape.
struct MatrixCell {
  std::string device_model;
  std::string family;
  DType dtype = DType::kF32;
  Shape shape;
  Params params;
  double time_us = 0;
  // The member's ptxas report where the table carries one (version 4), zeros otherwise.
  ResourceUsage resources = {};
  // The kernel source it was measured with (the portfolio's "source_hash", version 6; else the
  // source of the table's winners of the family on that device where they share one; '': not
  // known).
  std::string source_hash;
};

struct ImportBatch {
  std::vector<DeviceModel> devices;
  std::vector<Winner> winners;
  std::vector<std::string> winner_origins;  // where each winner came from, for error messages
  std::vector<SweepWithRows> sweeps;        // finished sweeps with their rows
  std::vector<std::string> sweep_origins;
  std::vector<MatrixCell> cells;  // portfolio matrices (per source, the fastest time is kept)
};

struct ImportStats {
  int winners_added = 0;
  int winners_replaced = 0;
  int winners_kept = 0;
  int sweeps_added = 0;
  int sweeps_skipped = 0;  // already present (same key and start time)
  int rows_added = 0;
};

class Store {
 public:
  static constexpr std::string_view kDefaultPath = "./cutune.db";

  // Creates or migrates the database at `path`. Winners, sweeps and rows the validator refuses
  // (stored by an older cutune) stay in the file but are skipped by Lookup, ListWinners and
  // ListFinishedSweeps; each skipped winner is reported once on stderr.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                                     const StoreOptions& options = {});

  // Records the device model (name, compute capability, SMs, memory) and the individual GPU.
  absl::Status UpsertDevice(const DeviceDescription& device, int driver_version);

  // Resumes the running sweep with the same key and provenance, if any; a running sweep of the
  // key under another provenance is marked failed (its rows are kept) and a new one started.
  absl::StatusOr<StartedSweep> StartOrResumeSweep(const SweepKey& key, const Provenance& provenance,
                                                  std::string_view request_json);
  // The newest sweep of `key` (this card, or one recorded without a card) under `provenance`
  // that `request_json` started, whatever its status; nullopt when there is none. What a
  // request asking to resume continues from.
  absl::StatusOr<std::optional<SweepInfo>> LatestSweepOfRequest(const SweepKey& key,
                                                                const Provenance& provenance,
                                                                std::string_view request_json);
  // Puts a cancelled or failed sweep back to running (its rows kept), so that the next
  // StartOrResumeSweep of its key resumes it. FAILED_PRECONDITION for a running or succeeded
  // sweep, NOT_FOUND for an unknown one.
  absl::Status ReopenSweep(int64_t sweep_id);
  // FormatParams of every candidate already recorded in the sweep.
  absl::StatusOr<std::set<std::string>> FinishedCandidates(int64_t sweep_id);
  // One atomic row. ALREADY_EXISTS if the candidate is recorded; FAILED_PRECONDITION if the
  // sweep is finished; NOT_FOUND for an unknown sweep.
  absl::Status RecordMeasurement(int64_t sweep_id, const Measurement& measurement);
  // Several rows in one transaction (each still all-or-nothing): a sweep flushes its rows in
  // batches, since every commit with synchronous=FULL costs a disk flush.
  absl::Status RecordMeasurements(int64_t sweep_id, const std::vector<Measurement>& measurements);
  // Replaces an ok row's timing and derived figures in a running sweep: finalists are re-measured
  // after their rows were recorded. NOT_FOUND when the row is not there.
  absl::Status UpdateTiming(int64_t sweep_id, const Measurement& measurement);
  // Moves the WAL into the database file (PRAGMA wal_checkpoint(TRUNCATE)); on shutdown.
  absl::Status Checkpoint();
  // In one transaction: marks the sweep finished and, for a succeeded sweep, makes its
  // candidate winner (the chosen ok row, else the fastest ok row) the key's winner, with the
  // chosen ties: when there is none; when the stored winner was measured under another driver,
  // NVRTC or space version; otherwise when Supersedes (winner_rule.h) says so — faster and not
  // Tied, or Tied and PreferredAmongTied. A chosen winner or tie that is not an ok row of
  // the sweep is NOT_FOUND, a tie equal to the winner or without parameters, or ties without a
  // winner, INVALID_ARGUMENT; either leaves the sweep running and the store unchanged.
  // A finished sweep's rows and winner are new observations for the prediction models:
  // FinishSweep trains them again at once (kNow), or leaves that to RetrainModels (kLater), so
  // that a daemon can tell the sweep's client first (training every model it holds takes seconds:
  // unseen-shapes.md, section 25). Lookups meanwhile answer from the models trained before.
  enum class Retrain { kNow, kLater };
  absl::StatusOr<FinishResult> FinishSweep(int64_t sweep_id, SweepStatus status,
                                           const Reference& reference,
                                           const FinishChoice& choice = {},
                                           Retrain retrain = Retrain::kNow);
  // Trains the prediction models again if a FinishSweep left that for later, else returns at
  // once; one call at a time (a second waits for the first, then finds nothing left). Holds the
  // write lock only to read what it trains on. ExportTable calls it first, so a table always
  // carries every finished sweep.
  absl::Status RetrainModels();

  absl::StatusOr<SweepInfo> GetSweep(int64_t sweep_id);
  absl::StatusOr<std::vector<SweepInfo>> ListSweeps();  // newest first
  // ok rows fastest first, then the others by outcome and parameters.
  absl::StatusOr<std::vector<StoredRow>> ListRows(const RowQuery& query);

  // Stores `profile` with the row of `params` in sweep `sweep_id`, replacing the row's earlier
  // profile by the same ncu version (profiled_at_ms 0: now). NOT_FOUND when there is no such row,
  // INVALID_ARGUMENT for a profile without metrics or ncu version.
  absl::Status RecordProfile(int64_t sweep_id, const Params& params, StoredProfile profile);
  // The newest profile of each row (by StoredRow::sequence) that has one.
  absl::StatusOr<std::map<int64_t, StoredProfile>> ProfilesOfRows(
      const std::vector<int64_t>& row_ids);

  absl::StatusOr<std::vector<DeviceModel>> ListDeviceModels();
  // Winners, optionally of one device model (empty: all), unordered; none the validator refuses.
  absl::StatusOr<std::vector<Winner>> ListWinners(std::string_view device_model);
  // Finished sweeps with their rows, optionally of one device model; sweeps and rows the
  // validator refuses are left out.
  absl::StatusOr<std::vector<SweepWithRows>> ListFinishedSweeps(std::string_view device_model);

  // The fallback ladder (ladder.h); never fails: with nothing tuned the answer is the family
  // default. Served from memory (a snapshot of the winners table taken after this Store's own
  // writes); writes by another process show up on the next reopen.
  LookupResult Lookup(const LookupQuery& query) const;

  // The prediction model of a device model's family (portfolio, matrix, leave-one-shape-out
  // evaluation), trained on its winners, the ok rows of its finished sweeps and its imported
  // matrix cells; retrained after every finished sweep and import. Null when nothing is tuned.
  std::shared_ptr<const predict::Model> PredictionModel(std::string_view device_model,
                                                        std::string_view family,
                                                        DType dtype) const;
  // Every model, for export.
  ModelMap PredictionModels() const;
  // The model of the same compute capability that a device model's own prediction model gives
  // way to for the family (ChooseDeferrals, decided at each training); empty: none.
  std::string GivesWayTo(std::string_view device_model, std::string_view family,
                         DType dtype) const;
  // The comparisons that choice was made from (CompareServingModels), for export: a table
  // carries the measurements they rest on.
  std::vector<ModelComparison> ModelComparisons() const;

  // Applies a validated table in one transaction: any error leaves the store unchanged.
  // FAIL_ON_CONFLICT reports a differing winner for an existing key as ALREADY_EXISTS.
  absl::StatusOr<ImportStats> ApplyImport(const ImportBatch& batch, MergePolicy policy);

  ~Store();

 private:
  struct WinnerCache;
  Store(Db writer, Db reader, StoreOptions options);
  // Requires write_mu_. With `retrain`, the prediction models are trained again (from the
  // database); else the previous snapshot's are kept.
  absl::Status RefreshCacheLocked(bool retrain = false);
  // What the prediction models train on: each (device model, family, dtype)'s tuned shapes (the
  // index's winners) and observations (ok rows of finished sweeps, imported matrix cells).
  // Each key's winners, rows and cells are one kernel source's (TrainingSource).
  struct TrainingSet {
    std::map<ModelKey, std::vector<predict::TunedShape>> tuned;
    std::map<ModelKey, std::vector<predict::Observation>> observed;
    std::map<ModelKey, std::string> sources;
  };
  // Requires write_mu_ (reads the database).
  absl::StatusOr<TrainingSet> GatherTrainingLocked(const WinnerIndex& index);
  // Trains the models into `into` (predictors); also compares the own models with their
  // architecture's (CompareServingModels), chooses which give way (ChooseDeferrals) and reports
  // where that changed (on_deferral_change). Takes no lock.
  void TrainModels(TrainingSet set, const std::vector<DeviceModel>& models, WinnerCache& into);
  std::shared_ptr<const WinnerCache> Snapshot() const;
  // Drops the winners the validator refuses; with `log`, says so once per winner on stderr.
  void DropRefused(std::vector<Winner>& winners, bool log);

  const StoreOptions options_;
  std::mutex log_mu_;
  std::set<std::string> logged_;  // winners already reported as skipped
  std::mutex write_mu_;
  Db writer_;
  bool models_behind_ = false;        // a FinishSweep left the retraining for later (write_mu_)
  std::mutex train_mu_;               // one RetrainModels at a time
  uint64_t training_generation_ = 0;  // trainings begun, in the order of their data (write_mu_)
  std::mutex read_mu_;
  Db reader_;
  mutable std::mutex cache_mu_;  // guards only the pointer swap
  std::shared_ptr<const WinnerCache> cache_;
  uint64_t published_generation_ = 0;  // the training cache_'s models come from (cache_mu_)
};

// Milliseconds since the Unix epoch, the store's timestamp unit.
int64_t NowMs();

}  // namespace cutune::store
