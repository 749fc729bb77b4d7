#include "server/tuner/verification.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace cutune::tuner {

Verdict JudgeOutput(const kernels::Verification& rule, const OutputComparison& c) {
  Verdict verdict;
  verdict.rel_error = c.squared_reference > 0 ? std::sqrt(c.squared_error / c.squared_reference)
                                              : std::sqrt(c.squared_error);
  // Written so that a NaN sum fails: every comparison with NaN is false.
  verdict.correct = c.nonfinite == 0 && (rule.exact ? c.squared_error == 0 && c.max_abs_error == 0
                                                    : verdict.rel_error <= rule.max_rel_error);
  if (!verdict.correct) {
    verdict.detail = absl::StrFormat(
        "output differs from the reference: %d non-finite or unwritten elements, max |error| "
        "%.3g, relative error %.3g (allowed %s)",
        c.nonfinite, c.max_abs_error, verdict.rel_error,
        rule.exact ? "exact" : absl::StrFormat("%.1g", rule.max_rel_error));
  }
  return verdict;
}

}  // namespace cutune::tuner
