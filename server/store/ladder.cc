// The lookup ladder: the winner index and the rungs, each a separate function over the query and
// the index, tried in order.
#include "server/store/ladder.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace cutune::store {

std::string_view LookupRungName(LookupRung rung) {
  switch (rung) {
    case LookupRung::kExact:
      return "exact";
    case LookupRung::kPredicted:
      return "predicted";
    case LookupRung::kNearestShape:
      return "nearest_shape";
    case LookupRung::kSameArchitecture:
      return "same_architecture";
    case LookupRung::kFamilyDefault:
      return "family_default";
  }
  return "?";
}

WinnerIndex::WinnerIndex(std::vector<Winner> winners) : winners_(std::move(winners)) {
  for (const Winner& w : winners_) {
    Entry entry{&w, {}};
    for (int64_t d : w.shape) entry.log_shape.push_back(std::log2(static_cast<double>(d)));
    Group& group = by_family_[w.family][w.dtype];
    group.by_model[w.device.name].push_back(entry);
    group.by_cc[{w.device.cc_major, w.device.cc_minor}].push_back(std::move(entry));
  }
}

const WinnerIndex::Group* WinnerIndex::Find(std::string_view family, DType dtype) const {
  auto by_dtype = by_family_.find(family);
  if (by_dtype == by_family_.end()) return nullptr;
  auto group = by_dtype->second.find(dtype);
  return group == by_dtype->second.end() ? nullptr : &group->second;
}

std::span<const WinnerIndex::Entry> WinnerIndex::OfModel(std::string_view family, DType dtype,
                                                         std::string_view model) const {
  const Group* group = Find(family, dtype);
  if (group == nullptr) return {};
  auto it = group->by_model.find(model);
  if (it == group->by_model.end()) return {};
  return it->second;
}

std::span<const WinnerIndex::Entry> WinnerIndex::OfArchitecture(std::string_view family,
                                                                DType dtype, int cc_major,
                                                                int cc_minor) const {
  const Group* group = Find(family, dtype);
  if (group == nullptr) return {};
  auto it = group->by_cc.find({cc_major, cc_minor});
  if (it == group->by_cc.end()) return {};
  return it->second;
}

