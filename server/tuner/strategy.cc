#include "server/tuner/strategy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/strings.h"

namespace cutune::tuner {
namespace {

// Proposes a fixed list in order, skipping candidates it was told about before reaching them.
class FixedOrder final : public Search {
 public:
  FixedOrder(std::vector<Params> order, int64_t invalid) : order_(std::move(order)) {
    invalid_ = invalid;
  }

  std::vector<Params> Next(size_t n) override {
    std::vector<Params> out;
    while (out.size() < n && next_ < order_.size()) {
      const Params& params = order_[next_++];
      if (!told_.count(FormatParams(params))) out.push_back(params);
    }
    return out;
  }
  void Tell(const Params& params, std::optional<double>) override {
    told_.insert(FormatParams(params));
  }
  int64_t remaining() const override {
    int64_t left = 0;
    for (size_t i = next_; i < order_.size(); ++i) left += !told_.count(FormatParams(order_[i]));
    return left;
  }
  bool adaptive() const override { return false; }

 private:
  std::vector<Params> order_;
  size_t next_ = 0;
  std::set<std::string> told_;
};

// The valid candidates of a space as positions of each parameter's value in its list, so that
// the distance between two is the number of parameters in which they differ; and an index from
// FormatParams to position. Shared by the searches that walk neighbourhoods.
class CandidateCodes {
 public:
  CandidateCodes(const kernels::Space& space, const std::vector<Params>& candidates) {
    const std::vector<kernels::Parameter>& parameters = space.parameters();
    for (const Params& params : candidates) {
      std::vector<uint16_t> code;
      code.reserve(parameters.size());
      for (const kernels::Parameter& parameter : parameters) {
        const auto& values = parameter.values;
        const auto at = std::find(values.begin(), values.end(), params.at(parameter.name));
        code.push_back(static_cast<uint16_t>(at - values.begin()));
      }
      index_.emplace(FormatParams(params), codes_.size());
      codes_.push_back(std::move(code));
    }
  }
  // The position of `params` among the candidates, if it is one.
  std::optional<size_t> Find(const Params& params) const {
    auto found = index_.find(FormatParams(params));
    if (found == index_.end()) return std::nullopt;
    return found->second;
  }
  int Distance(size_t a, size_t b) const {
    int d = 0;
    for (size_t k = 0; k < codes_[a].size(); ++k) d += codes_[a][k] != codes_[b][k];
    return d;
  }

 private:
  std::vector<std::vector<uint16_t>> codes_;  // per candidate: each parameter's value position
  std::unordered_map<std::string, size_t> index_;
};

// Random start, then the neighbourhood of the best candidates found so far (see MakeSearch).
// Candidates are compared by the position of each parameter's value in its list, so the distance
// between two is the number of parameters in which they differ.
class LocalSearch final : public Search {
 public:
  // Anchors tried in order of their time before falling back to the random order.
  static constexpr size_t kAnchors = 2;

