// Schema DDL, versioned with PRAGMA user_version. A fresh database is created at version 1 and
// migrated forward like any old one, so the migration path runs on every new store.
#include "server/store/schema.h"

#include "absl/strings/str_cat.h"

namespace cutune::store {
namespace {

// Version 1: device models, provenance, kernels, sweeps, rows, winners.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE device_models (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  total_memory_bytes INTEGER NOT NULL
);
CREATE TABLE provenances (
  id INTEGER PRIMARY KEY,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  UNIQUE (driver_version, nvrtc_version)
);
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  space_version INTEGER NOT NULL,
  UNIQUE (family, source_hash, space_version)
);
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  device_model_id INTEGER NOT NULL REFERENCES device_models(id),
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  provenance_id INTEGER NOT NULL REFERENCES provenances(id),
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  request_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
  started_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  reference_name TEXT NOT NULL DEFAULT '',
  reference_us REAL NOT NULL DEFAULT 0,
  CHECK ((status = 'running') = (finished_at_ms IS NULL))
);
CREATE INDEX sweeps_by_key ON sweeps (device_model_id, kernel_id, shape, dtype, status);
CREATE TABLE rows (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  params TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'pruned', 'compile_failed', 'out_of_resources',
                                           'fault', 'timeout', 'wrong_answer')),
  detail TEXT NOT NULL,
  registers INTEGER NOT NULL,
  static_shared_bytes INTEGER NOT NULL,
  stack_bytes INTEGER NOT NULL,
  spill_store_bytes INTEGER NOT NULL,
  spill_load_bytes INTEGER NOT NULL,
  constant_bytes INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  median_us REAL NOT NULL,
  min_us REAL NOT NULL,
  rel_spread REAL NOT NULL,
  gbps REAL NOT NULL,
  tflops REAL NOT NULL,
  percent_of_reference REAL NOT NULL,
  compile_ms REAL NOT NULL,
  measured_at_ms INTEGER NOT NULL,
  UNIQUE (sweep_id, params),
  CHECK (outcome <> 'ok' OR (samples > 0 AND median_us > 0))
);
CREATE TABLE winners (
  device_model_id INTEGER NOT NULL REFERENCES device_models(id),
  family TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  space_version INTEGER NOT NULL,
  provenance_id INTEGER NOT NULL REFERENCES provenances(id),
  sweep_id INTEGER REFERENCES sweeps(id),
  params TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome = 'ok'),
  detail TEXT NOT NULL,
  registers INTEGER NOT NULL,
  static_shared_bytes INTEGER NOT NULL,
  stack_bytes INTEGER NOT NULL,
  spill_store_bytes INTEGER NOT NULL,
  spill_load_bytes INTEGER NOT NULL,
  constant_bytes INTEGER NOT NULL,
  samples INTEGER NOT NULL CHECK (samples > 0),
  median_us REAL NOT NULL CHECK (median_us > 0),
  min_us REAL NOT NULL,
  rel_spread REAL NOT NULL,
  gbps REAL NOT NULL,
  tflops REAL NOT NULL,
  percent_of_reference REAL NOT NULL,
  compile_ms REAL NOT NULL,
  measured_at_ms INTEGER NOT NULL,
  reference_name TEXT NOT NULL,
  reference_us REAL NOT NULL,
  PRIMARY KEY (device_model_id, family, source_hash, shape, dtype)
);
)sql";

// Version 2: the individual GPUs seen (by UUID) and which one ran each sweep; an index for
// listing a sweep's rows fastest first.
constexpr std::string_view kV1ToV2 = R"sql(
CREATE TABLE gpus (
  uuid TEXT PRIMARY KEY,
  device_model_id INTEGER NOT NULL REFERENCES device_models(id),
  driver_version INTEGER NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL
);
ALTER TABLE sweeps ADD COLUMN gpu_uuid TEXT NOT NULL DEFAULT '';
CREATE INDEX rows_by_time ON rows (sweep_id, outcome, median_us);
)sql";

// Version 3: the configurations tied with each winner when it was measured, as FormatParams
// texts joined by ';' (empty: none, or a winner stored before version 3).
constexpr std::string_view kV2ToV3 = R"sql(
ALTER TABLE winners ADD COLUMN ties TEXT NOT NULL DEFAULT '';
)sql";

// Version 4: portfolio matrix cells imported from tables (a member's time at a tuned shape,
// without the sweep it came from); measured rows stay in `rows`.
constexpr std::string_view kV3ToV4 = R"sql(
CREATE TABLE matrix_cells (
  device_model_id INTEGER NOT NULL REFERENCES device_models(id),
  family TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT NOT NULL,
  params TEXT NOT NULL,
  time_us REAL NOT NULL CHECK (time_us > 0),
  PRIMARY KEY (device_model_id, family, dtype, shape, params)
);
)sql";

