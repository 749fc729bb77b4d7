// Whether a candidate's output is right: the verdict on what the comparison kernel
// (kernels/support.cu, cutune_compare) accumulated over the output and the trusted reference.
// Exact families (transpose) must match bit for bit; the others (matmul) within a relative error
// bound; a non-finite or unwritten element fails any family. Pure, so a test checks it without a
// GPU; the worker asks it after every checked run.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/family.h"

namespace cutune::tuner {

// The comparison kernel's sums over all output elements.
struct OutputComparison {
  double squared_error = 0;      // sum of (out - ref)^2 over the finite elements
  double squared_reference = 0;  // sum of ref^2 over the finite elements
  float max_abs_error = 0;       // largest |out - ref|; at least infinity where one is not finite
  uint64_t nonfinite = 0;        // elements where out or ref is NaN or infinite (unwritten: NaN)
};

struct Verdict {
  bool correct = false;
  double rel_error = 0;  // ||out - ref||_2 / ||ref||_2, or ||out - ref||_2 where ref is all zero
  std::string detail;    // why the output is wrong; empty when correct
};

Verdict JudgeOutput(const kernels::Verification& rule, const OutputComparison& comparison);

}  // namespace cutune::tuner
