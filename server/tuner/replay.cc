#include "server/tuner/replay.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cutune::tuner {

absl::StatusOr<RecordedSweep> LoadRecordedSweep(const std::string& path,
                                                const kernels::Space* space) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read recorded sweep ", path));
  RecordedSweep sweep;
  std::vector<std::string> names;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // written on Windows
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = absl::StrSplit(line, ',');
    auto bad = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", what));
    };
    if (names.empty()) {
      if (fields.size() < 2 || fields.back() != "time_us") {
        return bad("the header names the parameters, then time_us");
      }
      names.assign(fields.begin(), fields.end() - 1);
      continue;
    }
    if (fields.size() != names.size() + 1) {
      return bad(absl::StrCat(fields.size(), " fields, expected ", names.size() + 1));
    }
    Params params;
    for (size_t i = 0; i < names.size(); ++i) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(fields[i], &value))
        return bad(absl::StrCat(names[i], " is not an integer"));
      params[names[i]] = value;
    }
    if (space != nullptr) params = space->Complete(std::move(params));
    std::optional<double> time;
    if (!fields.back().empty()) {
      double t = 0;
      if (!absl::SimpleAtod(fields.back(), &t) || t <= 0)
        return bad("time_us is not a positive number");
      time = t;
      if (!sweep.best_us || t < *sweep.best_us) sweep.best_us = t;
    }
    if (!sweep.times.emplace(FormatParams(params), time).second) return bad("a repeated candidate");
  }
  if (names.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no header"));
  return sweep;
}

ValidCandidates RecordedSubset(const ValidCandidates& valid, const RecordedSweep& recorded) {
  ValidCandidates out;
  out.invalid = valid.invalid;
  for (const Params& params : valid.candidates) {
    if (recorded.times.contains(FormatParams(params))) out.candidates.push_back(params);
  }
  return out;
}

absl::StatusOr<ReplayResult> Replay(const kernels::Space& space, const ValidCandidates& valid,
                                    const RecordedSweep& recorded, const std::string& strategy,
                                    uint64_t seed, int64_t budget, size_t window,
                                    const std::vector<Params>& start) {
  if (window == 0) return absl::InvalidArgumentError("the proposal window must be at least 1");
  auto search = MakeSearch(space, valid, strategy, seed, budget, start);
  if (!search.ok()) return search.status();
  ReplayResult result;
  std::deque<Params> pending;
  // As the sweep does: keep `window` proposals outstanding, hear one result, propose again.
  auto refill = [&] {
    while (pending.size() < window &&
           (budget <= 0 || result.evaluations + static_cast<int64_t>(pending.size()) < budget)) {
      std::vector<Params> next = (*search)->Next(1);
      if (next.empty()) return;
      pending.push_back(std::move(next.front()));
    }
  };
  refill();
  while (!pending.empty()) {
    const Params params = std::move(pending.front());
    pending.pop_front();
    auto found = recorded.times.find(FormatParams(params));
    if (found == recorded.times.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the recording has no time for ", FormatParams(params),
                       " (recorded from another version of the space?)"));
    }
    ++result.evaluations;
    if (found->second && (!result.best_us || *found->second < *result.best_us)) {
      result.best_us = found->second;
    }
    (*search)->Tell(params, found->second);
    refill();
  }
  return result;
}

}  // namespace cutune::tuner
