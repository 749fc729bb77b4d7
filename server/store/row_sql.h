// The row codec, SQL side: a Measurement <-> the columns `rows` and `winners` share, in one fixed
// order, so every statement that writes or reads a measurement agrees on it. (row_json.h is the
// table side.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/sqlite.h"

namespace cutune::store::internal {

// The measurement columns, in the order BindMeasurement and ReadMeasurement use.
inline constexpr char kMeasurementCols[] =
    "params, outcome, detail, registers, static_shared_bytes, stack_bytes, spill_store_bytes, "
    "spill_load_bytes, constant_bytes, samples, median_us, min_us, rel_spread, gbps, tflops, "
    "percent_of_reference, compile_ms";
inline constexpr int kMeasurementColCount = 17;

// kMeasurementCols with each column prefixed ("r." -> "r.params, r.outcome, ...").
std::string PrefixedMeasurementCols(std::string_view prefix);
// "?first, ?first+1, ..." (`count` placeholders).
std::string Placeholders(int first, int count);

// A winner's ties <-> the `winners.ties` column: FormatParams texts joined by ';', in the order
// given; "" for none. ParseTies is DATA_LOSS for text that is not that.
std::string FormatTies(const std::vector<Params>& ties);
absl::StatusOr<std::vector<Params>> ParseTies(std::string_view text);

// Binds the measurement to parameters first .. first + kMeasurementColCount - 1.
void BindMeasurement(Stmt& stmt, int first, const Measurement& m);
// Reads the measurement from columns first ..; DATA_LOSS for unreadable parameters or outcome.
absl::StatusOr<Measurement> ReadMeasurement(const Stmt& stmt, int first);

}  // namespace cutune::store::internal
