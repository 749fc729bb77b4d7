// A connection to a cutuned daemon, for the CLI and any other C++ client: resolves the target
// (--server > $CUTUNE_SERVER > 127.0.0.1:50051, "unix:PATH" too), sets up plaintext, TLS or
// mutual TLS, attaches the bearer token to every call and gives each call a deadline. gRPC
// statuses come back as absl::Status with a message that names the target when the daemon
// cannot be reached.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cutune/v1/cutune.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace cutune::client {

namespace pb = ::cutune::v1;

inline constexpr char kDefaultTarget[] = "127.0.0.1:50051";
inline constexpr char kServerEnv[] = "CUTUNE_SERVER";
inline constexpr char kTokenEnv[] = "CUTUNE_TOKEN";

struct ConnectionOptions {
  std::string server;  // empty: $CUTUNE_SERVER, else kDefaultTarget
  // TLS is used when any of these is set (or `tls` is true): tls_ca verifies the server (empty:
  // the system roots); tls_cert and tls_key, together, present a client certificate.
  bool tls = false;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;  // expected name in the server's certificate (default: the host)
  std::string token;            // empty: $CUTUNE_TOKEN; sent as "authorization: Bearer <token>"
  std::chrono::milliseconds deadline{std::chrono::seconds(30)};  // per unary call
};

// The address to dial: `flag` if set, else $CUTUNE_SERVER if set, else kDefaultTarget.
std::string ResolveTarget(const std::string& flag);
// The bearer token: `flag` if set, else $CUTUNE_TOKEN (may be empty: no token).
std::string ResolveToken(const std::string& flag);

class Connection {
 public:
  // Builds the channel (it connects lazily, on the first call). Fails only on bad options, e.g.
  // an unreadable certificate file or --tls-cert without --tls-key.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const ConnectionOptions& options);

  pb::Tuner::Stub& stub() { return *stub_; }
  const std::string& target() const { return target_; }

  // A context carrying the token and a deadline: the default one, `deadline` if given, none if
  // `deadline` is zero (streams that last as long as a sweep).
  std::unique_ptr<grpc::ClientContext> NewContext(
      std::optional<std::chrono::milliseconds> deadline = std::nullopt) const;

  // The call's status as absl::Status. When the daemon could not be reached the message says
  // so and names the target, instead of gRPC's transport details alone.
  absl::Status Convert(const grpc::Status& status) const;

  // One unary call, e.g. Call(&pb::Tuner::Stub::ListDevices, request, &response): a fresh
  // context (NewContext(deadline)), the stub's method, the status converted.
  template <typename Request, typename Response>
  absl::Status Call(grpc::Status (pb::Tuner::Stub::*method)(grpc::ClientContext*, const Request&,
                                                            Response*),
                    const Request& request, Response* response,
                    std::optional<std::chrono::milliseconds> deadline = std::nullopt) {
    auto context = NewContext(deadline);
    return Convert((stub_.get()->*method)(context.get(), request, response));
  }

 private:
  Connection(std::string target, std::string token, std::chrono::milliseconds deadline,
             std::shared_ptr<grpc::Channel> channel);

  std::string target_;
  std::string token_;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Tuner::Stub> stub_;
};

}  // namespace cutune::client
