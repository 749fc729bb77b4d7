// Debian's abseil (20220623) is built with its own absl::string_view, distinct from
// std::string_view, so absl's string utilities do not accept std::string_view. cutune's
// interfaces use std::string_view; these two conversions are the bridge.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace cutune {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace cutune
