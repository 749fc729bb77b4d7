#include "server/store/quick_start.h"

#include <algorithm>
#include <numeric>

#include "server/predict/portfolio.h"

namespace cutune::store {
namespace {

// The one rule of the list: at most `room` (predict::kMaxMembers, or kMaxQuickStart for the
// nearest winners), each configuration once.
void AddIfRoom(std::vector<Params>& start, const Params& p, size_t room = predict::kMaxMembers) {
  if (start.size() < room && std::find(start.begin(), start.end(), p) == start.end()) {
    start.push_back(p);
  }
}

}  // namespace

absl::StatusOr<std::vector<Params>> QuickStart(Store& store, const DeviceModel& device,
                                               std::string_view family, DType dtype,
                                               const Shape& shape,
                                               const std::vector<Params>& starters,
                                               const Params& baseline) {
  absl::StatusOr<std::vector<DeviceModel>> known = store.ListDeviceModels();
  if (!known.ok()) return known.status();
  std::vector<Params> start;
  auto add = [&](const Params& p) { AddIfRoom(start, p); };
  // The serving models' winners of this family, own model first.
  const std::vector<std::string> serving = ServingModels(device, *known);
  std::vector<std::vector<predict::TunedShape>> tuned(serving.size());
  for (size_t m = 0; m < serving.size(); ++m) {
    absl::StatusOr<std::vector<Winner>> winners = store.ListWinners(serving[m]);
    if (!winners.ok()) return winners.status();
    for (const Winner& w : *winners) {
      if (w.family != family || w.dtype != dtype) continue;
      tuned[m].push_back({w.shape, w.measurement.params, w.measurement.timing.median_us});
    }
  }
  // In the ladder's order: each serving model's winner of this very shape, then their
  // portfolios ranked for the shape by their prediction models, one member of each in turn
  // (EXACT, then PREDICTED and SAME_ARCHITECTURE); then each one's other winners, nearest shape
  // first (NEAREST_SHAPE, then the architecture's). Where the own prediction model gives way to
  // another, that one goes first in each turn, as its answers come before the own model's in the
  // ladder.
  std::vector<size_t> order(serving.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const std::string gives_way_to = store.GivesWayTo(device.name, family, dtype);
  auto preferred = std::find(serving.begin(), serving.end(), gives_way_to);
  if (!gives_way_to.empty() && preferred != serving.end()) {
    const auto at = order.begin() + (preferred - serving.begin());
    std::rotate(order.begin(), at, at + 1);
  }
  for (const predict::TunedShape& t : tuned[0]) {
    if (t.shape == shape) add(t.winner);
  }
  std::vector<std::vector<Params>> ranked;
  for (size_t m : order) {
    for (const predict::TunedShape& t : tuned[m]) {
      if (t.shape == shape) add(t.winner);
    }
    // A model without a matrix predicts nothing: its winners come in the nearest-shape step.
    auto predictor = store.PredictionModel(serving[m], family, dtype);
    if (predictor != nullptr && predictor->HasMatrix()) ranked.push_back(predictor->Ranked(shape));
  }
  // In turns: a full own portfolio (32) took every place, and the architecture's best-ranked
  // members, which reach what the own ones miss, never ran (unseen-shapes.md, section 24).
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& r : ranked) {
      if (i < r.size()) {
        add(r[i]);
        any = true;
      }
    }
    if (!any) break;
  }
  // The nearest shapes' winners have places of their own beyond a full portfolio's.
  for (const auto& models_tuned : tuned) {
    for (const Params& p : predict::NearestWinners(models_tuned, shape, kMaxQuickStart)) {
      AddIfRoom(start, p, kMaxQuickStart);
    }
  }
  FinishQuickStart(start, starters, baseline);
  return start;
}

void FinishQuickStart(std::vector<Params>& start, const std::vector<Params>& starters,
                      const Params& baseline) {
  for (const Params& p : starters) AddIfRoom(start, p);
  if (std::find(start.begin(), start.end(), baseline) == start.end()) start.push_back(baseline);
}

std::vector<Params> QuickStartOfNothing(const std::vector<Params>& starters,
                                        const Params& baseline) {
  std::vector<Params> start;
  FinishQuickStart(start, starters, baseline);
  return start;
}

}  // namespace cutune::store
