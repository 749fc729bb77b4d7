// Test-only kernel family whose candidates misbehave on purpose: a fast correct kernel, a slow
// correct one, an illegal address, an endless loop, a launch that needs more registers than a
// block may have, and a wrong answer. It presents itself as "transpose" so the worker prepares
// transpose buffers and the trusted transpose reference; only the candidates' source is its own.
#pragma once

#include "kernels/family.h"

namespace cutune::testing {

enum FaultMode : int64_t {
  kFast = 0,
  kSlow = 1,
  kIllegalAddress = 2,
  kHang = 3,
  kTooManyRegisters = 4,
  kWrongAnswer = 5,
};

const kernels::KernelFamily& FaultFamily();

}  // namespace cutune::testing
