// The row codec, table side: a Measurement, its parameters, provenance and reference <-> the
// JSON fields of a table's winners and rows (docs/tables.md), and the time and number spelling
// tables use. Readers validate as they go and name the JSON pointer of what they refuse.
// (row_sql.h is the SQL side.) Internal to server/store.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/table_json.h"
#include "server/store/winner.h"

namespace cutune::store::internal {

// Six significant digits: more than timing noise resolves, few enough that re-measuring the
// same winner rarely changes the text. Rounding twice gives the same double, which makes
// export -> import -> export byte-identical.
double Round(double value);

// UTC with milliseconds, exactly YYYY-MM-DDTHH:MM:SS.mmmZ; ParseTime accepts only that
// canonical spelling.
std::string FormatTime(int64_t ms);
std::optional<int64_t> ParseTime(const std::string& text);

// The fields a winner and a row share (a row adds "outcome" and "measured_at").
extern const std::initializer_list<std::string_view> kMeasurementFields;

Json ParamsJson(const Params& params);
Json ReferenceJson(const Reference& r);
// A ptxas report: registers, static_shared_bytes, stack_bytes, spill_store_bytes,
// spill_load_bytes, constant_bytes.
Json ResourcesJson(const ResourceUsage& r);
// Writes kMeasurementFields of `m` into `out`.
void PutMeasurement(const Measurement& m, Json& out);
// Writes source_hash, space_version, driver_version, nvrtc_version, and timing where recorded
// (table format 7).
void PutProvenance(const Provenance& p, Json& out);

// `j` (at `path`) as parameters: an object of [A-Za-z0-9_]+ names to integers.
absl::StatusOr<Params> ParamsFromJson(const Json& j, const std::string& path);
absl::StatusOr<int64_t> GetTime(const Json& obj, const std::string& path, const char* key);
absl::StatusOr<Shape> GetShape(const Json& obj, const std::string& path);
// Reads what PutProvenance writes; a "timing" present must be "held" or "idle".
absl::StatusOr<Provenance> GetProvenance(const Json& obj, const std::string& path);
absl::StatusOr<Reference> GetReference(const Json& obj, const std::string& path);
// `r` (at `path`) as what ResourcesJson writes: every field, each an integer >= 0.
absl::StatusOr<ResourceUsage> GetResources(const Json& r, const std::string& path);
// Reads the fields PutMeasurement writes (plus "outcome" for rows).
absl::StatusOr<Measurement> GetMeasurement(const Json& obj, const std::string& path,
                                           bool has_outcome);

// What a winner and a sweep entry are both about: family, dtype, shape and provenance.
struct ProblemFields {
  std::string family;
  DType dtype = DType::kF32;
  Shape shape;
  Provenance provenance;
};
// `known_families` empty: any family.
absl::StatusOr<ProblemFields> GetProblemFields(const Json& e, const std::string& path,
                                               const std::set<std::string>& known_families);

}  // namespace cutune::store::internal
