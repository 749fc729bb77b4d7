// The replacement rule for a key's winner.
#include "server/store/winner_rule.h"

#include "server/core/ties.h"

namespace cutune::store {

bool Supersedes(const Measurement& incoming, const Measurement& stored) {
  if (Tied(incoming.timing, stored.timing)) {
    return PreferredAmongTied(incoming, stored);
  }
  return incoming.timing.median_us < stored.timing.median_us;
}

}  // namespace cutune::store
