#include "client/lib/connection.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "server/core/files.h"
#include "server/core/limits.h"

namespace cutune::client {
namespace {

std::string FromEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", text.status().message()));
  }
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const ConnectionOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  const bool tls = options.tls || !options.tls_ca.empty() || !options.tls_cert.empty();
  if (!tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca.empty()) {
    auto ca = ReadPem("--tls-ca", options.tls_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  if (!options.tls_cert.empty()) {
    auto cert = ReadPem("--tls-cert", options.tls_cert);
    if (!cert.ok()) return cert.status();
    auto key = ReadPem("--tls-key", options.tls_key);
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

std::string ResolveTarget(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::string env = FromEnv(kServerEnv);
  return env.empty() ? kDefaultTarget : env;
}

std::string ResolveToken(const std::string& flag) {
  return flag.empty() ? FromEnv(kTokenEnv) : flag;
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const ConnectionOptions& options) {
  auto credentials = Credentials(options);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  // The daemon's own limit: an exported table always arrives, and an import is never refused by
  // the client before the daemon could answer.
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  std::string target = ResolveTarget(options.server);
  auto channel = grpc::CreateCustomChannel(target, *credentials, args);
  return std::unique_ptr<Connection>(new Connection(std::move(target), ResolveToken(options.token),
                                                    options.deadline, std::move(channel)));
}

Connection::Connection(std::string target, std::string token, std::chrono::milliseconds deadline,
                       std::shared_ptr<grpc::Channel> channel)
    : target_(std::move(target)),
      token_(std::move(token)),
      deadline_(deadline),
      channel_(std::move(channel)),
      stub_(pb::Tuner::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> Connection::NewContext(
    std::optional<std::chrono::milliseconds> deadline) const {
  auto context = std::make_unique<grpc::ClientContext>();
  // Plain metadata rather than grpc::AccessTokenCredentials: call credentials are refused on
  // plaintext channels, and cutuned allows those on loopback and unix sockets.
  if (!token_.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
  const std::chrono::milliseconds d = deadline.value_or(deadline_);
  if (d.count() > 0) context->set_deadline(std::chrono::system_clock::now() + d);
  return context;
}

absl::Status Connection::Convert(const grpc::Status& status) const {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  // A daemon that answered leaves the channel READY; anything else means we never got through.
  const bool unreached = channel_->GetState(false) != GRPC_CHANNEL_READY;
  if (code == absl::StatusCode::kUnavailable && unreached) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach cutuned at ", target_, ": ", status.error_message()));
  }
  if (code == absl::StatusCode::kDeadlineExceeded && unreached) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer from cutuned at ", target_, " before the deadline"));
  }
  return absl::Status(code, status.error_message());
}

}  // namespace cutune::client
