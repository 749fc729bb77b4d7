#include "server/worker/framing.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace cutune::worker {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    // MSG_NOSIGNAL: a dead worker must surface as an error here, not SIGPIPE the daemon.
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("worker pipe write failed: ", strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, char* data, size_t size, std::optional<Clock::time_point> deadline) {
  while (size > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("no reply in time");
      pollfd pfd{fd, POLLIN, 0};
      int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (ready < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(absl::StrCat("poll failed: ", strerror(errno)));
      }
      if (ready == 0) return absl::DeadlineExceededError("no reply in time");
    }
    ssize_t n = read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("worker pipe read failed: ", strerror(errno)));
    }
    if (n == 0) return absl::UnavailableError("peer closed the connection");
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  std::string body;
  if (!message.SerializeToString(&body)) return absl::InternalError("cannot serialize message");
  if (body.size() > kMaxFrameBytes) return absl::InvalidArgumentError("message too large");
  uint32_t size = static_cast<uint32_t>(body.size());
  char header[4] = {static_cast<char>(size & 0xff), static_cast<char>((size >> 8) & 0xff),
                    static_cast<char>((size >> 16) & 0xff), static_cast<char>(size >> 24)};
  std::string frame(header, 4);
  frame += body;
  return WriteAll(fd, frame.data(), frame.size());
}

absl::Status ReadFrame(int fd, google::protobuf::MessageLite& message,
                       std::optional<std::chrono::milliseconds> timeout) {
  std::optional<Clock::time_point> deadline;
  if (timeout) deadline = Clock::now() + *timeout;
  unsigned char header[4];
  if (auto s = ReadAll(fd, reinterpret_cast<char*>(header), 4, deadline); !s.ok()) return s;
  uint32_t size = header[0] | (header[1] << 8) | (header[2] << 16) | (uint32_t{header[3]} << 24);
  if (size > kMaxFrameBytes) return absl::DataLossError("frame larger than the limit");
  std::string body(size, '\0');
  if (auto s = ReadAll(fd, body.data(), size, deadline); !s.ok()) return s;
  if (!message.ParseFromString(body)) return absl::DataLossError("malformed frame");
  return absl::OkStatus();
}

}  // namespace cutune::worker
