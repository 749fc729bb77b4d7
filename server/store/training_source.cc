#include "server/store/training_source.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace cutune::store {

std::string TrainingSource(const std::vector<const Winner*>& winners, std::string_view current,
                           size_t min_shapes) {
  struct Count {
    size_t shapes = 0;
    int64_t newest_ms = 0;
  };
  std::map<std::string, Count, std::less<>> by_source;
  for (const Winner* w : winners) {
    Count& c = by_source[w->provenance.source_hash];
    ++c.shapes;
    c.newest_ms = std::max(c.newest_ms, w->measured_at_ms);
  }
  if (!current.empty()) {
    auto found = by_source.find(current);
    if (found != by_source.end() && found->second.shapes >= min_shapes) return found->first;
  }
  std::string best;
  Count most;
  for (const auto& [source, c] : by_source) {  // in hash order: the first of equals stays
    if (std::tie(c.shapes, c.newest_ms) > std::tie(most.shapes, most.newest_ms)) {
      best = source;
      most = c;
    }
  }
  return best;
}

}  // namespace cutune::store
