// Which kernel source a prediction model learns from. A configuration of one source is another
// kernel than the same configuration of another source: a model that merged their times (by the
// fastest, as it merges observations of one kernel) would learn a matrix no build can reproduce.
// So each (device model, family, dtype) trains on the winners, rows and matrix cells of one
// source. Pure: tested on the CPU (tests/store/training_source_test.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "server/store/winner.h"

namespace cutune::store {

// The source that `winners` (one model key's, any sources) train on: `current` (the source this
// build compiles; empty: not known) where at least `min_shapes` of them have it, since its
// answers are what the build launches; else the source most of them have (a model needs
// shapes), ties going to the one with the newest winner, then to the smaller hash. Empty when
// `winners` is.
std::string TrainingSource(const std::vector<const Winner*>& winners, std::string_view current,
                           size_t min_shapes);

}  // namespace cutune::store
