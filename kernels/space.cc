// Search space: size, mixed-radix decoding, constraint checks and narrowing.
#include "kernels/space.h"

#include <algorithm>
#include <set>
#include <thread>
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

// The valid indices in [begin, end): one Params advanced like an odometer (the last parameter is
// the lowest digit, as in At), so the walk allocates nothing per combination.
std::vector<uint64_t> ValidIndices(const Space& space, uint64_t begin, uint64_t end) {
  std::vector<uint64_t> valid;
  const std::vector<Parameter>& parameters = space.parameters();
  Params params = space.At(begin);
  std::vector<int64_t*> slots;
  for (const Parameter& parameter : parameters) slots.push_back(&params[parameter.name]);
  std::vector<size_t> digits(parameters.size(), 0);
  for (size_t i = parameters.size(), rest = begin; i-- > 0;) {
    digits[i] = rest % parameters[i].values.size();
    rest /= parameters[i].values.size();
  }
  for (uint64_t index = begin; index < end; ++index) {
    if (!space.Violation(params)) valid.push_back(index);
    for (size_t i = parameters.size(); i-- > 0;) {
      const std::vector<int64_t>& values = parameters[i].values;
      if (++digits[i] < values.size()) {
        *slots[i] = values[digits[i]];
        break;
      }
      digits[i] = 0;
      *slots[i] = values[0];
    }
  }
  return valid;
}

}  // namespace

void Space::ForEachValid(const std::function<void(uint64_t index, const Params&)>& fn) const {
  const uint64_t size = CartesianSize();
  if (size == 0) return;
  // Large spaces (matmul's: 17.7 million combinations, 1822 valid) are walked in slices on
  // several threads; fn still sees the valid candidates in index order, on this thread.
  constexpr uint64_t kSlice = uint64_t{1} << 20;
  const uint64_t threads =
      std::clamp<uint64_t>(std::min<uint64_t>(std::thread::hardware_concurrency(), 16), 1,
                           (size + kSlice - 1) / kSlice);
  std::vector<std::vector<uint64_t>> valid(threads);
  if (threads == 1) {
    valid[0] = ValidIndices(*this, 0, size);
  } else {
    std::vector<std::thread> workers;
    for (uint64_t t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        valid[t] = ValidIndices(*this, size * t / threads, size * (t + 1) / threads);
      });
    }
    for (std::thread& worker : workers) worker.join();
  }
  for (const std::vector<uint64_t>& slice : valid) {
    for (uint64_t index : slice) fn(index, At(index));
  }
}

}  // namespace cutune::kernels
