// Store implementation: SQL for sweeps, rows and winners, the winner cache and the lookup ladder.
#include "server/store/store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/store/schema.h"

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

std::string_view LookupRungName(LookupRung rung) {
  switch (rung) {
    case LookupRung::kExact:
      return "exact";
    case LookupRung::kNearestShape:
      return "nearest_shape";
    case LookupRung::kSameArchitecture:
      return "same_architecture";
    case LookupRung::kFamilyDefault:
      return "family_default";
  }
  return "?";
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

// The columns shared by `rows` and `winners`, in the order BindMeasurement/ReadMeasurement use.
constexpr char kMeasurementCols[] =
    "params, outcome, detail, registers, static_shared_bytes, stack_bytes, spill_store_bytes, "
    "spill_load_bytes, constant_bytes, samples, median_us, min_us, rel_spread, gbps, tflops, "
    "percent_of_reference, compile_ms";
constexpr int kMeasurementColCount = 17;

std::string Prefixed(std::string_view prefix) {
  const std::string_view cols = kMeasurementCols;
  std::string out;
  size_t start = 0;
  while (start < cols.size()) {
    size_t end = cols.find(", ", start);
    if (end == std::string_view::npos) end = cols.size();
    if (!out.empty()) out += ", ";
    absl::StrAppend(&out, std::string(prefix), std::string(cols.substr(start, end - start)));
    start = end + 2;
  }
  return out;
}

std::string Placeholders(int first, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) absl::StrAppend(&out, i == 0 ? "" : ", ", "?", first + i);
  return out;
}

void BindMeasurement(Stmt& stmt, int first, const Measurement& m) {
  const ResourceUsage& r = m.resources;
  stmt.Bind(first, FormatParams(m.params))
      .Bind(first + 1, OutcomeName(m.outcome))
      .Bind(first + 2, m.detail)
      .Bind(first + 3, r.registers)
      .Bind(first + 4, r.static_shared_bytes)
      .Bind(first + 5, r.stack_bytes)
      .Bind(first + 6, r.spill_store_bytes)
      .Bind(first + 7, r.spill_load_bytes)
      .Bind(first + 8, r.constant_bytes)
      .Bind(first + 9, m.timing.samples)
      .Bind(first + 10, m.timing.median_us)
      .Bind(first + 11, m.timing.min_us)
      .Bind(first + 12, m.timing.rel_spread)
      .Bind(first + 13, m.gbps)
      .Bind(first + 14, m.tflops)
      .Bind(first + 15, m.percent_of_reference)
      .Bind(first + 16, m.compile_ms);
}

absl::StatusOr<Measurement> ReadMeasurement(const Stmt& stmt, int first) {
  Measurement m;
  absl::StatusOr<Params> params = ParseParams(stmt.Text(first));
  if (!params.ok())
    return absl::DataLossError(absl::StrCat("stored row: ", params.status().message()));
  m.params = *std::move(params);
  absl::StatusOr<Outcome> outcome = ParseOutcome(stmt.Text(first + 1));
  if (!outcome.ok())
    return absl::DataLossError(absl::StrCat("stored row: ", outcome.status().message()));
  m.outcome = *outcome;
  m.detail = stmt.Text(first + 2);
  m.resources.registers = static_cast<int>(stmt.Int(first + 3));
  m.resources.static_shared_bytes = static_cast<int>(stmt.Int(first + 4));
  m.resources.stack_bytes = static_cast<int>(stmt.Int(first + 5));
  m.resources.spill_store_bytes = static_cast<int>(stmt.Int(first + 6));
  m.resources.spill_load_bytes = static_cast<int>(stmt.Int(first + 7));
  m.resources.constant_bytes = static_cast<int>(stmt.Int(first + 8));
  m.timing.samples = static_cast<int>(stmt.Int(first + 9));
  m.timing.median_us = stmt.Double(first + 10);
  m.timing.min_us = stmt.Double(first + 11);
  m.timing.rel_spread = stmt.Double(first + 12);
  m.gbps = stmt.Double(first + 13);
  m.tflops = stmt.Double(first + 14);
  m.percent_of_reference = stmt.Double(first + 15);
  m.compile_ms = stmt.Double(first + 16);
  return m;
}

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