namespace {

bool HashStale(const Provenance& tuned, const Provenance& now) {
  return !now.source_hash.empty() && tuned.source_hash != now.source_hash;
}

int StaleCount(const Provenance& tuned, const Provenance& now) {
  return int{now.driver_version != 0 && tuned.driver_version != now.driver_version} +
         int{!now.nvrtc_version.empty() && tuned.nvrtc_version != now.nvrtc_version} +
         int{HashStale(tuned, now)} +
         int{now.space_version != 0 && tuned.space_version != now.space_version};
}

struct Pick {
  const Winner* winner = nullptr;
  double distance = 0;
};

// The first of the admitted entries in the order inside a rung: nearest shape, then fresh
// before stale (a current-source winner beats a stale one at the same distance), then fewer
// stale fields, then speed, then model name. Only shapes of the query's rank take part.
template <typename Admit>
Pick BestOf(const LookupQuery& query, std::span<const WinnerIndex::Entry> entries, Admit admit) {
  std::vector<double> log_query;
  log_query.reserve(query.shape.size());
  for (int64_t d : query.shape) log_query.push_back(std::log2(static_cast<double>(d)));
  using Rank = std::tuple<double, bool, int, double, std::string_view>;
  Pick best;
  Rank best_rank;
  for (const WinnerIndex::Entry& e : entries) {
    const Winner& w = *e.winner;
    if (w.shape.size() != query.shape.size() || !admit(w)) continue;
    double distance = 0;
    for (size_t i = 0; i < log_query.size(); ++i) {
      distance += std::abs(log_query[i] - e.log_shape[i]);
    }
    if (w.shape == query.shape) distance = 0;
    Rank rank{distance, HashStale(w.provenance, query.current),
              StaleCount(w.provenance, query.current), w.measurement.timing.median_us,
              w.device.name};
    if (best.winner == nullptr || rank < best_rank) {
      best = {&w, distance};
      best_rank = rank;
    }
  }
  return best;
}

std::optional<LookupResult> Answer(const LookupQuery& query, LookupRung rung, const Pick& pick) {
  if (pick.winner == nullptr) return std::nullopt;
  const Winner& w = *pick.winner;
  LookupResult result;
  result.rung = rung;
  result.distance = pick.distance;
  result.tuned_shape = w.shape;
  result.device_model = w.device.name;
  result.winner = w.measurement;
  result.provenance = w.provenance;
  result.reference = w.reference;
  result.measured_at_ms = w.measured_at_ms;
  result.stale = StaleFields(w.provenance, query.current);
  result.imported = !w.sweep_id.has_value();
  return result;
}

// Rung 1: a winner of the query's own model and shape.
std::optional<LookupResult> Exact(const LookupQuery& query, const LadderInput& input) {
  auto own = input.winners.OfModel(query.family, query.dtype, query.device_model);
  return Answer(query, LookupRung::kExact,
                BestOf(query, own, [&](const Winner& w) { return w.shape == query.shape; }));
}

// A portfolio member that `model_name`'s prediction model picks for the shape, answered as
// `rung`. Its figures are the member's at the nearest tuned shape where it was measured
// (tuned_shape), with the provenance and reference of that shape's winner of the source the
// model learned from (so an answer from an older source's matrix says it is stale). Nothing
// when that model has no matrix (a nearest-shape rung answers instead).
std::optional<LookupResult> PredictedBy(const LookupQuery& query, const LadderInput& input,
                                        std::string_view model_name, LookupRung rung) {
  if (input.models == nullptr) return std::nullopt;
  auto found =
      input.models->find(ModelKey{std::string(model_name), query.family, query.dtype});
  if (found == input.models->end() || !found->second) return std::nullopt;
  const predict::Model& model = *found->second;
  if (!model.HasMatrix()) return std::nullopt;
  std::optional<predict::Prediction> prediction = model.Predict(query.shape);
  if (!prediction || prediction->measured_shape.empty()) return std::nullopt;
  auto tuned = input.winners.OfModel(query.family, query.dtype, model_name);
  const Pick at = BestOf(query, tuned, [&](const Winner& w) {
    return w.shape == prediction->measured_shape &&
           (model.source_hash().empty() || w.provenance.source_hash == model.source_hash());
  });
  std::optional<LookupResult> result = Answer(query, rung, at);
  if (!result) return std::nullopt;
  result->distance = predict::ShapeDistance(query.shape, prediction->measured_shape);
  Measurement measured;
  measured.params = prediction->params;
  measured.timing.median_us = prediction->measured_us;
  measured.timing.samples = 0;  // a matrix cell: its samples are not kept
  result->winner = std::move(measured);
  result->predicted_time_us = prediction->predicted_time_us;
  result->expected_slowdown = prediction->expected_slowdown;
  return result;
}

// Rung 2: the portfolio member the own model's prediction model picks for the shape.
// Nothing where the own model gives way to another's (ChooseDeferrals): rung 3 answers.
std::optional<LookupResult> Predicted(const LookupQuery& query, const LadderInput& input) {
  if (input.deferrals != nullptr &&
      input.deferrals->count(ModelKey{query.device_model, query.family, query.dtype})) {
    return std::nullopt;
  }
  return PredictedBy(query, input, query.device_model, LookupRung::kPredicted);
}

// The same-architecture models that serve the query's device, by name (ServingModels less the
// device's own model), each collected once: a lookup walks every winner of the family.
std::vector<std::string> OtherServingModels(const LookupQuery& query,
                                            std::span<const WinnerIndex::Entry> same_cc) {
  std::vector<DeviceModel> tuned;
  for (const WinnerIndex::Entry& e : same_cc) {
    const DeviceModel& d = e.winner->device;
    if (std::none_of(tuned.begin(), tuned.end(),
                     [&](const DeviceModel& t) { return t.name == d.name; })) {
      tuned.push_back(d);
    }
  }
  std::vector<std::string> serving =
      ServingModels({query.device_model, query.cc_major, query.cc_minor, 0, 0}, tuned);
  serving.erase(serving.begin());
  return serving;
}

// Rung 3: another model of the same compute capability, answering as it answers itself where it
// measured or predicted: its winner of the very shape, else the member its prediction model
// picks for the shape (the model the own one gives way to first, then by name, the first that
// has a matrix). An H100 asking a table server holding the H200 grid gets the H200's answer,
// labelled SAME_ARCHITECTURE with the H200's figures. It ranks above the own model's nearest shape: on an H100, the H200 grid's
// answers were 98.5% of the H100's own full sweeps at the median and 89.2% at worst over 13
// untuned shapes, where the H100's own nearest tuned shape among the other 12 was 80.9% and
// 30.8% (bench/results/unseen-shapes.md, section 19).
std::optional<LookupResult> SameArchitecture(const LookupQuery& query, const LadderInput& input) {
  auto same_cc =
      input.winners.OfArchitecture(query.family, query.dtype, query.cc_major, query.cc_minor);
  const Pick exact = BestOf(query, same_cc, [&](const Winner& w) {
    return w.device.name != query.device_model && w.shape == query.shape;
  });
  if (exact.winner != nullptr) return Answer(query, LookupRung::kSameArchitecture, exact);
  std::vector<std::string> others = OtherServingModels(query, same_cc);
  if (input.deferrals != nullptr) {
    auto deferred = input.deferrals->find(ModelKey{query.device_model, query.family, query.dtype});
    if (deferred != input.deferrals->end()) {
      auto at = std::find(others.begin(), others.end(), deferred->second);
      if (at != others.end()) std::rotate(others.begin(), at, at + 1);
    }
  }
  for (const std::string& other : others) {
    if (auto predicted = PredictedBy(query, input, other, LookupRung::kSameArchitecture)) {
      return predicted;
    }
  }
  return std::nullopt;
}

// Rung 4: the nearest shape tuned on the query's own model.
std::optional<LookupResult> NearestShape(const LookupQuery& query, const LadderInput& input) {
  auto own = input.winners.OfModel(query.family, query.dtype, query.device_model);
  return Answer(query, LookupRung::kNearestShape,
                BestOf(query, own, [](const Winner&) { return true; }));
}

// Rung 5: the nearest shape tuned on another model of the same compute capability (none of
// them has a matrix or the exact shape), labelled SAME_ARCHITECTURE.
std::optional<LookupResult> SameArchitectureNearestShape(const LookupQuery& query,
                                                         const LadderInput& input) {
  auto same_cc =
      input.winners.OfArchitecture(query.family, query.dtype, query.cc_major, query.cc_minor);
  return Answer(query, LookupRung::kSameArchitecture, BestOf(query, same_cc, [&](const Winner& w) {
                  return w.device.name != query.device_model;
                }));
}

using RungFn = std::optional<LookupResult> (*)(const LookupQuery&, const LadderInput&);

// The rungs in order; the first that answers wins, and the family default answers when none
// does. A new rung is a function here, inserted where it ranks.
constexpr RungFn kRungs[] = {Exact, Predicted, SameArchitecture, NearestShape,
                             SameArchitectureNearestShape};

}  // namespace