// Version 5: Nsight Compute profiles of measured rows (ProfileCandidate): one line per counter,
// keyed by the row and the ncu version that read it (a later profile by the same version
// replaces it; another version's stays beside it).
constexpr std::string_view kV4ToV5 = R"sql(
CREATE TABLE profiles (
  row_id INTEGER NOT NULL REFERENCES rows(id),
  ncu_version TEXT NOT NULL,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL,
  value REAL NOT NULL,
  profiled_at_ms INTEGER NOT NULL,
  PRIMARY KEY (row_id, ncu_version, metric)
);
)sql";

// Version 6: a matrix cell's ptxas report, its member's from a version-4 table (zeros: not known),
// so that a portfolio member that won no tuned shape keeps its occupancy on a table server.
constexpr std::string_view kV5ToV6 = R"sql(
ALTER TABLE matrix_cells ADD COLUMN registers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matrix_cells ADD COLUMN static_shared_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matrix_cells ADD COLUMN stack_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matrix_cells ADD COLUMN spill_store_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matrix_cells ADD COLUMN spill_load_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matrix_cells ADD COLUMN constant_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 7: the kernel source a matrix cell was measured with (its table's portfolio
// "source_hash", or the source of that table's winners of the family; '': not known), so that a
// prediction model learns from one source's timings only (store/training.h).
// The cells of two sources of one member at one shape are two cells (the key gains the column).
constexpr std::string_view kV6ToV7 = R"sql(
CREATE TABLE matrix_cells_v7 (
  device_model_id INTEGER NOT NULL REFERENCES device_models(id),
  family TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT NOT NULL,
  params TEXT NOT NULL,
  time_us REAL NOT NULL CHECK (time_us > 0),
  registers INTEGER NOT NULL DEFAULT 0,
  static_shared_bytes INTEGER NOT NULL DEFAULT 0,
  stack_bytes INTEGER NOT NULL DEFAULT 0,
  spill_store_bytes INTEGER NOT NULL DEFAULT 0,
  spill_load_bytes INTEGER NOT NULL DEFAULT 0,
  constant_bytes INTEGER NOT NULL DEFAULT 0,
  source_hash TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (device_model_id, family, dtype, shape, params, source_hash)
);
INSERT INTO matrix_cells_v7 (device_model_id, family, dtype, shape, params, time_us, registers,
    static_shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes, constant_bytes)
  SELECT device_model_id, family, dtype, shape, params, time_us, registers, static_shared_bytes,
         stack_bytes, spill_store_bytes, spill_load_bytes, constant_bytes FROM matrix_cells;
DROP TABLE matrix_cells;
ALTER TABLE matrix_cells_v7 RENAME TO matrix_cells;
)sql";

// Version 8: how a sweep's samples were started (Provenance::timing: 'held' or 'idle'; '': not
// recorded), on the sweep and on the winner it chose. Beside the provenance row rather than in
// it: SQLite cannot widen that table's unique key in place while sweeps and winners refer to it.
constexpr std::string_view kV7ToV8 = R"sql(
ALTER TABLE sweeps ADD COLUMN timing TEXT NOT NULL DEFAULT '';
ALTER TABLE winners ADD COLUMN timing TEXT NOT NULL DEFAULT '';
)sql";

// steps[v] migrates version v to v + 1 (steps[0] creates version 1).
constexpr std::string_view kSteps[] = {kV1,     kV1ToV2, kV2ToV3, kV3ToV4,
                                       kV4ToV5, kV5ToV6, kV6ToV7, kV7ToV8};
static_assert(std::size(kSteps) == kSchemaVersion);

}  // namespace

std::string_view SchemaV1Ddl() { return kV1; }

std::string_view SchemaStepDdl(int version) {
  if (version < 1 || version > kSchemaVersion) return {};
  return kSteps[version - 1];
}

absl::Status Migrate(Db& db) {
  absl::StatusOr<int64_t> version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("database schema version ", *version, " is newer than this cutune supports (",
                     kSchemaVersion, "); upgrade cutune or use another database path"));
  }
  if (*version < 0) {
    return absl::DataLossError(absl::StrCat("database has invalid schema version ", *version));
  }
  for (int64_t v = *version; v < kSchemaVersion; ++v) {
    absl::StatusOr<Transaction> txn = Transaction::Begin(db);
    if (!txn.ok()) return txn.status();
    // Re-read inside the write lock: another process may have migrated meanwhile.
    absl::StatusOr<int64_t> now = db.QueryInt("PRAGMA user_version");
    if (!now.ok()) return now.status();
    if (*now != v) {
      if (*now > kSchemaVersion) {
        return absl::FailedPreconditionError(
            absl::StrCat("database schema version ", *now, " is newer than this cutune supports"));
      }
      v = *now - 1;
      continue;
    }
    if (absl::Status s = db.Exec(kSteps[v]); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("migrating schema ", v, " -> ", v + 1, ": ", s.message()));
    }
    if (absl::Status s = db.Exec(absl::StrCat("PRAGMA user_version = ", v + 1)); !s.ok()) return s;
    if (absl::Status s = txn->Commit(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace cutune::store