  LocalSearch(const kernels::Space& space, const ValidCandidates& valid_candidates, uint64_t seed,
              int64_t budget)
      : rng_(seed),
        candidates_(valid_candidates.candidates),
        codes_(space, valid_candidates.candidates) {
    const int64_t valid = static_cast<int64_t>(candidates_.size());
    invalid_ = valid_candidates.invalid;
    // An explicit budget counts proposals; the default share of the space counts candidates
    // measured before (a resumed sweep) too.
    count_told_ = budget <= 0;
    budget_ =
        budget > 0
            ? std::min(budget, valid)
            : std::min<int64_t>(
                  valid, std::max<int64_t>(
                             1, std::llround(std::ceil(kLocalSearchDefaultFraction * valid))));
    initial_ = std::max<int64_t>(1, budget_ * 3 / 10);
    order_.resize(candidates_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::shuffle(order_.begin(), order_.end(), rng_);
    state_.assign(candidates_.size(), State::kUnseen);
  }

  std::vector<Params> Next(size_t n) override {
    std::vector<Params> out;
    while (out.size() < n && used_ < budget_) {
      const std::optional<size_t> pick = Pick();
      if (!pick) break;
      state_[*pick] = State::kProposed;
      ++used_;
      out.push_back(candidates_[*pick]);
    }
    return out;
  }

  void Tell(const Params& params, std::optional<double> median_us) override {
    const std::optional<size_t> found = codes_.Find(params);
    if (!found) return;  // not in this space: nothing to learn from it
    const size_t i = *found;
    if (state_[i] == State::kUnseen && count_told_) ++used_;  // measured before
    state_[i] = State::kTold;
    if (median_us && *median_us > 0) ranked_.insert({*median_us, i});
  }

  int64_t remaining() const override { return std::max<int64_t>(0, budget_ - used_); }
  bool adaptive() const override { return true; }

 private:
  enum class State : uint8_t { kUnseen, kProposed, kTold };

  std::optional<size_t> Pick() {
    if (random_picks_ < initial_) {
      ++random_picks_;
      return NextInRandomOrder();
    }
    size_t anchors = 0;
    for (const auto& [time, anchor] : ranked_) {
      if (anchors++ == kAnchors) break;
      for (int distance = 1; distance <= 2; ++distance) {
        std::vector<size_t> near;
        for (size_t j = 0; j < candidates_.size(); ++j) {
          if (state_[j] == State::kUnseen && Distance(anchor, j) == distance) near.push_back(j);
        }
        if (!near.empty()) {
          std::uniform_int_distribution<size_t> any(0, near.size() - 1);
          return near[any(rng_)];
        }
      }
    }
    return NextInRandomOrder();
  }

  std::optional<size_t> NextInRandomOrder() {
    while (cursor_ < order_.size() && state_[order_[cursor_]] != State::kUnseen) ++cursor_;
    if (cursor_ == order_.size()) return std::nullopt;
    return order_[cursor_++];
  }

  int Distance(size_t a, size_t b) const { return codes_.Distance(a, b); }

  std::mt19937_64 rng_;
  std::vector<Params> candidates_;
  CandidateCodes codes_;
  std::vector<size_t> order_;  // the random order
  size_t cursor_ = 0;
  std::vector<State> state_;
  std::set<std::pair<double, size_t>> ranked_;  // measured candidates, fastest first
  int64_t budget_ = 0, initial_ = 0, used_ = 0, random_picks_ = 0;
  bool count_told_ = false;
};

// "quick": the start list (the portfolio) in order, then a descent: the untried candidates one
// parameter away from the best measured so far, then two away; when the best's neighbourhood is
// exhausted (a local optimum) the same around the second fastest, and then the search is done.
// Deterministic: neighbours go in index order.
class QuickSearch final : public Search {
 public:
  static constexpr size_t kAnchors = 2;
  QuickSearch(const kernels::Space& space, const ValidCandidates& valid,
              const std::vector<Params>& start, int64_t budget)
      : candidates_(valid.candidates), codes_(space, valid.candidates), budget_(budget) {
    invalid_ = valid.invalid;
    state_.assign(candidates_.size(), State::kUnseen);
    for (const Params& params : start) {
      // A member recorded before a parameter was added lacks it (Space::Complete).
      const std::optional<size_t> found = codes_.Find(space.Complete(params));
      // Members outside this (possibly narrowed) space are skipped, not an error: a portfolio
      // is tuned on the default space.
      if (found && std::find(start_.begin(), start_.end(), *found) == start_.end()) {
        start_.push_back(*found);
      }
    }
  }

  std::vector<Params> Next(size_t n) override {
    std::vector<Params> out;
    while (out.size() < n && (budget_ <= 0 || used_ < budget_)) {
      const std::optional<size_t> pick = Pick();
      if (!pick) break;
      state_[*pick] = State::kProposed;
      ++used_;
      out.push_back(candidates_[*pick]);
    }
    return out;
  }

  void Tell(const Params& params, std::optional<double> median_us) override {
    const std::optional<size_t> found = codes_.Find(params);
    if (!found) return;
    const size_t i = *found;
    state_[i] = State::kTold;
    if (median_us && *median_us > 0) ranked_.insert({*median_us, i});
  }

  int64_t remaining() const override {
    int64_t unseen = 0;
    for (State s : state_) unseen += s == State::kUnseen;
    return budget_ > 0 ? std::min(unseen, std::max<int64_t>(0, budget_ - used_)) : unseen;
  }
  bool adaptive() const override { return true; }

 private:
  enum class State : uint8_t { kUnseen, kProposed, kTold };