absl::StatusOr<int64_t> SelectId(Stmt& stmt, std::string_view what) {
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(std::string(what));
  return stmt.Int(0);
}

// Inserts the model if missing; with `update`, refreshes its figures from `device`.
absl::StatusOr<int64_t> DeviceModelId(Db& db, const DeviceModel& device, bool update) {
  if (device.name.empty()) return absl::InvalidArgumentError("empty device model name");
  absl::StatusOr<Stmt> ins = Stmt::Prepare(
      db, update ? "INSERT INTO device_models (name, cc_major, cc_minor, sm_count, "
                   "total_memory_bytes) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO UPDATE "
                   "SET cc_major = ?2, cc_minor = ?3, sm_count = ?4, total_memory_bytes = ?5"
                 : "INSERT INTO device_models (name, cc_major, cc_minor, sm_count, "
                   "total_memory_bytes) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO NOTHING");
  if (!ins.ok()) return ins.status();
  ins->Bind(1, device.name)
      .Bind(2, device.cc_major)
      .Bind(3, device.cc_minor)
      .Bind(4, device.sm_count)
      .Bind(5, device.total_memory_bytes);
  if (absl::Status s = ins->Run(); !s.ok()) return s;
  absl::StatusOr<Stmt> sel = Stmt::Prepare(db, "SELECT id FROM device_models WHERE name = ?1");
  if (!sel.ok()) return sel.status();
  sel->Bind(1, device.name);
  return SelectId(*sel, "device model");
}

DeviceModel ModelOf(const DeviceDescription& d) {
  return {d.name, d.cc_major, d.cc_minor, d.sm_count, d.total_memory_bytes};
}

absl::StatusOr<int64_t> ProvenanceId(Db& db, const Provenance& p) {
  absl::StatusOr<Stmt> ins = Stmt::Prepare(
      db, "INSERT OR IGNORE INTO provenances (driver_version, nvrtc_version) VALUES (?1, ?2)");
  if (!ins.ok()) return ins.status();
  ins->Bind(1, p.driver_version).Bind(2, p.nvrtc_version);
  if (absl::Status s = ins->Run(); !s.ok()) return s;
  absl::StatusOr<Stmt> sel = Stmt::Prepare(
      db, "SELECT id FROM provenances WHERE driver_version = ?1 AND nvrtc_version = ?2");
  if (!sel.ok()) return sel.status();
  sel->Bind(1, p.driver_version).Bind(2, p.nvrtc_version);
  return SelectId(*sel, "provenance");
}

absl::StatusOr<int64_t> KernelId(Db& db, std::string_view family, const Provenance& p) {
  absl::StatusOr<Stmt> ins = Stmt::Prepare(
      db, "INSERT OR IGNORE INTO kernels (family, source_hash, space_version) VALUES (?1, ?2, ?3)");
  if (!ins.ok()) return ins.status();
  ins->Bind(1, family).Bind(2, p.source_hash).Bind(3, p.space_version);
  if (absl::Status s = ins->Run(); !s.ok()) return s;
  absl::StatusOr<Stmt> sel = Stmt::Prepare(
      db, "SELECT id FROM kernels WHERE family = ?1 AND source_hash = ?2 AND space_version = ?3");
  if (!sel.ok()) return sel.status();
  sel->Bind(1, family).Bind(2, p.source_hash).Bind(3, p.space_version);
  return SelectId(*sel, "kernel");
}

constexpr std::string_view kSweepSelect =
    "SELECT s.id, m.name, s.gpu_uuid, k.family, s.shape, s.dtype, p.driver_version, "
    "p.nvrtc_version, k.source_hash, k.space_version, s.status, s.started_at_ms, "
    "s.finished_at_ms, s.request_json, s.reference_name, s.reference_us, "
    "(SELECT COUNT(*) FROM rows r WHERE r.sweep_id = s.id) "
    "FROM sweeps s JOIN device_models m ON m.id = s.device_model_id "
    "JOIN kernels k ON k.id = s.kernel_id JOIN provenances p ON p.id = s.provenance_id ";

