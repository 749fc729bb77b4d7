// Test helper for searches: every candidate a search proposes, one at a time, each told `time`
// of it before the next.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "server/tuner/strategy.h"

namespace cutune::tuner {

inline std::vector<Params> Drain(Search& search,
                                 const std::function<std::optional<double>(const Params&)>& time) {
  std::vector<Params> proposed;
  for (std::vector<Params> next = search.Next(1); !next.empty(); next = search.Next(1)) {
    search.Tell(next.front(), time(next.front()));
    proposed.push_back(next.front());
  }
  return proposed;
}

}  // namespace cutune::tuner
