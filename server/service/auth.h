// Bearer-token authorization with two roles: "read" (lookups, listings, export, server info)
// and "admin" (tuning, cancelling, importing; implies read). Tokens come from files, one per line; with no
// token files configured, authorization is off (the transport rules in cutuned still apply).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace cutune::service {

enum class Role { kRead, kAdmin };

class Authorizer {
 public:
  Authorizer() = default;  // disabled
  // Empty path: no tokens of that role. Blank lines and lines starting with '#' are ignored.
  // A token file other users may read is accepted with a warning appended to `warnings`.
  static absl::StatusOr<Authorizer> FromFiles(const std::string& admin_tokens_file,
                                              const std::string& read_tokens_file,
                                              std::vector<std::string>* warnings = nullptr);
  static Authorizer FromTokens(std::vector<std::string> admin, std::vector<std::string> read);

  bool enabled() const { return !admin_.empty() || !read_.empty(); }

  // The one token rule, for gRPC metadata and HTTP headers alike. The role of the bearer token
  // in `authorization` ("Bearer <token>"; nullopt: none sent), kAdmin for everyone when
  // authorization is off; UNAUTHENTICATED without a known bearer token. Messages never repeat
  // the token.
  absl::StatusOr<Role> RoleOfBearer(std::optional<std::string_view> authorization) const;
  // RoleOfBearer, and PERMISSION_DENIED when a read token asks for an admin call.
  absl::Status CheckBearer(std::optional<std::string_view> authorization, Role needed) const;
  // The same two on the call's `authorization` metadata.
  absl::StatusOr<Role> RoleOf(const grpc::ServerContext& context) const;
  grpc::Status Check(const grpc::ServerContext& context, Role needed) const;

 private:
  std::vector<std::string> admin_;
  std::vector<std::string> read_;
};

}  // namespace cutune::service
