// The lookup ladder as a pure function: given a query and the stored winners, which answer and
// how good a match it is. No SQLite, no locks: the store builds a WinnerIndex after each write
// and asks Ladder() on every lookup; tests build one from a few winners.
//
// Rungs, in order (the first that answers wins): exact (own model, same shape) -> predicted (a
// portfolio member chosen by the own model's prediction model, predict/model.h) -> another model
// of the same compute capability where it measured or predicted the shape (its winner there, else
// the member its prediction model picks) -> nearest shape on the own model -> the nearest shape
// on another model of the same compute capability -> family default. The predicted rung steps
// aside where the own model gives way to another of the same compute capability (ChooseDeferrals).
// Within a rung: shape distance, then a winner of the current source hash before a stale one, then
// fewer stale fields, then speed, then model name.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memory>

#include "server/core/types.h"
#include "server/predict/model.h"
#include "server/store/winner.h"

namespace cutune::store {

enum class LookupRung { kExact, kPredicted, kNearestShape, kSameArchitecture, kFamilyDefault };
std::string_view LookupRungName(LookupRung rung);

struct LookupQuery {
  std::string device_model;
  int cc_major = 0;
  int cc_minor = 0;
  std::string family;
  Shape shape;
  DType dtype = DType::kF32;
  // The daemon's current provenance; a zero driver or empty string skips that comparison (a
  // table server without a GPU has no driver to compare with).
  Provenance current;
  Params family_default;
};

struct LookupResult {
  LookupRung rung = LookupRung::kFamilyDefault;
  double distance = 0;  // sum over dimensions of |log2(asked / tuned)|
  Shape tuned_shape;    // empty for kFamilyDefault
  std::string device_model;
  Measurement winner;  // for kFamilyDefault: only params (the default) are set
  Provenance provenance;
  Reference reference;
  int64_t measured_at_ms = 0;
  std::vector<std::string> stale;  // "driver 12080 != 13000" (tuned != current), ...
  bool imported = false;  // the winner came from a table, not from a sweep of this store
  // kPredicted, and kSameArchitecture when another model's prediction model picked: the member's
  // predicted time at the asked shape and its calibrated expected slowdown against a tuning of
  // it, both for `device_model`; `winner` holds the member's time at `tuned_shape`. 0 otherwise.
  double predicted_time_us = 0;
  double expected_slowdown = 0;
};

// Prediction models by (device model, family, dtype).
struct ModelKey {
  std::string device_model;
  std::string family;
  DType dtype = DType::kF32;
  auto operator<=>(const ModelKey&) const = default;
};
using ModelMap = std::map<ModelKey, std::shared_ptr<const predict::Model>>;


// Winners indexed for the ladder: per family and dtype, by device model (rungs 1-2) and by
// compute capability (rung 3), with log2 of each shape precomputed so a lookup costs a few
// subtractions per candidate shape of its own model. Holds the winners it indexes; movable
// (the entries point into its own vector), not copyable.
class WinnerIndex {
 public:
  struct Entry {
    const Winner* winner;
    std::vector<double> log_shape;
  };

  WinnerIndex() = default;
  explicit WinnerIndex(std::vector<Winner> winners);
  WinnerIndex(WinnerIndex&&) = default;
  WinnerIndex& operator=(WinnerIndex&&) = default;
  WinnerIndex(const WinnerIndex&) = delete;
  WinnerIndex& operator=(const WinnerIndex&) = delete;

  const std::vector<Winner>& winners() const { return winners_; }
  // The winners of `family` and `dtype` measured on `model`.
  std::span<const Entry> OfModel(std::string_view family, DType dtype,
                                 std::string_view model) const;
  // The winners of `family` and `dtype` measured on any model of compute capability cc.
  std::span<const Entry> OfArchitecture(std::string_view family, DType dtype, int cc_major,
                                        int cc_minor) const;

 private:
  struct Group {
    std::map<std::string, std::vector<Entry>, std::less<>> by_model;
    std::map<std::pair<int, int>, std::vector<Entry>> by_cc;
  };
  const Group* Find(std::string_view family, DType dtype) const;

  std::vector<Winner> winners_;
  std::map<std::string, std::map<DType, Group>, std::less<>> by_family_;
};

// Per (device model, family, dtype): the other model of the same compute capability whose
// answers the ladder gives in place of the own prediction model's (ChooseDeferrals).
using Deferrals = std::map<ModelKey, std::string>;

// Everything the rungs look at. A rung that needs other data (say, a model fitted over
// measured configurations) gets its own member here.
struct LadderInput {
  const WinnerIndex& winners;
  const ModelMap* models = nullptr;  // none: no PREDICTED rung
  const Deferrals* deferrals = nullptr;
};

// A device model's own prediction model against another model of the same compute capability,
// on the device's own tuned shapes that the other did not tune: the own model held out there,
// the other's prediction model's pick (what the SAME_ARCHITECTURE rung gives for a shape the
// other did not tune) timed by the device's own measurements (predict::CompareOnOwnShapes).
struct ModelComparison {
  ModelKey own;
  std::string other;
  predict::Comparison comparison;
  predict::Judgement judged;  // the other's picks at the own shapes, timed there
};
// Every such pair where the own model has a matrix (without one the PREDICTED rung does not
// answer). `tuned` and `observations`: what the models were trained on, by key; `devices`: every
// device model.
std::vector<ModelComparison> CompareServingModels(
    const ModelMap& models, const std::map<ModelKey, std::vector<predict::TunedShape>>& tuned,
    const std::map<ModelKey, std::vector<predict::Observation>>& observations,
    const std::vector<DeviceModel>& devices);
// Per own model, the other that served its device better (Comparison::OtherIsBetter), the best
// of them by its geometric mean; none for two models that each served the other better. An H100
// that has swept a dozen shapes answers the rest from the H200 grid's model rather than from its
// own small one, until its own measures better.
Deferrals ChooseDeferrals(const std::vector<ModelComparison>& comparisons);
// A change of that choice for one own model: the model it now gives way to, with the comparison
// that chose it, or `other` empty where it answers from its own model again.
struct DeferralChange {
  ModelKey own;
  std::string other;
  predict::Comparison comparison;
};
// The changes from `before` to `now` (what the daemon logs, and only when the choice changes).
std::vector<DeferralChange> DeferralChanges(const Deferrals& before, const Deferrals& now,
                                            const std::vector<ModelComparison>& comparisons);

// The device models whose tuning serves `device`, in the ladder's order: the device's own model,
// then every other model in `known` of the same compute capability, by name. The same-
// architecture rung and the quick sweep's start (quick_start.h) both go by it: an H100 with no
// tuning of its own is served by an H200's; an A100 is not.
std::vector<std::string> ServingModels(const DeviceModel& device,
                                       const std::vector<DeviceModel>& known);

// Never fails: with nothing that matches, the answer is the family default.
LookupResult Ladder(const LookupQuery& query, const LadderInput& input);

// What differs between the provenance a winner was measured under and the current one, one
// phrase per field ("driver 12080 != 13000"); fields the current provenance leaves unset (zero,
// empty) are not compared.
std::vector<std::string> StaleFields(const Provenance& tuned, const Provenance& current);

}  // namespace cutune::store