absl::StatusOr<SweepInfo> ReadSweep(const Stmt& stmt) {
  SweepInfo info;
  info.id = stmt.Int(0);
  info.device_model = stmt.Text(1);
  info.gpu_uuid = stmt.Text(2);
  info.family = stmt.Text(3);
  absl::StatusOr<Shape> shape = ParseShape(stmt.Text(4));
  if (!shape.ok())
    return absl::DataLossError(absl::StrCat("stored sweep: ", shape.status().message()));
  info.shape = *std::move(shape);
  absl::StatusOr<DType> dtype = ParseDType(stmt.Text(5));
  if (!dtype.ok())
    return absl::DataLossError(absl::StrCat("stored sweep: ", dtype.status().message()));
  info.dtype = *dtype;
  info.provenance.driver_version = static_cast<int>(stmt.Int(6));
  info.provenance.nvrtc_version = stmt.Text(7);
  info.provenance.source_hash = stmt.Text(8);
  info.provenance.space_version = static_cast<int>(stmt.Int(9));
  absl::StatusOr<SweepStatus> status = ParseSweepStatus(stmt.Text(10));
  if (!status.ok())
    return absl::DataLossError(absl::StrCat("stored sweep: ", status.status().message()));
  info.status = *status;
  info.started_at_ms = stmt.Int(11);
  if (!stmt.IsNull(12)) info.finished_at_ms = stmt.Int(12);
  info.request_json = stmt.Text(13);
  info.reference.name = stmt.Text(14);
  info.reference.time_us = stmt.Double(15);
  info.rows = stmt.Int(16);
  return info;
}

absl::StatusOr<std::vector<SweepInfo>> QuerySweeps(Db& db, std::string_view where,
                                                   std::string_view text_arg) {
  absl::StatusOr<Stmt> stmt =
      Stmt::Prepare(db, absl::StrCat(std::string(kSweepSelect), std::string(where)));
  if (!stmt.ok()) return stmt.status();
  if (where.find("?1") != std::string_view::npos) stmt->Bind(1, text_arg);
  std::vector<SweepInfo> out;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<SweepInfo> info = ReadSweep(*stmt);
    if (!info.ok()) return info.status();
    out.push_back(*std::move(info));
  }
  return out;
}

absl::StatusOr<std::vector<Winner>> QueryWinners(Db& db, std::string_view device_model) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat(
              "SELECT m.name, m.cc_major, m.cc_minor, m.sm_count, m.total_memory_bytes, w.family, "
              "w.shape, w.dtype, p.driver_version, p.nvrtc_version, w.source_hash, "
              "w.space_version, w.sweep_id, w.measured_at_ms, w.reference_name, w.reference_us, ",
              Prefixed("w."),
              " FROM winners w JOIN device_models m ON m.id = w.device_model_id "
              "JOIN provenances p ON p.id = w.provenance_id WHERE ?1 = '' OR m.name = ?1"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, device_model);
  std::vector<Winner> out;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Winner w;
    w.device = {stmt->Text(0), static_cast<int>(stmt->Int(1)), static_cast<int>(stmt->Int(2)),
                static_cast<int>(stmt->Int(3)), stmt->Int(4)};
    w.family = stmt->Text(5);
    absl::StatusOr<Shape> shape = ParseShape(stmt->Text(6));
    absl::StatusOr<DType> dtype = ParseDType(stmt->Text(7));
    if (!shape.ok() || !dtype.ok()) {
      return absl::DataLossError(absl::StrCat(
          "stored winner has a bad shape or dtype: ", stmt->Text(6), " ", stmt->Text(7)));
    }
    w.shape = *std::move(shape);
    w.dtype = *dtype;
    w.provenance = {static_cast<int>(stmt->Int(8)), stmt->Text(9), stmt->Text(10),
                    static_cast<int>(stmt->Int(11))};
    if (!stmt->IsNull(12)) w.sweep_id = stmt->Int(12);
    w.measured_at_ms = stmt->Int(13);
    w.reference = {stmt->Text(14), stmt->Double(15)};
    absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 16);
    if (!m.ok()) return m.status();
    w.measurement = *std::move(m);
    out.push_back(std::move(w));
  }
  return out;
}

