// Applying an imported table to the store (Store::ApplyImport): devices, then winners under the
// merge policy, then sweeps with their rows, all in one transaction. Parsing and validating the
// table is in table_import.cc.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/store/queries.h"
#include "server/store/row_sql.h"
#include "server/store/store.h"
#include "server/store/winner_rule.h"

namespace cutune::store {
namespace {

using internal::BindMeasurement;
using internal::DeviceModelId;
using internal::ExistingWinner;
using internal::FindWinner;
using internal::KernelId;
using internal::kMeasurementColCount;
using internal::kMeasurementCols;
using internal::Placeholders;
using internal::ProvenanceId;
using internal::WriteWinner;

std::string Describe(const Winner& w) {
  return absl::StrCat(w.device.name, " ", w.family, " ", FormatShape(w.shape), " ",
                      ToAbsl(DTypeName(w.dtype)), " (source ",
                      w.provenance.source_hash.substr(0, 12), ")");
}

}  // namespace

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
      const double old_us = old.measurement.timing.median_us;
      // Tables round figures to 6 significant digits, so re-importing an export of this very
      // store must count as the same measurement, not a conflict.
      bool same = old.measurement.params == w.measurement.params &&
                  std::abs(old_us - w.measurement.timing.median_us) <= 1e-5 * old_us &&
                  old.measured_at_ms == w.measured_at_ms && old.provenance_id == *prov_id &&
                  old.space_version == w.provenance.space_version &&
                  old.timing == w.provenance.timing;
      if (!same) {
        switch (policy) {
          case MergePolicy::kFailOnConflict:
            return absl::AlreadyExistsError(absl::StrCat(
                "conflict at ", origin, ": the store already has a different winner for ",
                Describe(w), " (", FormatParams(old.measurement.params), ", ", old_us, " us vs ",
                FormatParams(w.measurement.params), ", ", w.measurement.timing.median_us, " us)"));
          case MergePolicy::kKeepFaster:
            write = Supersedes(w.measurement, old.measurement);
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
        "gpu_uuid, timing) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, '', ?12)");
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
        .Bind(11, info.reference.time_us)
        .Bind(12, info.provenance.timing);
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
  for (const MatrixCell& cell : batch.cells) {
    DeviceModel device;
    device.name = cell.device_model;
    absl::StatusOr<int64_t> model_id = DeviceModelId(writer_, device, false);
    if (!model_id.ok()) return model_id.status();
    absl::StatusOr<Stmt> ins = Stmt::Prepare(
        writer_,
        "INSERT INTO matrix_cells (device_model_id, family, dtype, shape, params, time_us, "
        "registers, static_shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes, "
        "constant_bytes, source_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13) "
        "ON CONFLICT DO UPDATE SET time_us = min(time_us, excluded.time_us), "
        // A known report replaces an unknown one (or an older one): one report per import.
        "registers = iif(excluded.registers > 0, excluded.registers, registers), "
        "static_shared_bytes = iif(excluded.registers > 0, excluded.static_shared_bytes, "
        "static_shared_bytes), "
        "stack_bytes = iif(excluded.registers > 0, excluded.stack_bytes, stack_bytes), "
        "spill_store_bytes = iif(excluded.registers > 0, excluded.spill_store_bytes, "
        "spill_store_bytes), "
        "spill_load_bytes = iif(excluded.registers > 0, excluded.spill_load_bytes, "
        "spill_load_bytes), "
        "constant_bytes = iif(excluded.registers > 0, excluded.constant_bytes, constant_bytes)");
    if (!ins.ok()) return ins.status();
    ins->Bind(1, *model_id)
        .Bind(2, cell.family)
        .Bind(3, DTypeName(cell.dtype))
        .Bind(4, FormatShape(cell.shape))
        .Bind(5, FormatParams(cell.params))
        .Bind(6, cell.time_us)
        .Bind(7, cell.resources.registers)
        .Bind(8, cell.resources.static_shared_bytes)
        .Bind(9, cell.resources.stack_bytes)
        .Bind(10, cell.resources.spill_store_bytes)
        .Bind(11, cell.resources.spill_load_bytes)
        .Bind(12, cell.resources.constant_bytes)
        .Bind(13, cell.source_hash);
    if (absl::Status s = ins->Run(); !s.ok()) return s;
  }
  if (absl::Status s = txn->Commit(); !s.ok()) return s;
  if (absl::Status s = RefreshCacheLocked(/*retrain=*/true); !s.ok()) return s;
  return stats;
}

}  // namespace cutune::store
