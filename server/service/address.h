// The daemon's listening address, parsed rather than matched as text: whether it is loopback
// decides whether plaintext and unauthenticated access are allowed.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace cutune::service {

struct ListenAddress {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kTcp;
  std::string host;  // kTcp: as written, without IPv6 brackets ("" for every interface)
  int port = 0;      // kTcp: 0 lets the kernel choose
  std::string path;  // kUnix: the socket path ("unix:" addresses only)
  bool abstract = false;  // kUnix: "unix-abstract:NAME" (no file)
  bool loopback = false;  // reachable from this host only: unix sockets, 127.0.0.0/8, ::1,
                          // localhost; a host name that merely starts like one is not

  // host:port with the port the server bound (e.g. after asking for port 0).
  std::string WithPort(int bound_port) const;
};

// INVALID_ARGUMENT for anything gRPC would not listen on: "unix:PATH", "unix-abstract:NAME",
// "HOST:PORT" or "[IPV6]:PORT" with a port in [0, 65535].
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace cutune::service
