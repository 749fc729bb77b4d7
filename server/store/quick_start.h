// The starting set of a "quick" sweep (tuner/strategy.h): what a store knows that is worth
// measuring first for one shape on one device. The daemon's quick sweeps and cutune-bench's
// quick rows both start from it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/types.h"
#include "server/store/ladder.h"
#include "server/store/store.h"
#include "server/store/winner.h"

namespace cutune::store {

// The most configurations a quick start lists before its baseline: the nearest shapes' winners
// may fill this many places where the portfolios stop at predict::kMaxMembers. A portfolio
// covers the grid as a whole, so a configuration that wins one region of it alone is in none:
// 3000x500x700's best on an H100 (a 64x128 tile split 2 ways, 5.6% ahead of where quick from 32
// places stopped) wins one grid shape, 1200^3, whose winner the nearest ones bring. Replayed on
// 20 recorded H100 full sweeps (the 12 unseen shapes, sessions 38-39's brute-force ones) from the
// H100's table, the misses over 1% went from 3 to 0 for 9% more evaluations
// (bench/results/unseen-shapes.md, section 37).
inline constexpr size_t kMaxQuickStart = 48;

// Up to predict::kMaxMembers configurations (kMaxQuickStart with the nearest winners), then
// `baseline` (always last unless already in), in the lookup ladder's order (ladder.h) over the
// serving models (ServingModels: the device's own model, then its architecture's) while there is
// room: each model's winner of `shape`; the models' portfolios ranked for `shape`, one member of
// each in turn (a full own portfolio left the architecture's out, though its best-ranked members
// reach what the own ones miss: bench/results/unseen-shapes.md section 24); then for each model,
// its other winners of `family`, nearest shape first, up to kMaxQuickStart (with or without a
// portfolio before them). Without the architecture's models a device with no tuning of its own
// started from `baseline` alone, and the descent from there stops at a local optimum of naive
// kernels (H100, matmul: 19% of cuBLAS, where the full sweep reaches 87-105%;
// bench/results/unseen-shapes.md section 18); with its own winners before the architecture's
// portfolio, 32 of them left the portfolio out, though an own winner of another shape answers
// it worse (section 19). Where the own prediction model gives way to another (Store::GivesWayTo),
// that model's winner of the shape comes right after the own one, and its members first in each
// turn. Then the family's `starters` while fewer than predict::kMaxMembers are listed: a device
// whose model and architecture the store does not know (or a store without tables) started from
// `baseline` alone, 2-6x slower than the best on an H100 (bench/results/unseen-shapes.md, section
// 35).
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
