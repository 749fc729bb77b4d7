// A search space: named parameters with value lists, and constraints between them. Its size is
// known without expanding it; candidate i is decoded from its index (mixed radix), so strategies
// can sample without materialising the space.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/types.h"

namespace cutune::kernels {

struct Parameter {
  std::string name;
  std::vector<int64_t> values;
  std::string help;
  // For a parameter added to a space after configurations were recorded without it (tables,
  // stored winners): the value such a configuration has, which must be what the kernel and the
  // family's Get() make of a missing one (its define's default, 0). A configuration may then omit
  // the parameter; without it, every parameter must be present.
  std::optional<int64_t> absent = std::nullopt;
};

// A rule every valid candidate obeys; `text` is shown when one does not ("tile % rows == 0").
// `reads` names the parameters `holds` reads: the enumeration checks the rule as soon as they are
// set and skips every combination of the parameters after them that it rules out (empty: once
// every parameter is set). A name left out makes the rule see another value there and can drop
// valid candidates (never admit an invalid one); DefaultSpaceTest checks the built-in spaces.
struct Constraint {
  std::string text;
  std::vector<std::string> reads;
  std::function<bool(const Params&)> holds;
};

class Space {
 public:
  Space() = default;
  Space(std::vector<Parameter> parameters, std::vector<Constraint> constraints);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }

  // Product of the value counts: every combination, valid or not.
  uint64_t CartesianSize() const;
  // Candidate `index` in [0, CartesianSize()), the first parameter varying slowest.
  Params At(uint64_t index) const;
  // The text of the first constraint `params` breaks, or nullopt when it obeys all.
  std::optional<std::string> Violation(const Params& params) const;
  // INVALID_ARGUMENT when a parameter is missing (and has no `absent` value), unknown, or
  // (strict) not among its values.
  // Not strict, a value outside the list must still be positive where every listed value is:
  // constraints and launch geometry divide by such parameters.
  absl::Status Check(const Params& params, bool strict) const;
  // `params` with every missing parameter that has an `absent` value set to it: a configuration
  // recorded before those parameters existed, named as this space's candidates are.
  Params Complete(Params params) const;
  // Whether `params` is a candidate of this space: Check, then the constraints
  // (INVALID_ARGUMENT "candidate <params> breaks a constraint: <text>"). The constraints run only
  // on parameters Check accepted, since they divide by parameter values.
  absl::Status Admit(const Params& params, bool strict) const;
  // A list of configurations given from outside (a sweep request's candidates), each Complete
  // and Admitted (strict), in this space's one spelling and in order: a configuration given
  // twice as written is INVALID_ARGUMENT ("candidates[i] repeats ..."), one given in two
  // spellings (one written before a parameter was added) is kept once.
  absl::StatusOr<std::vector<Params>> AdmitCandidates(const std::vector<Params>& written) const;

  // The same space with some parameters restricted to the given values. Unknown names and values
  // outside the parameter's list are INVALID_ARGUMENT.
  absl::StatusOr<Space> Narrow(const std::map<std::string, std::vector<int64_t>>& values) const;

  // Calls fn for every valid candidate, in index order, without storing the space: a depth-first
  // walk over the parameters in order that checks each constraint once its `reads` are set
  // (matmul's 17.7 million combinations in 59 thousand checks), and every constraint again
  // before fn sees a candidate. Constraints must be pure.
  void ForEachValid(const std::function<void(uint64_t index, const Params&)>& fn) const;

 private:
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
};

}  // namespace cutune::kernels
