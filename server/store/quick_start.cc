#include "server/store/quick_start.h"

#include <algorithm>

#include "server/predict/portfolio.h"

namespace cutune::store {

absl::StatusOr<std::vector<Params>> QuickStart(Store& store, const DeviceModel& device,
                                               std::string_view family, DType dtype,
                                               const Shape& shape, const Params& baseline) {
  absl::StatusOr<std::vector<DeviceModel>> known = store.ListDeviceModels();
  if (!known.ok()) return known.status();
  std::vector<Params> start;
  auto add = [&](const Params& p) {
    if (start.size() < predict::kMaxMembers &&
        std::find(start.begin(), start.end(), p) == start.end()) {
      start.push_back(p);
    }
  };
  for (const std::string& model : ServingModels(device, *known)) {
    if (start.size() >= predict::kMaxMembers) break;
    if (auto predictor = store.PredictionModel(model, family, dtype)) {
      for (const Params& p : predictor->Ranked(shape)) add(p);
    }
    absl::StatusOr<std::vector<Winner>> winners = store.ListWinners(model);
    if (!winners.ok()) return winners.status();
    std::vector<predict::TunedShape> tuned;
    for (const Winner& w : *winners) {
      if (w.family != family || w.dtype != dtype) continue;
      tuned.push_back({w.shape, w.measurement.params, w.measurement.timing.median_us});
    }
    for (const Params& p : predict::NearestWinners(tuned, shape)) add(p);
  }
  if (std::find(start.begin(), start.end(), baseline) == start.end()) start.push_back(baseline);
  return start;
}

}  // namespace cutune::store
