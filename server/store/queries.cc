// The store's shared SQL: ids, sweeps and winners.
#include "server/store/queries.h"

#include "absl/strings/str_cat.h"
#include "server/store/row_sql.h"

namespace cutune::store::internal {

absl::StatusOr<int64_t> SelectId(Stmt& stmt, std::string_view what) {
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(std::string(what));
  return stmt.Int(0);
}

DeviceModel ModelOf(const DeviceDescription& d) {
  return {d.name, d.cc_major, d.cc_minor, d.sm_count, d.total_memory_bytes};
}

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

namespace {

constexpr std::string_view kSweepSelect =
    "SELECT s.id, m.name, s.gpu_uuid, k.family, s.shape, s.dtype, p.driver_version, "
    "p.nvrtc_version, k.source_hash, k.space_version, s.status, s.started_at_ms, "
    "s.finished_at_ms, s.request_json, s.reference_name, s.reference_us, "
    "(SELECT COUNT(*) FROM rows r WHERE r.sweep_id = s.id), s.timing "
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
  info.provenance.timing = stmt.Text(17);
  return info;
}

}  // namespace

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

absl::StatusOr<SweepInfo> QuerySweep(Db& db, int64_t sweep_id) {
  absl::StatusOr<std::vector<SweepInfo>> sweeps =
      QuerySweeps(db, absl::StrCat("WHERE s.id = ", sweep_id), "");
  if (!sweeps.ok()) return sweeps.status();
  if (sweeps->empty()) return absl::NotFoundError(absl::StrCat("no sweep ", sweep_id));
  return std::move(sweeps->front());
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

absl::StatusOr<std::vector<Winner>> QueryWinners(Db& db, std::string_view device_model) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat(
              "SELECT m.name, m.cc_major, m.cc_minor, m.sm_count, m.total_memory_bytes, w.family, "
              "w.shape, w.dtype, p.driver_version, p.nvrtc_version, w.source_hash, "
              "w.space_version, w.sweep_id, w.measured_at_ms, w.reference_name, w.reference_us, "
              "w.ties, w.timing, ",
              PrefixedMeasurementCols("w."),
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
                    static_cast<int>(stmt->Int(11)), stmt->Text(17)};
    if (!stmt->IsNull(12)) w.sweep_id = stmt->Int(12);
    w.measured_at_ms = stmt->Int(13);
    w.reference = {stmt->Text(14), stmt->Double(15)};
    absl::StatusOr<std::vector<Params>> ties = ParseTies(stmt->Text(16));
    if (!ties.ok()) return ties.status();
    w.ties = *std::move(ties);
    absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 18);
    if (!m.ok()) return m.status();
    w.measurement = *std::move(m);
    out.push_back(std::move(w));
  }
  return out;
}

absl::Status WriteWinner(Db& db, int64_t model_id, int64_t provenance_id, const Winner& w) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat("INSERT OR REPLACE INTO winners (device_model_id, family, source_hash, "
                       "shape, dtype, space_version, provenance_id, sweep_id, measured_at_ms, "
                       "reference_name, reference_us, ties, timing, ",
                       kMeasurementCols, ") VALUES (", Placeholders(1, 13 + kMeasurementColCount),
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
      .Bind(11, w.reference.time_us)
      .Bind(12, FormatTies(w.ties))
      .Bind(13, w.provenance.timing);
  BindMeasurement(*stmt, 14, w.measurement);
  return stmt->Run();
}

absl::StatusOr<std::optional<ExistingWinner>> FindWinner(Db& db, int64_t model_id,
                                                         std::string_view family,
                                                         std::string_view source_hash,
                                                         const Shape& shape, DType dtype) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      db, absl::StrCat("SELECT provenance_id, space_version, measured_at_ms, timing, ",
                       kMeasurementCols,
                       " FROM winners WHERE device_model_id = ?1 AND family = ?2 AND "
                       "source_hash = ?3 AND shape = ?4 AND dtype = ?5"));
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, model_id)
      .Bind(2, family)
      .Bind(3, source_hash)
      .Bind(4, FormatShape(shape))
      .Bind(5, DTypeName(dtype));
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<ExistingWinner>();
  ExistingWinner existing;
  existing.provenance_id = stmt->Int(0);
  existing.space_version = static_cast<int>(stmt->Int(1));
  existing.measured_at_ms = stmt->Int(2);
  existing.timing = stmt->Text(3);
  absl::StatusOr<Measurement> m = ReadMeasurement(*stmt, 4);
  if (!m.ok()) return m.status();
  existing.measurement = *std::move(m);
  return std::optional<ExistingWinner>(std::move(existing));
}

}  // namespace cutune::store::internal
