// Search space: size, mixed-radix decoding, constraint checks and narrowing.
#include "kernels/space.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/strings.h"

namespace cutune::kernels {

Space::Space(std::vector<Parameter> parameters, std::vector<Constraint> constraints)
    : parameters_(std::move(parameters)), constraints_(std::move(constraints)) {}

uint64_t Space::CartesianSize() const {
  if (parameters_.empty()) return 0;
  uint64_t size = 1;
  for (const Parameter& parameter : parameters_) size *= parameter.values.size();
  return size;
}

Params Space::At(uint64_t index) const {
  Params params;
  // Last parameter is the lowest digit, so the first one varies slowest.
  for (auto it = parameters_.rbegin(); it != parameters_.rend(); ++it) {
    const uint64_t radix = it->values.size();
    if (radix == 0) continue;
    params[it->name] = it->values[index % radix];
    index /= radix;
  }
  return params;
}

std::optional<std::string> Space::Violation(const Params& params) const {
  for (const Constraint& constraint : constraints_) {
    if (!constraint.holds(params)) return constraint.text;
  }
  return std::nullopt;
}

absl::Status Space::Check(const Params& params, bool strict) const {
  std::set<std::string> known;
  for (const Parameter& parameter : parameters_) {
    known.insert(parameter.name);
    auto found = params.find(parameter.name);
    if (found == params.end()) {
      if (parameter.absent) continue;
      return absl::InvalidArgumentError(absl::StrCat("missing parameter '", parameter.name, "'"));
    }
    if (strict && std::find(parameter.values.begin(), parameter.values.end(), found->second) ==
                      parameter.values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", parameter.name, "=", found->second,
                       " is not in the space (values: ", absl::StrJoin(parameter.values, ","),
                       ")"));
    }
    const bool positive = std::all_of(parameter.values.begin(), parameter.values.end(),
                                      [](int64_t v) { return v > 0; });
    if (positive && found->second <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", parameter.name, "=",
                                                     found->second, " must be positive (values: ",
                                                     absl::StrJoin(parameter.values, ","), ")"));
    }
  }
  for (const auto& [name, value] : params) {
    if (!known.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name,
                                                     "' (known: ", absl::StrJoin(known, ","),
                                                     ")"));
    }
  }
  return absl::OkStatus();
}

Params Space::Complete(Params params) const {
  for (const Parameter& p : parameters_) {
    if (p.absent && !params.contains(p.name)) params[p.name] = *p.absent;
  }
  return params;
}

absl::Status Space::Admit(const Params& params, bool strict) const {
  if (absl::Status s = Check(params, strict); !s.ok()) return s;
  if (std::optional<std::string> why = Violation(params)) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate ", FormatParams(params), " breaks a constraint: ", *why));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Params>> Space::AdmitCandidates(
    const std::vector<Params>& written) const {
  std::set<Params> as_written, kept;
  std::vector<Params> out;
  for (size_t i = 0; i < written.size(); ++i) {
    if (!as_written.insert(written[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("candidates[", i, "] repeats ", Quoted(FormatParams(written[i]))));
    }
    Params params = Complete(written[i]);
    if (absl::Status s = Admit(params, /*strict=*/true); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("candidates[", i, "]: ", s.message()));
    }
    if (kept.insert(params).second) out.push_back(std::move(params));
  }
  return out;
}

absl::StatusOr<Space> Space::Narrow(
    const std::map<std::string, std::vector<int64_t>>& values) const {
  std::vector<Parameter> narrowed = parameters_;
  for (const auto& [name, wanted] : values) {
    auto parameter = std::find_if(narrowed.begin(), narrowed.end(),
                                  [&](const Parameter& p) { return p.name == name; });
    if (parameter == narrowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot narrow unknown parameter ", Quoted(name)));
    }
    if (wanted.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no values given for '", name, "'"));
    }
    std::vector<int64_t> kept;
    for (int64_t value : wanted) {
      if (std::find(parameter->values.begin(), parameter->values.end(), value) ==
          parameter->values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, "=", value, " is not in the space (values: ",
                         absl::StrJoin(parameter->values, ","), ")"));
      }
      if (std::find(kept.begin(), kept.end(), value) == kept.end()) kept.push_back(value);
    }
    parameter->values = std::move(kept);
  }
  return Space(std::move(narrowed), constraints_);
}

namespace {

// The depth-first walk of ForEachValid: parameter `depth` takes each of its values in order (the
// first parameter varies slowest, so candidates come in index order), and a branch ends at the
// first constraint due at that depth that fails.
class ValidWalk {
 public:
  ValidWalk(const Space& space, const std::function<void(uint64_t, const Params&)>& fn)
      : space_(space), fn_(fn), params_(space.At(0)), due_(space.parameters().size()) {
    const std::vector<Parameter>& parameters = space.parameters();
    std::map<std::string_view, size_t> position;
    for (size_t i = 0; i < parameters.size(); ++i) {
      position[parameters[i].name] = i;
      slots_.push_back(&params_[parameters[i].name]);
    }
    stride_.assign(parameters.size(), 1);
    for (size_t i = parameters.size() - 1; i-- > 0;) {
      stride_[i] = stride_[i + 1] * parameters[i + 1].values.size();
    }
    // A constraint is due once the last parameter it reads is set; one that names no parameter
    // of the space, or none at all, once all of them are.
    for (const Constraint& constraint : space.constraints()) {
      size_t last = constraint.reads.empty() ? parameters.size() - 1 : 0;
      for (const std::string& name : constraint.reads) {
        auto found = position.find(name);
        last = std::max(last, found == position.end() ? parameters.size() - 1 : found->second);
      }
      due_[last].push_back(&constraint);
    }
  }

  void Visit(size_t depth, uint64_t index) {
    const std::vector<int64_t>& values = space_.parameters()[depth].values;
    const bool last = depth + 1 == slots_.size();
    for (size_t k = 0; k < values.size(); ++k) {
      *slots_[depth] = values[k];
      if (!Holds(due_[depth])) continue;
      const uint64_t at = index + k * stride_[depth];
      if (!last) {
        Visit(depth + 1, at);
      } else if (!space_.Violation(params_)) {  // every rule again, whatever `reads` said
        fn_(at, params_);
      }
    }
  }

 private:
  bool Holds(const std::vector<const Constraint*>& constraints) const {
    return std::all_of(constraints.begin(), constraints.end(),
                       [&](const Constraint* c) { return c->holds(params_); });
  }

  const Space& space_;
  const std::function<void(uint64_t, const Params&)>& fn_;
  Params params_;                // a parameter not yet set holds the value it held last
  std::vector<int64_t*> slots_;  // params_' value of each parameter, in order
  std::vector<uint64_t> stride_;
  std::vector<std::vector<const Constraint*>> due_;  // by the depth they can be checked at
};

}  // namespace

void Space::ForEachValid(const std::function<void(uint64_t index, const Params&)>& fn) const {
  if (CartesianSize() == 0) return;
  ValidWalk(*this, fn).Visit(0, 0);
}

}  // namespace cutune::kernels