absl::StatusOr<std::vector<StoredRow>> QuerySweepRows(Db& db, int64_t sweep_id) {
  absl::StatusOr<Stmt> stmt =
      Stmt::Prepare(db, absl::StrCat("SELECT sweep_id, measured_at_ms, ", kMeasurementCols,
                                     " FROM rows WHERE sweep_id = ?1 ORDER BY params"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, sweep_id);
  std::vector<StoredRow> out;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 2);
    if (!m.ok()) return m.status();
    out.push_back({stmt->Int(0), *std::move(m), stmt->Int(1)});
  }
  return out;
}

// Inserts or replaces the winner of `w`'s key.
absl::Status WriteWinner(Db& db, int64_t model_id, int64_t provenance_id, const Winner& w) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat("INSERT OR REPLACE INTO winners (device_model_id, family, source_hash, "
                       "shape, dtype, space_version, provenance_id, sweep_id, measured_at_ms, "
                       "reference_name, reference_us, ",
                       kMeasurementCols, ") VALUES (", Placeholders(1, 11 + kMeasurementColCount),
                       ")"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, model_id)
      .Bind(2, w.family)
      .Bind(3, w.provenance.source_hash)
      .Bind(4, FormatShape(w.shape))
      .Bind(5, DTypeName(w.dtype))
      .Bind(6, w.provenance.space_version)
      .Bind(7, provenance_id)
      .Bind(8, w.sweep_id)
      .Bind(9, w.measured_at_ms)
      .Bind(10, w.reference.name)
      .Bind(11, w.reference.time_us);
  BindMeasurement(*stmt, 12, w.measurement);
  return stmt->Run();
}

struct ExistingWinner {
  int64_t provenance_id = 0;
  int space_version = 0;
  std::string params;
  double median_us = 0;
  int64_t measured_at_ms = 0;
};

absl::StatusOr<std::optional<ExistingWinner>> FindWinner(Db& db, int64_t model_id,
                                                         std::string_view family,
                                                         std::string_view source_hash,
                                                         const Shape& shape, DType dtype) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db,
      "SELECT provenance_id, space_version, params, median_us, measured_at_ms FROM winners "
      "WHERE device_model_id = ?1 AND family = ?2 AND source_hash = ?3 AND shape = ?4 AND "
      "dtype = ?5");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, model_id)
      .Bind(2, family)
      .Bind(3, source_hash)
      .Bind(4, FormatShape(shape))
      .Bind(5, DTypeName(dtype));
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<ExistingWinner>();
  return std::optional<ExistingWinner>(ExistingWinner{
      stmt->Int(0), static_cast<int>(stmt->Int(1)), stmt->Text(2), stmt->Double(3), stmt->Int(4)});
}

std::string Describe(const Winner& w) {
  return absl::StrCat(w.device.name, " ", w.family, " ", FormatShape(w.shape), " ",
                      ToAbsl(DTypeName(w.dtype)), " (source ",
                      w.provenance.source_hash.substr(0, 12), ")");
}

}  // namespace

