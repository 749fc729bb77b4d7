// The SQL statements the store's parts share (store.cc: sweeps, rows, winners; store_import.cc:
// applying a table): ids of device models, provenances and kernels, and reading and writing
// sweeps and winners. Each runs on the connection it is given, inside the caller's transaction
// or read snapshot. Internal to server/store.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/sqlite.h"
#include "server/store/store.h"

namespace cutune::store::internal {

// The single id a SELECT returns; NOT_FOUND(what) when it returns none.
absl::StatusOr<int64_t> SelectId(Stmt& stmt, std::string_view what);

DeviceModel ModelOf(const DeviceDescription& device);
// Inserts the model if missing; with `update`, refreshes its figures from `device`.
absl::StatusOr<int64_t> DeviceModelId(Db& db, const DeviceModel& device, bool update);
// Inserts if missing.
absl::StatusOr<int64_t> ProvenanceId(Db& db, const Provenance& p);
absl::StatusOr<int64_t> KernelId(Db& db, std::string_view family, const Provenance& p);

// Sweeps matching `where` (SQL after the FROM clause, over sweeps s, device_models m, kernels k,
// provenances p); `text_arg` is bound to ?1 when `where` uses it.
absl::StatusOr<std::vector<SweepInfo>> QuerySweeps(Db& db, std::string_view where,
                                                   std::string_view text_arg);
// One sweep by id; NOT_FOUND naming it when there is none.
absl::StatusOr<SweepInfo> QuerySweep(Db& db, int64_t sweep_id);
// Every row of one sweep, ordered by parameters.
absl::StatusOr<std::vector<StoredRow>> QuerySweepRows(Db& db, int64_t sweep_id);

// Winners of one device model, or of all when it is empty; unordered.
absl::StatusOr<std::vector<Winner>> QueryWinners(Db& db, std::string_view device_model);
// Inserts or replaces the winner of `w`'s key.
absl::Status WriteWinner(Db& db, int64_t model_id, int64_t provenance_id, const Winner& w);

// The stored winner of a key, as the replacement rules need it.
struct ExistingWinner {
  int64_t provenance_id = 0;
  int space_version = 0;
  std::string timing;  // Provenance::timing
  Measurement measurement;
  int64_t measured_at_ms = 0;
};
absl::StatusOr<std::optional<ExistingWinner>> FindWinner(Db& db, int64_t model_id,
                                                         std::string_view family,
                                                         std::string_view source_hash,
                                                         const Shape& shape, DType dtype);

}  // namespace cutune::store::internal