  std::optional<size_t> Pick() {
    while (next_start_ < start_.size()) {
      const size_t i = start_[next_start_++];
      if (state_[i] == State::kUnseen) return i;
    }
    // The descent starts from the best of the whole starting set: none of it may be in flight.
    for (size_t i : start_) {
      if (state_[i] == State::kProposed) return std::nullopt;
    }
    if (candidates_.empty()) return std::nullopt;
    // Around the fastest measured so far, then (its neighbourhood exhausted) the next fastest,
    // up to kAnchors of them; with no result, around the first proposal.
    std::vector<size_t> anchors;
    for (const auto& [time, i] : ranked_) {
      if (anchors.size() == kAnchors) break;
      anchors.push_back(i);
    }
    if (anchors.empty()) anchors.push_back(start_.empty() ? 0 : start_.front());
    for (size_t anchor : anchors) {
      for (int distance = 1; distance <= 2; ++distance) {
        for (size_t j = 0; j < candidates_.size(); ++j) {
          if (state_[j] == State::kUnseen && Distance(anchor, j) == distance) return j;
        }
      }
      if (state_[anchor] == State::kUnseen) return anchor;
    }
    return std::nullopt;
  }

  int Distance(size_t a, size_t b) const { return codes_.Distance(a, b); }

  std::vector<Params> candidates_;
  CandidateCodes codes_;
  std::vector<State> state_;
  std::vector<size_t> start_;
  size_t next_start_ = 0;
  std::set<std::pair<double, size_t>> ranked_;  // measured candidates, fastest first
  int64_t budget_ = 0, used_ = 0;
};

}  // namespace

std::vector<std::string> StrategyNames() {
  return {"brute_force", "random", "local", "quick"};
}

absl::Status CheckStrategy(std::string_view strategy) {
  const std::vector<std::string> names = StrategyNames();
  if (std::find(names.begin(), names.end(), strategy) != names.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("unknown strategy ", Quoted(strategy),
                                                 " (known: ", absl::StrJoin(names, ", "), ")"));
}

absl::Status CheckBudget(int64_t max_evaluations, double max_seconds) {
  if (max_evaluations < 0) {
    return absl::InvalidArgumentError("budget.max_evaluations must not be negative");
  }
  if (!(max_seconds >= 0) || !std::isfinite(max_seconds)) {
    return absl::InvalidArgumentError(
        "budget.max_seconds must be a finite number >= 0 (0: no time limit)");
  }
  return absl::OkStatus();
}

ValidCandidates EnumerateValid(const kernels::Space& space) {
  ValidCandidates valid;
  space.ForEachValid([&](uint64_t, const Params& params) { valid.candidates.push_back(params); });
  valid.invalid =
      static_cast<int64_t>(space.CartesianSize()) - static_cast<int64_t>(valid.candidates.size());
  return valid;
}

const ValidCandidates& ValidOfDefaultSpace(const kernels::KernelFamily& family) {
  static std::mutex mu;
  static std::map<const kernels::KernelFamily*, std::unique_ptr<ValidCandidates>> cache;
  std::lock_guard lock(mu);
  std::unique_ptr<ValidCandidates>& entry = cache[&family];
  if (!entry) entry = std::make_unique<ValidCandidates>(EnumerateValid(family.default_space()));
  return *entry;
}

absl::StatusOr<std::unique_ptr<Search>> MakeSearch(const kernels::Space& space,
                                                   const ValidCandidates& valid,
                                                   std::string_view strategy, uint64_t seed,
                                                   int64_t budget,
                                                   const std::vector<Params>& start) {
  if (auto s = CheckStrategy(strategy); !s.ok()) return s;
  if (strategy == "quick") return std::make_unique<QuickSearch>(space, valid, start, budget);
  if (strategy == "local") return std::make_unique<LocalSearch>(space, valid, seed, budget);
  std::vector<Params> candidates = valid.candidates;
  if (strategy == "random") {
    std::mt19937_64 rng(seed);
    std::shuffle(candidates.begin(), candidates.end(), rng);
  }
  return std::make_unique<FixedOrder>(std::move(candidates), valid.invalid);
}

absl::StatusOr<std::unique_ptr<Search>> MakeSearch(const kernels::Space& space,
                                                   std::string_view strategy, uint64_t seed,
                                                   int64_t budget,
                                                   const std::vector<Params>& start) {
  if (auto s = CheckStrategy(strategy); !s.ok()) return s;  // before the enumeration
  return MakeSearch(space, EnumerateValid(space), strategy, seed, budget, start);
}

std::unique_ptr<Search> ListSearch(std::vector<Params> candidates) {
  return std::make_unique<FixedOrder>(std::move(candidates), 0);
}

}  // namespace cutune::tuner
