// A minimal PNG reader for checking screenshots: 8-bit RGB or RGBA, not interlaced (what
// Chromium writes). Enough to count colours; not a general decoder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cutune::testing {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint32_t> pixels;  // 0xRRGGBB, row-major
};

absl::StatusOr<Image> DecodePng(const std::string& bytes);

}  // namespace cutune::testing