// Winners indexed for the ladder: per family and dtype, by device model (rungs 1-2) and by
// compute capability (rung 3), with log2 of each shape precomputed so a lookup costs a few
// subtractions per candidate shape of its own model.
struct Store::WinnerCache {
  struct Entry {
    const Winner* winner;
    std::vector<double> log_shape;
  };
  struct Group {
    std::map<std::string, std::vector<Entry>, std::less<>> by_model;
    std::map<std::pair<int, int>, std::vector<Entry>> by_cc;
  };
  std::vector<Winner> winners;
  std::map<std::string, std::map<DType, Group>, std::less<>> by_family;
  std::vector<DeviceModel> models;  // every device model, by name
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
  if (absl::Status s = writer->Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
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

absl::Status Store::RefreshCacheLocked() {
  absl::StatusOr<std::vector<Winner>> winners = QueryWinners(writer_, "");
  if (!winners.ok()) return winners.status();
  DropRefused(*winners, /*log=*/true);
  auto cache = std::make_shared<WinnerCache>();
  cache->winners = *std::move(winners);
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
  for (const Winner& w : cache->winners) {
    WinnerCache::Entry entry{&w, {}};
    for (int64_t d : w.shape) entry.log_shape.push_back(std::log2(static_cast<double>(d)));
    WinnerCache::Group& group = cache->by_family[w.family][w.dtype];
    group.by_model[w.device.name].push_back(entry);
    group.by_cc[{w.device.cc_major, w.device.cc_minor}].push_back(std::move(entry));
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  cache_ = std::move(cache);
  return absl::OkStatus();
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
      "SELECT s.id, s.kernel_id, s.provenance_id FROM sweeps s JOIN kernels k ON k.id = "
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
    if (!resume && running->Int(1) == *kernel_id && running->Int(2) == *prov_id) {
      resume = running->Int(0);
    } else {
      superseded.push_back(running->Int(0));
    }
  }
  for (int64_t id : superseded) {
    // Rows measured under another driver, compiler or kernel source must not be mixed into
    // this sweep; the old sweep is closed as failed and its rows stay for inspection.
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
        "request_json, status, started_at_ms, gpu_uuid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
        "'running', ?7, ?8)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, *model_id)
        .Bind(2, *kernel_id)
        .Bind(3, *prov_id)
        .Bind(4, FormatShape(key.shape))
        .Bind(5, DTypeName(key.dtype))
        .Bind(6, request_json)
        .Bind(7, NowMs())
        .Bind(8, key.device.uuid);
    if (absl::Status s = ins->Run(); !s.ok()) return s;
    started = {sqlite3_last_insert_rowid(writer_.get()), false};
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  return started;
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
                                                const Reference& reference) {
  if (status == SweepStatus::kRunning) {
    return absl::InvalidArgumentError("a sweep cannot finish as 'running'");
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<std::vector<SweepInfo>> sweeps =
      QuerySweeps(writer_, absl::StrCat("WHERE s.id = ", sweep_id), "");
  if (!sweeps.ok()) return sweeps.status();
  if (sweeps->empty()) return absl::NotFoundError(absl::StrCat("no sweep ", sweep_id));
  const SweepInfo& info = sweeps->front();
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
  absl::StatusOr<Stmt> best =
      Stmt::Prepare(writer_, absl::StrCat("SELECT measured_at_ms, ", kMeasurementCols,
                                          " FROM rows WHERE sweep_id = ?1 AND outcome = 'ok' "
                                          "ORDER BY median_us, params LIMIT 1"));
  if (!best.ok()) return best.status();
  best->Bind(1, sweep_id);
  absl::StatusOr<bool> has_best = best->Step();
  if (!has_best.ok()) return has_best.status();
  if (*has_best) {
    absl::StatusOr<Measurement> m = ReadMeasurement(*best, 1);
    if (!m.ok()) return m.status();
    result.best = *m;
    const int64_t best_measured_at = best->Int(0);
    best->Reset();
    if (status == SweepStatus::kSucceeded) {
      Winner w;
      w.device.name = info.device_model;
      w.family = info.family;
      w.shape = info.shape;
      w.dtype = info.dtype;
      w.provenance = info.provenance;
      w.measurement = *std::move(m);
      w.reference = reference;
      w.measured_at_ms = best_measured_at;
      w.sweep_id = sweep_id;
      absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, w.device, false);
      if (!model_id.ok()) return model_id.status();
      absl::StatusOr<int64_t> prov_id = ProvenanceId(writer_, info.provenance);
      if (!prov_id.ok()) return prov_id.status();
      absl::StatusOr<std::optional<ExistingWinner>> existing =
          FindWinner(writer_, *model_id, w.family, w.provenance.source_hash, w.shape, w.dtype);
      if (!existing.ok()) return existing.status();
      bool replace = !existing->has_value() || (*existing)->provenance_id != *prov_id ||
                     (*existing)->space_version != w.provenance.space_version ||
                     w.measurement.timing.median_us < (*existing)->median_us;
      if (replace) {
        if (absl::Status s = WriteWinner(writer_, *model_id, *prov_id, w); !s.ok()) return s;
        result.winner_changed = true;
      }
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  if (result.winner_changed) {
    if (absl::Status s = RefreshCacheLocked(); !s.ok()) return s;
  }
  return result;
}

absl::StatusOr<SweepInfo> Store::GetSweep(int64_t sweep_id) {
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<std::vector<SweepInfo>> sweeps =
      QuerySweeps(reader_, absl::StrCat("WHERE s.id = ", sweep_id), "");
  if (!sweeps.ok()) return sweeps.status();
  if (sweeps->empty()) return absl::NotFoundError(absl::StrCat("no sweep ", sweep_id));
  return sweeps->front();
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
      absl::StrCat("SELECT r.sweep_id, r.measured_at_ms, ", Prefixed("r."),
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
    absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 2);
    if (!m.ok()) return m.status();
    out.push_back({stmt->Int(0), *std::move(m), stmt->Int(1)});
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
  LookupResult result;
  result.rung = LookupRung::kFamilyDefault;
  result.winner.params = query.family_default;
  std::shared_ptr<const WinnerCache> cache = Snapshot();
  auto family = cache->by_family.find(query.family);
  if (family == cache->by_family.end()) return result;
  auto group_it = family->second.find(query.dtype);
  if (group_it == family->second.end()) return result;
  const WinnerCache::Group& group = group_it->second;

  const Provenance& now = query.current;
  auto hash_stale = [&](const Winner& w) {
    return !now.source_hash.empty() && w.provenance.source_hash != now.source_hash;
  };
  auto stale_count = [&](const Winner& w) {
    return int{now.driver_version != 0 && w.provenance.driver_version != now.driver_version} +
           int{!now.nvrtc_version.empty() && w.provenance.nvrtc_version != now.nvrtc_version} +
           int{hash_stale(w)} +
           int{now.space_version != 0 && w.provenance.space_version != now.space_version};
  };
  std::vector<double> log_query;
  log_query.reserve(query.shape.size());
  for (int64_t d : query.shape) log_query.push_back(std::log2(static_cast<double>(d)));

  // Within a rung: nearest shape, then fresh before stale (a current-source winner beats a
  // stale one at the same distance), then fewer stale fields, then speed, then model name.
  using Rank = std::tuple<double, bool, int, double, std::string_view>;
  const Winner* best = nullptr;
  Rank best_rank;
  double best_distance = 0;
  auto scan = [&](const std::vector<WinnerCache::Entry>& entries, bool skip_own_model) {
    for (const WinnerCache::Entry& e : entries) {
      const Winner& w = *e.winner;
      if (w.shape.size() != query.shape.size()) continue;
      if (skip_own_model && w.device.name == query.device_model) continue;
      double distance = 0;
      for (size_t i = 0; i < log_query.size(); ++i) {
        distance += std::abs(log_query[i] - e.log_shape[i]);
      }
      if (w.shape == query.shape) distance = 0;
      Rank rank{distance, hash_stale(w), stale_count(w), w.measurement.timing.median_us,
                w.device.name};
      if (best == nullptr || rank < best_rank) {
        best = &w;
        best_rank = rank;
        best_distance = distance;
      }
    }
  };
  auto own = group.by_model.find(query.device_model);
  if (own != group.by_model.end()) scan(own->second, false);
  if (best != nullptr) {
    result.rung = best->shape == query.shape ? LookupRung::kExact : LookupRung::kNearestShape;
  } else {
    auto same_cc = group.by_cc.find({query.cc_major, query.cc_minor});
    if (same_cc != group.by_cc.end()) scan(same_cc->second, true);
    if (best == nullptr) return result;
    result.rung = LookupRung::kSameArchitecture;
  }

  result.distance = best_distance;
  result.tuned_shape = best->shape;
  result.device_model = best->device.name;
  result.winner = best->measurement;
  result.provenance = best->provenance;
  result.reference = best->reference;
  result.measured_at_ms = best->measured_at_ms;
  const Provenance& then = best->provenance;
  if (now.driver_version != 0 && then.driver_version != now.driver_version) {
    result.stale.push_back(
        absl::StrCat("driver ", then.driver_version, " != ", now.driver_version));
  }
  if (!now.nvrtc_version.empty() && then.nvrtc_version != now.nvrtc_version) {
    result.stale.push_back(absl::StrCat("nvrtc ", then.nvrtc_version, " != ", now.nvrtc_version));
  }
  if (hash_stale(*best)) {
    result.stale.push_back(absl::StrCat("kernel source hash differs (tuned ",
                                        then.source_hash.substr(0, 12), ", current ",
                                        now.source_hash.substr(0, 12), ")"));
  }
  if (now.space_version != 0 && then.space_version != now.space_version) {
    result.stale.push_back(
        absl::StrCat("space version ", then.space_version, " != ", now.space_version));
  }
  return result;
}

absl::StatusOr<ImportStats> Store::ApplyImport(const ImportBatch& batch, MergePolicy policy) {
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  ImportStats stats;

  for (const DeviceModel& device : batch.devices) {
    absl::StatusOr<Stmt> sel =
        Stmt::Prepare(writer_, "SELECT cc_major, cc_minor FROM device_models WHERE name = ?1");
    if (!sel.ok()) return sel.status();
    sel->Bind(1, device.name);
    absl::StatusOr<bool> row = sel->Step();
    if (!row.ok()) return row.status();
    if (*row && (sel->Int(0) != device.cc_major || sel->Int(1) != device.cc_minor)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "device model '", device.name, "' has compute capability ", device.cc_major, ".",
          device.cc_minor, " in the table but ", sel->Int(0), ".", sel->Int(1), " in the store"));
    }
    if (absl::StatusOr<int64_t> id = DeviceModelId(writer_, device, false); !id.ok()) {
      return id.status();
    }
  }

  for (size_t i = 0; i < batch.winners.size(); ++i) {
    const Winner& w = batch.winners[i];
    const std::string origin = i < batch.winner_origins.size() ? batch.winner_origins[i] : "";
    absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, w.device, false);
    if (!model_id.ok()) return model_id.status();
    absl::StatusOr<int64_t> prov_id = ProvenanceId(writer_, w.provenance);
    if (!prov_id.ok()) return prov_id.status();
    absl::StatusOr<std::optional<ExistingWinner>> existing =
        FindWinner(writer_, *model_id, w.family, w.provenance.source_hash, w.shape, w.dtype);
    if (!existing.ok()) return existing.status();
    bool write = false;
    if (!existing->has_value()) {
      write = true;
      ++stats.winners_added;
    } else {
      const ExistingWinner& old = **existing;
      // Tables round figures to 6 significant digits, so re-importing an export of this very
      // store must count as the same measurement, not a conflict.
      bool same =
          old.params == FormatParams(w.measurement.params) &&
          std::abs(old.median_us - w.measurement.timing.median_us) <= 1e-5 * old.median_us &&
          old.measured_at_ms == w.measured_at_ms && old.provenance_id == *prov_id &&
          old.space_version == w.provenance.space_version;
      if (!same) {
        switch (policy) {
          case MergePolicy::kFailOnConflict:
            return absl::AlreadyExistsError(absl::StrCat(
                "conflict at ", origin, ": the store already has a different winner for ",
                Describe(w), " (", old.params, ", ", old.median_us, " us vs ",
                FormatParams(w.measurement.params), ", ", w.measurement.timing.median_us, " us)"));
          case MergePolicy::kKeepFaster:
            write = w.measurement.timing.median_us < old.median_us;
            break;
          case MergePolicy::kKeepNewer:
            write = w.measured_at_ms > old.measured_at_ms;
            break;
        }
      }
      ++(write ? stats.winners_replaced : stats.winners_kept);
    }
    if (write) {
      if (absl::Status s = WriteWinner(writer_, *model_id, *prov_id, w); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(origin, ": ", s.message()));
      }
    }
  }

  for (size_t i = 0; i < batch.sweeps.size(); ++i) {
    const SweepInfo& info = batch.sweeps[i].info;
    const std::string origin = i < batch.sweep_origins.size() ? batch.sweep_origins[i] : "";
    if (info.status == SweepStatus::kRunning || !info.finished_at_ms) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": only finished sweeps can be imported"));
    }
    DeviceModel device;
    device.name = info.device_model;
    absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, device, false);
    if (!model_id.ok()) return model_id.status();
    absl::StatusOr<int64_t> kernel_id = KernelId(writer_, info.family, info.provenance);
    if (!kernel_id.ok()) return kernel_id.status();
    absl::StatusOr<int64_t> prov_id = ProvenanceId(writer_, info.provenance);
    if (!prov_id.ok()) return prov_id.status();
    absl::StatusOr<Stmt> dup =
        Stmt::Prepare(writer_,
                      "SELECT id FROM sweeps WHERE device_model_id = ?1 AND kernel_id = ?2 AND "
                      "shape = ?3 AND dtype = ?4 AND started_at_ms = ?5");
    if (!dup.ok()) return dup.status();
    dup->Bind(1, *model_id)
        .Bind(2, *kernel_id)
        .Bind(3, FormatShape(info.shape))
        .Bind(4, DTypeName(info.dtype))
        .Bind(5, info.started_at_ms);
    absl::StatusOr<bool> found = dup->Step();
    if (!found.ok()) return found.status();
    if (*found) {
      ++stats.sweeps_skipped;
      continue;
    }
    absl::StatusOr<Stmt> ins = Stmt::Prepare(
        writer_,
        "INSERT INTO sweeps (device_model_id, kernel_id, provenance_id, shape, dtype, "
        "request_json, status, started_at_ms, finished_at_ms, reference_name, reference_us, "
        "gpu_uuid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, '')");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, *model_id)
        .Bind(2, *kernel_id)
        .Bind(3, *prov_id)
        .Bind(4, FormatShape(info.shape))
        .Bind(5, DTypeName(info.dtype))
        .Bind(6, info.request_json)
        .Bind(7, SweepStatusName(info.status))
        .Bind(8, info.started_at_ms)
        .Bind(9, info.finished_at_ms)
        .Bind(10, info.reference.name)
        .Bind(11, info.reference.time_us);
    if (absl::Status s = ins->Run(); !s.ok()) return s;
    int64_t sweep_id = sqlite3_last_insert_rowid(writer_.get());
    ++stats.sweeps_added;
    for (size_t j = 0; j < batch.sweeps[i].rows.size(); ++j) {
      const StoredRow& row = batch.sweeps[i].rows[j];
      absl::StatusOr<Stmt> rins = Stmt::Prepare(
          writer_, absl::StrCat("INSERT INTO rows (sweep_id, measured_at_ms, ", kMeasurementCols,
                                ") VALUES (?1, ?2, ", Placeholders(3, kMeasurementColCount), ")"));
      if (!rins.ok()) return rins.status();
      rins->Bind(1, sweep_id).Bind(2, row.measured_at_ms);
      BindMeasurement(*rins, 3, row.measurement);
      if (absl::Status s = rins->Run(); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(origin, "/rows/", j, ": ", s.message()));
      }
      ++stats.rows_added;
    }
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  if (absl::Status s = RefreshCacheLocked(); !s.ok()) return s;
  return stats;
}

}  // namespace cutune::store
