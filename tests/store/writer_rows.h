// The synthetic sweep store_writer records and crash_test checks: every field of candidate i is
// a function of i, so a torn or mixed-up row is detectable.
#pragma once

#include <string>

#include "server/core/types.h"
#include "server/store/store.h"

namespace cutune::store::writer_rows {

inline SweepKey Key() {
  return {{"NVIDIA H200", "GPU-crash", 9, 0, 132, int64_t{150} << 30},
          "transpose",
          {4096, 4096},
          DType::kF32};
}

inline Provenance Prov() { return {13000, "13.0", "crash-hash", 1, ""}; }

inline Measurement Candidate(int i) {
  Measurement m;
  m.params = {{"idx", i}, {"tile", int64_t{8} << (i % 5)}};
  m.detail = "candidate " + std::to_string(i);
  if (i % 10 == 9) {
    m.outcome = Outcome::kPruned;
    return m;
  }
  m.outcome = Outcome::kOk;
  m.resources.registers = 16 + i % 64;
  m.timing.samples = 10 + i % 5;
  m.timing.median_us = 10.0 + (i * 7919 % 1000) / 10.0;
  m.timing.min_us = m.timing.median_us * 0.99;
  m.timing.rel_spread = 0.001 * (i % 7);
  m.gbps = 1000.0 / m.timing.median_us;
  m.percent_of_reference = 500.0 / m.timing.median_us;
  m.compile_ms = i;
  return m;
}

}  // namespace cutune::store::writer_rows
