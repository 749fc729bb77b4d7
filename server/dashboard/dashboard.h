// cutuned's read-only dashboard on its HTTP server: `/` (devices and jobs, live progress),
// `/sweep?job=ID` or `/sweep?family=F&shape=S[&dtype=D][&model=M]` (a sweep's pictures),
// `/tables` (the winners held and their staleness) and `/api/jobs` (the jobs as JSON, which the
// overview polls). Every page passes the server's one authorization check first; a browser
// that came with `?token=` gets it back as a cookie and is sent on to the same page without it.
#pragma once

#include <string>

#include "server/http/http_server.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"

namespace cutune::dashboard {

class Dashboard {
 public:
  // `secure`: the server speaks TLS (the token cookie is then marked Secure).
  Dashboard(const service::TunerService& service, store::Store& store, std::string version,
            bool secure);

  void AddRoutes(http::Server& server) const;

  // The answer to a refused page request: a token form (HTML) for pages, text for the rest.
  static http::Response Refusal(const http::Request& request, const absl::Status& why);

 private:
  http::Response Overview(const http::Request& request) const;
  http::Response Sweep(const http::Request& request) const;
  http::Response Tables(const http::Request& request) const;
  http::Response JobsApi(const http::Request& request) const;

  const service::TunerService& service_;
  store::Store& store_;
  std::string version_;
  bool secure_;
};

}  // namespace cutune::dashboard
