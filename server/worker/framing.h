// Length-prefixed protobuf messages on a file descriptor (a socket pair between cutuned and a
// worker process): 4-byte little-endian length, then the serialized message.
#pragma once

#include <chrono>
#include <optional>

#include "absl/status/status.h"
#include "google/protobuf/message_lite.h"

namespace cutune::worker {

// Largest frame either side accepts; a cubin is well under this.
inline constexpr uint32_t kMaxFrameBytes = 64 << 20;

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// Reads one frame into `message`. With a timeout, DEADLINE_EXCEEDED when nothing complete arrives
// in time; UNAVAILABLE when the peer closed the connection.
absl::Status ReadFrame(int fd, google::protobuf::MessageLite& message,
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace cutune::worker
