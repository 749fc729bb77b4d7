// The starting set of a "quick" sweep (tuner/strategy.h): what a store knows that is worth
// measuring first for one shape on one device. The daemon's quick sweeps and cutune-bench's
// quick rows both start from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/ladder.h"
#include "server/store/store.h"
#include "server/store/winner.h"

namespace cutune::store {

// Up to predict::kMaxMembers configurations, then `baseline` (always last unless already in),
// in the lookup ladder's order (ladder.h) over the serving models (ServingModels: the device's
// own model, then its architecture's) while there is room: each model's winner of `shape`; the
// models' portfolios ranked for `shape`, one member of each in turn (a full own portfolio left
// the architecture's out, though its best-ranked members reach what the own ones miss:
// bench/results/unseen-shapes.md section 24); then for each model, its other winners of
// `family`, nearest shape first. Without the architecture's models a device with
// no tuning of its own started from `baseline` alone, and the descent from there stops at a local
// optimum of naive kernels (H100, matmul: 19% of cuBLAS, where the full sweep reaches 87-105%;
// bench/results/unseen-shapes.md section 18); with its own winners before the architecture's
// portfolio, 32 of them left the portfolio out, though an own winner of another shape answers
// it worse (section 19). Where the own prediction model gives way to another (Store::GivesWayTo),
// that model's winner of the shape comes right after the own one, and its members first in each
// turn. Then the family's `starters` fill what room is left: a device whose model and
// architecture the store does not know (or a store without tables) started from `baseline`
// alone, 2-6x slower than the best on an H100 (bench/results/unseen-shapes.md, section 35).
absl::StatusOr<std::vector<Params>> QuickStart(Store& store, const DeviceModel& device,
                                               std::string_view family, DType dtype,
                                               const Shape& shape,
                                               const std::vector<Params>& starters,
                                               const Params& baseline);

// The end of every quick start: `starters` not yet in `start` while it holds fewer than
// predict::kMaxMembers, then `baseline` unless already in.
void FinishQuickStart(std::vector<Params>& start, const std::vector<Params>& starters,
                      const Params& baseline);
// What a store that knows nothing starts from: FinishQuickStart of an empty start.
std::vector<Params> QuickStartOfNothing(const std::vector<Params>& starters,
                                        const Params& baseline);

}  // namespace cutune::store
