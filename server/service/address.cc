#include "server/service/address.h"

#include <arpa/inet.h>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/core/strings.h"

namespace cutune::service {
namespace {

bool IsLoopbackHost(const std::string& host) {
  if (absl::AsciiStrToLower(host) == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  }
  return false;  // a name: it may resolve anywhere
}

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad listen address ", Quoted(text, 200), ": ", ToAbsl(why)));
}

}  // namespace

std::string ListenAddress::WithPort(int bound_port) const {
  if (kind == Kind::kUnix) return abstract ? "unix-abstract:" + path : "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return absl::StrCat(v6 ? "[" : "", host, v6 ? "]" : "", ":", bound_port);
}

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress out;
  for (std::string_view scheme : {"unix:", "unix-abstract:"}) {
    if (text.starts_with(scheme)) {
      out.kind = ListenAddress::Kind::kUnix;
      out.abstract = scheme == "unix-abstract:";
      out.path = std::string(text.substr(scheme.size()));
      out.loopback = true;
      if (out.path.empty()) return Bad(text, "no socket path");
      if (out.path.find('\0') != std::string::npos) return Bad(text, "NUL in the path");
      return out;
    }
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "expected HOST:PORT or unix:PATH");
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.starts_with("[")) {
    if (!host.ends_with("]")) return Bad(text, "unbalanced '[' around an IPv6 address");
    host = host.substr(1, host.size() - 2);
    in6_addr v6{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
      return Bad(text, "not an IPv6 address inside [...]");
    }
  } else if (host.find(':') != std::string_view::npos) {
    return Bad(text, "an IPv6 address needs brackets: [ADDRESS]:PORT");
  }
  if (host.find_first_of(std::string_view("\0/ \t", 4)) != std::string_view::npos) {
    return Bad(text, "the host holds a character no host name has");
  }
  int number = -1;
  if (port.empty() || port.size() > 5 || !absl::c_all_of(port, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(ToAbsl(port), &number) || number > 65535) {
    return Bad(text, "the port must be a number in [0, 65535]");
  }
  out.host = std::string(host);
  out.port = number;
  out.loopback = IsLoopbackHost(out.host);
  return out;
}

absl::Status CheckExposure(const ListenAddress& address, std::string_view flag,
                           const ExposureGuards& guards) {
  if (address.loopback) return absl::OkStatus();
  const std::string where = address.WithPort(address.port);
  if (!guards.tls && !guards.allow_insecure_remote) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing plaintext on non-loopback address '", where, "' (", ToAbsl(flag),
        "): give --tls-cert/--tls-key, listen on 127.0.0.1",
        flag == "--listen" ? " or unix:PATH" : "", ", or pass --allow-insecure-remote"));
  }
  if (!guards.authenticated && !guards.allow_unauthenticated) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to serve non-loopback address '", where, "' (", ToAbsl(flag),
        ") to anyone who reaches it: give --admin-tokens/--read-tokens or --tls-client-ca, or "
        "pass --allow-unauthenticated"));
  }
  return absl::OkStatus();
}

}  // namespace cutune::service
