// The store's Nsight Compute profiles (schema version 5's `profiles` table): one line per counter,
// keyed by the measured row and the ncu version.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/store/queries.h"
#include "server/store/store.h"

namespace cutune::store {

absl::Status Store::RecordProfile(int64_t sweep_id, const Params& params, StoredProfile profile) {
  if (profile.metrics.empty()) return absl::InvalidArgumentError("a profile without metrics");
  if (profile.ncu_version.empty()) {
    return absl::InvalidArgumentError("a profile without the ncu version that read it");
  }
  if (profile.profiled_at_ms == 0) profile.profiled_at_ms = NowMs();
  std::lock_guard<std::mutex> lock(write_mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(writer_);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<Stmt> find =
      Stmt::Prepare(writer_, "SELECT id FROM rows WHERE sweep_id = ?1 AND params = ?2");
  if (!find.ok()) return find.status();
  find->Bind(1, sweep_id).Bind(2, FormatParams(params));
  absl::StatusOr<int64_t> row_id = internal::SelectId(
      *find, absl::StrCat("no row '", FormatParams(params), "' in sweep ", sweep_id));
  if (!row_id.ok()) return row_id.status();
  absl::StatusOr<Stmt> clear =
      Stmt::Prepare(writer_, "DELETE FROM profiles WHERE row_id = ?1 AND ncu_version = ?2");
  if (!clear.ok()) return clear.status();
  clear->Bind(1, *row_id).Bind(2, profile.ncu_version);
  if (absl::Status s = clear->Run(); !s.ok()) return s;
  absl::StatusOr<Stmt> insert = Stmt::Prepare(
      writer_,
      "INSERT INTO profiles (row_id, ncu_version, metric, unit, value, profiled_at_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!insert.ok()) return insert.status();
  for (const ProfileMetric& metric : profile.metrics) {
    insert->Reset();
    insert->Bind(1, *row_id)
        .Bind(2, profile.ncu_version)
        .Bind(3, metric.name)
        .Bind(4, metric.unit)
        .Bind(5, metric.value)
        .Bind(6, profile.profiled_at_ms);
    if (absl::Status s = insert->Run(); !s.ok()) return s;
  }
  return txn->Commit();
}

absl::StatusOr<std::map<int64_t, StoredProfile>> Store::ProfilesOfRows(
    const std::vector<int64_t>& row_ids) {
  std::map<int64_t, StoredProfile> out;
  if (row_ids.empty()) return out;
  std::lock_guard<std::mutex> lock(read_mu_);
  absl::StatusOr<ReadSnapshot> snap = ReadSnapshot::Begin(reader_);
  if (!snap.ok()) return snap.status();
  // Newest first, so the first profile seen of a row is the one kept.
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(
      reader_,
      "SELECT ncu_version, metric, unit, value, profiled_at_ms FROM profiles WHERE row_id = ?1 "
      "ORDER BY profiled_at_ms DESC, ncu_version DESC, metric");
  if (!stmt.ok()) return stmt.status();
  for (int64_t id : row_ids) {
    stmt->Reset();
    stmt->Bind(1, id);
    StoredProfile profile;
    while (true) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      const std::string version = stmt->Text(0);
      const int64_t at = stmt->Int(4);
      if (profile.metrics.empty()) {
        profile.ncu_version = version;
        profile.profiled_at_ms = at;
      } else if (version != profile.ncu_version || at != profile.profiled_at_ms) {
        break;  // an older profile of the row
      }
      profile.metrics.push_back({stmt->Text(1), stmt->Double(3), stmt->Text(2)});
    }
    if (!profile.metrics.empty()) out[id] = std::move(profile);
  }
  return out;
}

}  // namespace cutune::store