LookupResult Ladder(const LookupQuery& query, const LadderInput& input) {
  for (RungFn rung : kRungs) {
    if (std::optional<LookupResult> answer = rung(query, input)) return *std::move(answer);
  }
  LookupResult result;
  result.rung = LookupRung::kFamilyDefault;
  result.winner.params = query.family_default;
  return result;
}

std::vector<std::string> ServingModels(const DeviceModel& device,
                                       const std::vector<DeviceModel>& known) {
  std::vector<std::string> out{device.name};
  std::vector<std::string> same_architecture;
  for (const DeviceModel& m : known) {
    if (m.name != device.name && m.cc_major == device.cc_major && m.cc_minor == device.cc_minor) {
      same_architecture.push_back(m.name);
    }
  }
  std::sort(same_architecture.begin(), same_architecture.end());
  same_architecture.erase(std::unique(same_architecture.begin(), same_architecture.end()),
                          same_architecture.end());
  out.insert(out.end(), same_architecture.begin(), same_architecture.end());
  return out;
}

std::vector<ModelComparison> CompareServingModels(
    const ModelMap& models, const std::map<ModelKey, std::vector<predict::TunedShape>>& tuned,
    const std::map<ModelKey, std::vector<predict::Observation>>& observations,
    const std::vector<DeviceModel>& devices) {
  static const std::vector<predict::Observation> kNone;
  auto with_matrix = [&](const ModelKey& key) -> const predict::Model* {
    auto found = models.find(key);
    return found != models.end() && found->second && found->second->HasMatrix()
               ? found->second.get()
               : nullptr;
  };
  std::vector<ModelComparison> out;
  for (const auto& [key, own_shapes] : tuned) {
    const predict::Model* own = with_matrix(key);
    auto device = std::find_if(devices.begin(), devices.end(),
                               [&](const DeviceModel& d) { return d.name == key.device_model; });
    if (own == nullptr || device == devices.end()) continue;
    auto seen = observations.find(key);
    const std::vector<predict::Observation>& own_observations =
        seen == observations.end() ? kNone : seen->second;
    for (const std::string& name : ServingModels(*device, devices)) {
      const ModelKey other_key{name, key.family, key.dtype};
      const predict::Model* other = name == key.device_model ? nullptr : with_matrix(other_key);
      auto other_tuned = tuned.find(other_key);
      if (other == nullptr || other_tuned == tuned.end()) continue;
      const std::vector<predict::TunedShape>& other_shapes = other_tuned->second;
      // The other's prediction, judged only where it is one: at a shape the other tuned too, its
      // winner there would be judged against the own model held out (a device that tuned the
      // other's grid would always give way).
      auto answer = [&](const Shape& shape) -> std::optional<Params> {
        for (const predict::TunedShape& t : other_shapes) {
          if (t.shape == shape) return std::nullopt;
        }
        std::optional<predict::Prediction> pick = other->Predict(shape);
        if (!pick) return std::nullopt;
        return pick->params;
      };
      predict::Judgement judged = predict::JudgeAnswers(own_shapes, own_observations, answer);
      const predict::Comparison comparison =
          predict::CompareOnOwnShapes(own->evaluation(), judged);
      out.push_back({key, name, comparison, std::move(judged)});
    }
  }
  return out;
}

