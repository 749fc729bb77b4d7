// String helpers every component shares. Debian's abseil (20220623) is built with its own
// absl::string_view, distinct from std::string_view, so absl's string utilities do not accept
// std::string_view. cutune's interfaces use std::string_view; ToAbsl/ToStd are the bridge.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace cutune {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

// A client's text echoed in an error message: quoted, control bytes escaped, and cut after `max`
// bytes (with the full length), so a 1 MB name cannot turn NOT_FOUND into an oversized reply.
inline std::string Quoted(std::string_view text, size_t max = 64) {
  const bool cut = text.size() > max;
  std::string out = absl::StrCat("'", absl::CHexEscape(ToAbsl(text.substr(0, max))), "'");
  if (cut) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

// The shortest decimal text that reads back as the same double ("0.1", not %.17g's
// "0.10000000000000001"), for logs and metrics.
inline std::string ShortestText(double value) {
  for (int precision = 6; precision < 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    if (std::strtod(text.c_str(), nullptr) == value) return text;
  }
  return absl::StrFormat("%.17g", value);
}

}  // namespace cutune
