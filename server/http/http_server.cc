// Debian builds cpp-httplib as a shared library with OpenSSL, zlib and Brotli support
// (CPPHTTPLIB_OPENSSL_SUPPORT and the others come from its pkg-config Cflags, which CMake applies
// to this file): the header must be compiled with the same defines as the library, or
// httplib::Server's layout differs from the one the library was built with.
#include "server/http/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"

namespace cutune::http {

struct Server::Impl {
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
};

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() { Stop(); }

void Server::Route(std::string path, Handler handler) {
  routes_.emplace_back(std::move(path), std::move(handler));
}

namespace {

Request ToRequest(const httplib::Request& in) {
  Request out;
  out.method = in.method;
  out.path = in.path;
  out.peer = absl::StrCat(in.remote_addr, ":", in.remote_port);
  if (in.has_header("Authorization")) out.authorization = in.get_header_value("Authorization");
  for (const auto& [name, value] : in.params) out.query[name] = value;
  if (in.has_header("Cookie")) {
    for (absl::string_view part : absl::StrSplit(in.get_header_value("Cookie"), ';')) {
      part = absl::StripAsciiWhitespace(part);
      const size_t eq = part.find('=');
      if (eq == absl::string_view::npos) continue;
      out.cookies[std::string(part.substr(0, eq))] = std::string(part.substr(eq + 1));
    }
  }
  return out;
}

void Answer(const Response& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [name, value] : in.headers) out.set_header(name, value);
  out.set_content(in.body, in.content_type.c_str());
}

}  // namespace

std::optional<std::string> BearerOf(const Request& request) {
  if (request.authorization) return request.authorization;
  if (auto it = request.query.find("token"); it != request.query.end() && !it->second.empty()) {
    return absl::StrCat("Bearer ", it->second);
  }
  if (auto it = request.cookies.find(kTokenCookie);
      it != request.cookies.end() && !it->second.empty()) {
    return absl::StrCat("Bearer ", it->second);
  }
  return std::nullopt;
}

absl::Status Server::Start() {
  if (impl_) return absl::FailedPreconditionError("the HTTP server is started already");
  auto impl = std::make_unique<Impl>();
  if (options_.tls_cert.empty()) {
    impl->server = std::make_unique<httplib::Server>();
  } else {
    auto tls = std::make_unique<httplib::SSLServer>(
        options_.tls_cert.c_str(), options_.tls_key.c_str(),
        options_.tls_client_ca.empty() ? nullptr : options_.tls_client_ca.c_str());
    if (!tls->is_valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot set up TLS for the HTTP server from '", options_.tls_cert, "' and '",
                       options_.tls_key, "'",
                       options_.tls_client_ca.empty()
                           ? ""
                           : absl::StrCat(" with client CA '", options_.tls_client_ca, "'"),
                       " (not PEM, or the key does not match the certificate?)"));
    }
    impl->server = std::move(tls);
  }
  httplib::Server& server = *impl->server;
  const int threads = std::max(1, options_.threads);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib's default turns SO_REUSEPORT on, so a second daemon on the same port would start
  // and share the scrapes at random (the gRPC listener turns it off for the same reason).
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_keep_alive_timeout(5);
  server.set_read_timeout(5);
  server.set_write_timeout(5);
  server.set_payload_max_length(64 * 1024);  // GET routes read no body
  if (options_.authorize) {
    server.set_pre_routing_handler(
        [authorize = options_.authorize, refusal = options_.refusal](const httplib::Request& in,
                                                                     httplib::Response& out) {
          const Request request = ToRequest(in);
          const absl::Status allowed = authorize(request);
          if (allowed.ok()) return httplib::Server::HandlerResponse::Unhandled;
          const bool who = allowed.code() == absl::StatusCode::kUnauthenticated;
          if (who) out.set_header("WWW-Authenticate", "Bearer");
          Response answer{0, "text/plain; charset=utf-8",
                          absl::StrCat(std::string(allowed.message()), "\n"), {}};
          if (refusal) answer = refusal(request, allowed);
          answer.status = who ? 401 : 403;
          Answer(answer, out);
          return httplib::Server::HandlerResponse::Handled;
        });
  }
  for (const auto& [path, handler] : routes_) {
    server.Get(path, [handler = handler](const httplib::Request& in, httplib::Response& out) {
      Answer(handler(ToRequest(in)), out);
    });
  }
  // httplib takes a host it resolves; "" is not one of them.
  const std::string host = options_.host.empty() ? "0.0.0.0" : options_.host;
  const int port = options_.port == 0
                       ? server.bind_to_any_port(host)
                       : (server.bind_to_port(host, options_.port) ? options_.port : -1);
  if (port < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on '", options_.host, ":", options_.port,
        "' for HTTP (in use by another cutuned or program? a host this machine does not have?)"));
  }
  port_ = port;
  impl->thread = std::thread([&server] { server.listen_after_bind(); });
  // stop() before the listening loop has begun would be lost, and the loop would then never
  // end: wait until it runs.
  for (int i = 0; i < 5000 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_ = std::move(impl);
  return absl::OkStatus();
}

void Server::Stop() {
  if (!impl_) return;
  impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_.reset();
}

}  // namespace cutune::http
