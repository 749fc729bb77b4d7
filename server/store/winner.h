// A stored winner as plain data: the best configuration known for one key (device model,
// family, source hash, shape, dtype), with the device model and reference it was measured
// against. Below store.h so that the lookup ladder (ladder.h) can rank winners without the
// store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/core/types.h"

namespace cutune::store {

struct DeviceModel {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory_bytes = 0;
};

struct Reference {
  std::string name;  // "device copy", "cuBLAS SGEMM"
  double time_us = 0;
};

// The best configuration known for one key.
struct Winner {
  DeviceModel device;
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
  Provenance provenance;
  Measurement measurement;
  Reference reference;
  int64_t measured_at_ms = 0;
  std::optional<int64_t> sweep_id;  // empty when imported from a table
  // The configurations tied with it (server/core/ties.h) when it was measured, itself excluded,
  // in CanonicalBefore order; empty for a winner stored before ties were recorded.
  std::vector<Params> ties;
};

}  // namespace cutune::store
