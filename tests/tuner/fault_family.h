// Test-only kernel family whose candidates misbehave on purpose: a fast correct kernel, a slow
// correct one, an illegal address, an endless loop, a launch that needs more registers than a
// block may have, a wrong answer, and one right on its module's first launch only. It presents itself as "transpose" so the worker prepares
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
  // Right on a module's first launch only (a counter in module memory): the check after the
  // timed launches must catch it.
  kWrongAfterFirstLaunch = 6,
};

const kernels::KernelFamily& FaultFamily();

}  // namespace cutune::testing
