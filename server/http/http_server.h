// cutuned's one HTTP server: GET routes (today /metrics; later the read-only dashboard's pages)
// on one address, plaintext or TLS, every request first passing one authorization check. Built
// on Debian's cpp-httplib, which stays inside http_server.cc: routes see only the small Request
// and Response below.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cutune::http {

struct Request {
  std::string method;                        // "GET" or "HEAD"
  std::string path;                          // without the query
  std::string peer;                          // "ADDRESS:PORT" of the client
  std::optional<std::string> authorization;  // the Authorization header, if sent
  std::map<std::string, std::string> query;  // ?name=value (decoded; the last of a repeated name)
  std::map<std::string, std::string> cookies;  // from the Cookie header
};

// The bearer credential a request carries: the Authorization header, else a `token` query
// parameter or cookie (what a browser can send), as "Bearer <token>"; nullopt: none.
std::optional<std::string> BearerOf(const Request& request);
inline constexpr char kTokenCookie[] = "cutune_token";

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Set-Cookie
};

using Handler = std::function<Response(const Request&)>;

// OK to serve the request; UNAUTHENTICATED (answered 401 with `WWW-Authenticate: Bearer`) or
// PERMISSION_DENIED (403) with the reason, which becomes the answer's body.
using Authorize = std::function<absl::Status(const Request&)>;

struct ServerOptions {
  std::string host;  // a numeric address or a name; "" listens on every IPv4 interface
  int port = 0;      // 0: the kernel picks one (port() says which)
  // PEM files; an empty cert means plaintext. With a client CA, clients must present a
  // certificate it signed (mutual TLS).
  std::string tls_cert, tls_key, tls_client_ca;
  Authorize authorize;  // empty: every request is served
  // The answer to a refused request (its status 401 or 403 is kept); empty: the reason as text.
  std::function<Response(const Request&, const absl::Status&)> refusal;
  int threads = 2;      // requests served at once
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves GET (and HEAD) `path` with `handler`; before Start. A path without a route is 404.
  void Route(std::string path, Handler handler);

  // Binds and starts serving on a thread of its own. INVALID_ARGUMENT: the TLS files do not
  // load; UNAVAILABLE: the address cannot be bound (in use, not this host's).
  absl::Status Start();
  int port() const { return port_; }
  // Stops taking connections and waits for the server's thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  ServerOptions options_;
  std::vector<std::pair<std::string, Handler>> routes_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace cutune::http
