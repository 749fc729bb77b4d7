// Tuning table diff: two tables compared per key, and the text rendering (the CLI prints the
// JSON one from the TableDiff, client/cli/table_commands.cc).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/strings.h"
#include "server/core/ties.h"
#include "server/store/row_json.h"
#include "server/store/tables.h"

namespace cutune::store {

using internal::Round;

std::string_view TableChangeName(TableDiffEntry::Change change) {
  switch (change) {
    case TableDiffEntry::Change::kSame:
      return "same";
    case TableDiffEntry::Change::kTie:
      return "tie";
    case TableDiffEntry::Change::kWinnerChanged:
      return "winner_changed";
    case TableDiffEntry::Change::kOnlyInA:
      return "only_in_a";
    case TableDiffEntry::Change::kOnlyInB:
      return "only_in_b";
  }
  return "?";
}

namespace {

bool Lists(const Winner& w, const Params& params) {
  return std::find(w.ties.begin(), w.ties.end(), params) != w.ties.end();
}

// Why B's winner, another configuration than A's, is a tie with it; kNone when it is not.
TableDiffEntry::TieBasis TieBetween(const Winner& a, const Winner& b) {
  if (Lists(a, b.measurement.params)) return TableDiffEntry::TieBasis::kInTiesOfA;
  if (Lists(b, a.measurement.params)) return TableDiffEntry::TieBasis::kInTiesOfB;
  if (Tied(a.measurement.timing, b.measurement.timing)) {
    return TableDiffEntry::TieBasis::kTimesTied;
  }
  return TableDiffEntry::TieBasis::kNone;
}

}  // namespace

absl::StatusOr<TableDiff> DiffTables(std::string_view json_a, std::string_view json_b) {
  absl::StatusOr<ImportBatch> a = ParseTable(json_a, {});
  if (!a.ok()) return absl::Status(a.status().code(), absl::StrCat("A: ", a.status().message()));
  absl::StatusOr<ImportBatch> b = ParseTable(json_b, {});
  if (!b.ok()) return absl::Status(b.status().code(), absl::StrCat("B: ", b.status().message()));

  using Key = std::tuple<std::string, std::string, std::string, Shape>;
  // Per key, the newest winner (then the fastest) over all source hashes.
  auto index = [](const ImportBatch& batch) {
    std::map<Key, const Winner*> out;
    for (const Winner& w : batch.winners) {
      Key key{w.device.name, w.family, std::string(DTypeName(w.dtype)), w.shape};
      const Winner*& slot = out[key];
      if (slot == nullptr || w.measured_at_ms > slot->measured_at_ms ||
          (w.measured_at_ms == slot->measured_at_ms &&
           w.measurement.timing.median_us < slot->measurement.timing.median_us)) {
        slot = &w;
      }
    }
    return out;
  };
  std::map<Key, const Winner*> in_a = index(*a);
  std::map<Key, const Winner*> in_b = index(*b);
  std::set<Key> keys;
  for (const auto& [key, w] : in_a) keys.insert(key);
  for (const auto& [key, w] : in_b) keys.insert(key);

  TableDiff diff;
  for (const Key& key : keys) {
    TableDiffEntry e;
    const Winner* wa = in_a.contains(key) ? in_a[key] : nullptr;
    const Winner* wb = in_b.contains(key) ? in_b[key] : nullptr;
    const Winner* any = wa != nullptr ? wa : wb;
    e.device_model = any->device.name;
    e.family = any->family;
    e.dtype = any->dtype;
    e.shape = any->shape;
    if (wa != nullptr) {
      e.params_a = wa->measurement.params;
      e.time_a_us = wa->measurement.timing.median_us;
      e.timing_a = wa->provenance.timing;
    }
    if (wb != nullptr) {
      e.params_b = wb->measurement.params;
      e.time_b_us = wb->measurement.timing.median_us;
      e.timing_b = wb->provenance.timing;
    }
    if (wa == nullptr) {
      e.change = TableDiffEntry::Change::kOnlyInB;
    } else if (wb == nullptr) {
      e.change = TableDiffEntry::Change::kOnlyInA;
    } else {
      if (wa->measurement.params == wb->measurement.params) {
        e.change = TableDiffEntry::Change::kSame;
      } else {
        e.tie_basis = TieBetween(*wa, *wb);
        e.change = e.tie_basis == TableDiffEntry::TieBasis::kNone
                       ? TableDiffEntry::Change::kWinnerChanged
                       : TableDiffEntry::Change::kTie;
      }
      // Six significant digits, like the times it comes from (reports print it as it is).
      e.time_change_percent = Round((e.time_b_us - e.time_a_us) / e.time_a_us * 100.0);
      e.source_hash_changed = wa->provenance.source_hash != wb->provenance.source_hash;
    }
    diff.entries.push_back(std::move(e));
  }
  return diff;
}

bool TableDiff::HasChanges() const {
  return std::any_of(entries.begin(), entries.end(), [](const TableDiffEntry& e) {
    return e.change != TableDiffEntry::Change::kSame && e.change != TableDiffEntry::Change::kTie;
  });
}

std::vector<const TableDiffEntry*> TableDiff::Regressions(double threshold_percent) const {
  std::vector<const TableDiffEntry*> out;
  for (const TableDiffEntry& e : entries) {
    if (e.params_a && e.params_b && !e.TimingChanged() &&
        e.time_change_percent > threshold_percent) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string TableDiff::ToText() const {
  int same = 0, tied = 0, changed = 0, only_a = 0, only_b = 0;
  for (const TableDiffEntry& e : entries) {
    switch (e.change) {
      case TableDiffEntry::Change::kSame:
        ++same;
        break;
      case TableDiffEntry::Change::kTie:
        ++tied;
        break;
      case TableDiffEntry::Change::kWinnerChanged:
        ++changed;
        break;
      case TableDiffEntry::Change::kOnlyInA:
        ++only_a;
        break;
      case TableDiffEntry::Change::kOnlyInB:
        ++only_b;
        break;
    }
  }
  std::string out =
      absl::StrCat(entries.size(), " keys: ", same, " same winner, ", tied, " tied, ", changed,
                   " winner changed, ", only_a, " only in A, ", only_b, " only in B\n");
  auto basis = [](TableDiffEntry::TieBasis b) -> std::string_view {
    switch (b) {
      case TableDiffEntry::TieBasis::kNone:
        return "";
      case TableDiffEntry::TieBasis::kInTiesOfA:
        return " | in A's ties";
      case TableDiffEntry::TieBasis::kInTiesOfB:
        return " | in B's ties";
      case TableDiffEntry::TieBasis::kTimesTied:
        return " | times tied";
    }
    return "";
  };
  auto params = [](const std::optional<Params>& p) { return p ? FormatParams(*p) : "-"; };
  auto timing = [](const std::string& t) { return t.empty() ? std::string("unrecorded") : t; };
  for (const TableDiffEntry& e : entries) {
    absl::StrAppend(&out, e.device_model, " | ", e.family, " ", ToAbsl(DTypeName(e.dtype)), " ",
                    FormatShape(e.shape), " | ", ToAbsl(TableChangeName(e.change)), " | ");
    switch (e.change) {
      case TableDiffEntry::Change::kOnlyInA:
        absl::StrAppend(&out, params(e.params_a), " ", absl::StrFormat("%.4g us", e.time_a_us));
        break;
      case TableDiffEntry::Change::kOnlyInB:
        absl::StrAppend(&out, params(e.params_b), " ", absl::StrFormat("%.4g us", e.time_b_us));
        break;
      default:
        absl::StrAppend(
            &out, params(e.params_a),
            e.change == TableDiffEntry::Change::kSame ? ""
                                                      : absl::StrCat(" -> ", params(e.params_b)),
            absl::StrFormat(" | %.4g -> %.4g us (%+.2f%%)", e.time_a_us, e.time_b_us,
                            e.time_change_percent),
            ToAbsl(basis(e.tie_basis)), e.source_hash_changed ? " | source changed" : "",
            e.TimingChanged() ? absl::StrCat(" | timing ", timing(e.timing_a), " -> ",
                                             timing(e.timing_b), ": times not compared")
                              : "");
    }
    out += "\n";
  }
  return out;
}

}  // namespace cutune::store
