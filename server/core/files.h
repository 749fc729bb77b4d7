// Whole-file reads shared by the daemon and the CLI (certificates, table files).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace cutune {

// The file's bytes; NOT_FOUND "cannot read '<path>'" when it cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace cutune
