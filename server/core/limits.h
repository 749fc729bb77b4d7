// Size limits the daemon and its clients must agree on, in one place: a table the daemon exports
// must fit in an import request, and its answer in the client's receive limit.
#pragma once

#include <cstddef>

namespace cutune {

// The largest tuning table (JSON text) the daemon exports or imports.
inline constexpr size_t kMaxTableBytes = size_t{64} << 20;
// The largest gRPC message either side accepts: a table plus room for the message around it.
inline constexpr int kMaxMessageBytes = static_cast<int>(kMaxTableBytes + (size_t{1} << 20));

}  // namespace cutune
