// The row codec, SQL side: binding and reading the measurement columns.
#include "server/store/row_sql.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/core/strings.h"

namespace cutune::store::internal {

std::string PrefixedMeasurementCols(std::string_view prefix) {
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

std::string FormatTies(const std::vector<Params>& ties) {
  return absl::StrJoin(ties, ";", [](std::string* out, const Params& p) {
    absl::StrAppend(out, FormatParams(p));
  });
}

absl::StatusOr<std::vector<Params>> ParseTies(std::string_view text) {
  std::vector<Params> ties;
  if (text.empty()) return ties;
  for (absl::string_view item : absl::StrSplit(ToAbsl(text), ';')) {
    absl::StatusOr<Params> params = ParseParams(ToStd(item));
    // An empty item would be a configuration without parameters: not something a sweep ties.
    if (!params.ok() || params->empty()) {
      return absl::DataLossError(absl::StrCat("stored winner has unreadable ties '",
                                              std::string(text.substr(0, 200)), "'"));
    }
    ties.push_back(*std::move(params));
  }
  return ties;
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

}  // namespace cutune::store::internal
