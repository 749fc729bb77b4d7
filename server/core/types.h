// Vocabulary shared by every part of cutune: problems, parameters, candidate outcomes and the
// figures measured for them. Plain data; behaviour lives with the component that owns it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cutune {

// One candidate's parameter values, ordered by name so that printing, hashing and storing them
// is deterministic.
using Params = std::map<std::string, int64_t, std::less<>>;  // less<>: lookups by string_view

// Problem shape: transpose {rows, cols}; matmul {M, N, K}.
using Shape = std::vector<int64_t>;

enum class DType { kF32 };

std::string_view DTypeName(DType dtype);
absl::StatusOr<DType> ParseDType(std::string_view text);
int DTypeBytes(DType dtype);

// A family applied to one shape and element type: the key a tuning answers.
struct Problem {
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
};

// "8192x8192" <-> {8192, 8192}.
std::string FormatShape(const Shape& shape);
absl::StatusOr<Shape> ParseShape(std::string_view text);

// "tile=32,pad=1" (ordered by name).
std::string FormatParams(const Params& params);
absl::StatusOr<Params> ParseParams(std::string_view text);

// The closed set of ways a candidate can end. Stored by name; never renumber.
enum class Outcome {
  kOk = 0,              // verified and timed
  kPruned = 1,          // rejected before running: constraint or device limit (reason stored)
  kCompileFailed = 2,   // NVRTC rejected the source (log stored)
  kOutOfResources = 3,  // launch refused (CUDA error 701 and kin); context still healthy
  kFault = 4,           // sticky error (illegal address, ...): the worker process was replaced
  kTimeout = 5,         // ran past its time limit; the worker was killed
  kWrongAnswer = 6,     // output differs from the reference; its time never counts
};
inline constexpr std::array<Outcome, 7> kAllOutcomes = {
    Outcome::kOk,    Outcome::kPruned,  Outcome::kCompileFailed, Outcome::kOutOfResources,
    Outcome::kFault, Outcome::kTimeout, Outcome::kWrongAnswer};

std::string_view OutcomeName(Outcome outcome);  // "ok", "pruned", "compile_failed", ...
absl::StatusOr<Outcome> ParseOutcome(std::string_view name);

// What ptxas reports for one compiled kernel.
struct ResourceUsage {
  int registers = 0;
  int static_shared_bytes = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int constant_bytes = 0;
};

// Whether ptxas put some of a configuration's registers in local memory (zeros, as for a report
// not known, say no).
inline bool Spills(const ResourceUsage& r) {
  return r.spill_store_bytes > 0 || r.spill_load_bytes > 0;
}

struct LaunchGeometry {
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;

  uint64_t ThreadsPerBlock() const { return uint64_t{block[0]} * block[1] * block[2]; }
};

// Repeated samples of one candidate, in microseconds.
struct TimingStats {
  int samples = 0;
  double median_us = 0;
  double min_us = 0;
  double rel_spread = 0;  // relative standard deviation (stdev / mean) of the samples
};

// The GPU a measurement was taken on. `name` is the model ("NVIDIA H200"): winners are kept per
// model; `uuid` names the individual card.
struct DeviceDescription {
  std::string name;
  std::string uuid;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory_bytes = 0;
};

// Where a result came from. A lookup whose stored provenance differs from the daemon's current
// one reports it as stale instead of silently reusing it.
struct Provenance {
  int driver_version = 0;        // cuDriverGetVersion, e.g. 13000
  std::string nvrtc_version;     // "13.0"
  std::string source_hash;       // SHA-256 of the family's .cu source
  int space_version = 0;
  // How each sample was started (worker::Executor::Time): kTimingHeld or kTimingIdle; empty for
  // a result recorded before cutune said (store schema < 8, table format < 7). Times of two
  // methods are not comparable (bench/results/unseen-shapes.md, section 33), and a sweep is
  // not resumed under the other.
  std::string timing;
};
inline constexpr std::string_view kTimingHeld = "held";
inline constexpr std::string_view kTimingIdle = "idle";

// One candidate's row: kept for every candidate, whatever its outcome.
struct Measurement {
  Params params;
  Outcome outcome = Outcome::kOk;
  std::string detail;           // rejection reason, compiler log excerpt, verification error
  ResourceUsage resources;
  TimingStats timing;           // valid when outcome == kOk
  double gbps = 0;              // bytes moved / median time
  double tflops = 0;            // flops / median time
  double percent_of_reference = 0;
  double compile_ms = 0;
};

}  // namespace cutune