Deferrals ChooseDeferrals(const std::vector<ModelComparison>& comparisons) {
  Deferrals out;
  std::map<ModelKey, double> best;
  for (const ModelComparison& c : comparisons) {
    if (!c.comparison.OtherIsBetter()) continue;
    auto [it, fresh] = best.try_emplace(c.own, c.comparison.other);
    if (fresh || c.comparison.other > it->second) {
      it->second = c.comparison.other;
      out[c.own] = c.other;
    }
  }
  // Two models that each served the other's shapes better both keep their own.
  std::vector<ModelKey> mutual;
  for (const auto& [own, other] : out) {
    auto back = out.find(ModelKey{other, own.family, own.dtype});
    if (back != out.end() && back->second == own.device_model) mutual.push_back(own);
  }
  for (const ModelKey& key : mutual) out.erase(key);
  return out;
}

std::vector<DeferralChange> DeferralChanges(const Deferrals& before, const Deferrals& now,
                                            const std::vector<ModelComparison>& comparisons) {
  std::vector<DeferralChange> changes;
  for (const auto& [own, other] : now) {
    auto was = before.find(own);
    if (was != before.end() && was->second == other) continue;
    for (const ModelComparison& c : comparisons) {
      if (c.own == own && c.other == other) changes.push_back({own, other, c.comparison});
    }
  }
  for (const auto& [own, other] : before) {
    if (!now.count(own)) changes.push_back({own, "", {}});
  }
  return changes;
}

std::vector<std::string> StaleFields(const Provenance& tuned, const Provenance& now) {
  std::vector<std::string> stale;
  if (now.driver_version != 0 && tuned.driver_version != now.driver_version) {
    stale.push_back(absl::StrCat("driver ", tuned.driver_version, " != ", now.driver_version));
  }
  if (!now.nvrtc_version.empty() && tuned.nvrtc_version != now.nvrtc_version) {
    stale.push_back(absl::StrCat("nvrtc ", tuned.nvrtc_version, " != ", now.nvrtc_version));
  }
  if (HashStale(tuned, now)) {
    stale.push_back(absl::StrCat("kernel source hash differs (tuned ",
                                 tuned.source_hash.substr(0, 12), ", current ",
                                 now.source_hash.substr(0, 12), ")"));
  }
  if (now.space_version != 0 && tuned.space_version != now.space_version) {
    stale.push_back(absl::StrCat("space version ", tuned.space_version, " != ", now.space_version));
  }
  return stale;
}

}  // namespace cutune::store
