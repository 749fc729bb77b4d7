#include "server/service/auth.h"

#include <sys/stat.h>

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/service/convert.h"

namespace cutune::service {
namespace {

absl::StatusOr<std::vector<std::string>> ReadTokens(const std::string& path,
                                                    std::vector<std::string>* warnings) {
  std::vector<std::string> tokens;
  if (path.empty()) return tokens;
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read token file '", path, "'"));
  struct stat info {};
  if (warnings != nullptr && stat(path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
    warnings->push_back(absl::StrCat("token file '", path, "' is readable by ",
                                     (info.st_mode & 007) != 0 ? "every user" : "its group",
                                     " (mode ", absl::StrFormat("%04o", info.st_mode & 07777),
                                     "); chmod 600 it"));
  }
  std::string line;
  while (std::getline(in, line)) {
    std::string token(absl::StripAsciiWhitespace(line));
    if (token.empty() || token[0] == '#') continue;
    tokens.push_back(token);
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("token file '", path, "' holds no token"));
  }
  return tokens;
}

// Compares without an early exit, so response timing does not reveal how much of a token matched.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

bool Contains(const std::vector<std::string>& tokens, std::string_view token) {
  bool found = false;
  for (const std::string& t : tokens) found |= ConstantTimeEquals(token, t);
  return found;
}

}  // namespace

absl::StatusOr<Authorizer> Authorizer::FromFiles(const std::string& admin_tokens_file,
                                                 const std::string& read_tokens_file,
                                                 std::vector<std::string>* warnings) {
  auto admin = ReadTokens(admin_tokens_file, warnings);
  if (!admin.ok()) return admin.status();
  auto read = ReadTokens(read_tokens_file, warnings);
  if (!read.ok()) return read.status();
  return FromTokens(std::move(*admin), std::move(*read));
}

Authorizer Authorizer::FromTokens(std::vector<std::string> admin, std::vector<std::string> read) {
  Authorizer a;
  a.admin_ = std::move(admin);
  a.read_ = std::move(read);
  return a;
}

namespace {

std::optional<std::string_view> AuthorizationOf(const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

}  // namespace

absl::StatusOr<Role> Authorizer::RoleOfBearer(
    std::optional<std::string_view> authorization) const {
  if (!enabled()) return Role::kAdmin;
  if (!authorization) {
    return absl::UnauthenticatedError("missing 'authorization: Bearer <token>' metadata");
  }
  absl::string_view value = ToAbsl(*authorization);
  // RFC 6750: the scheme is case-insensitive and followed by one or more spaces.
  constexpr absl::string_view kScheme = "bearer";
  if (value.size() <= kScheme.size() || !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme) ||
      value[kScheme.size()] != ' ') {
    return absl::UnauthenticatedError("authorization metadata must be 'Bearer <token>'");
  }
  std::string_view token = ToStd(absl::StripLeadingAsciiWhitespace(value.substr(kScheme.size())));
  if (Contains(admin_, token)) return Role::kAdmin;
  if (Contains(read_, token)) return Role::kRead;
  return absl::UnauthenticatedError("unknown token");
}

absl::Status Authorizer::CheckBearer(std::optional<std::string_view> authorization,
                                     Role needed) const {
  absl::StatusOr<Role> role = RoleOfBearer(authorization);
  if (!role.ok()) return role.status();
  if (*role == Role::kRead && needed == Role::kAdmin) {
    return absl::PermissionDeniedError(
        "this token is read-only; tuning, cancelling and importing need an admin token");
  }
  return absl::OkStatus();
}

absl::StatusOr<Role> Authorizer::RoleOf(const grpc::ServerContext& context) const {
  return RoleOfBearer(AuthorizationOf(context));
}

grpc::Status Authorizer::Check(const grpc::ServerContext& context, Role needed) const {
  if (!enabled()) return grpc::Status::OK;
  return ToGrpc(CheckBearer(AuthorizationOf(context), needed));
}

}  // namespace cutune::service
