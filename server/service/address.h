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

// What guards a listener: the daemon's TLS and authentication settings, shared by the gRPC
// address (--listen) and the HTTP one (--metrics-listen).
struct ExposureGuards {
  bool tls = false;            // --tls-cert/--tls-key
  bool authenticated = false;  // bearer tokens or client certificates (--tls-client-ca)
  bool allow_insecure_remote = false;
  bool allow_unauthenticated = false;
};

// The one exposure rule: a loopback address is open; any other needs encryption (TLS) unless
// --allow-insecure-remote, and a way to tell clients apart (tokens or client certificates) unless
// --allow-unauthenticated. INVALID_ARGUMENT names the address, the flag that gave it (`flag`) and
// the ways out.
absl::Status CheckExposure(const ListenAddress& address, std::string_view flag,
                           const ExposureGuards& guards);

}  // namespace cutune::service
