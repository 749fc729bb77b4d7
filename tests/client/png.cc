#include "tests/client/png.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cutune::testing {
namespace {

uint32_t BigEndian(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace

absl::StatusOr<Image> DecodePng(const std::string& bytes) {
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) {
    return absl::InvalidArgumentError("not a PNG file");
  }
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  Image image;
  int colour_type = -1;
  std::string idat;
  for (size_t pos = 8; pos + 12 <= bytes.size();) {
    const uint32_t length = BigEndian(data + pos);
    const std::string type(bytes.data() + pos + 4, 4);
    if (pos + 12 + length > bytes.size()) return absl::InvalidArgumentError("truncated chunk");
    const unsigned char* body = data + pos + 8;
    if (type == "IHDR") {
      image.width = static_cast<int>(BigEndian(body));
      image.height = static_cast<int>(BigEndian(body + 4));
      colour_type = body[9];
      if (body[8] != 8 || (colour_type != 2 && colour_type != 6) || body[12] != 0) {
        return absl::UnimplementedError(absl::StrCat("PNG bit depth ", body[8], " colour type ",
                                                     colour_type, " interlace ", body[12]));
      }
    } else if (type == "IDAT") {
      idat.append(reinterpret_cast<const char*>(body), length);
    } else if (type == "IEND") {
      break;
    }
    pos += 12 + length;
  }
  if (colour_type < 0) return absl::InvalidArgumentError("no IHDR chunk");
  const int channels = colour_type == 6 ? 4 : 3;
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::string raw((stride + 1) * image.height, '\0');
  uLongf raw_size = raw.size();
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                 reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    return absl::InvalidArgumentError("IDAT does not inflate to the image size");
  }
  std::vector<unsigned char> previous(stride, 0), row(stride);
  image.pixels.reserve(static_cast<size_t>(image.width) * image.height);
  for (int y = 0; y < image.height; ++y) {
    const auto* line = reinterpret_cast<const unsigned char*>(raw.data()) + y * (stride + 1);
    const int filter = line[0];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<size_t>(channels) ? previous[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4:
          predictor = Paeth(a, b, c);
          break;
        default:
          return absl::InvalidArgumentError(absl::StrCat("bad filter ", filter));
      }
      row[i] = static_cast<unsigned char>(line[1 + i] + predictor);
    }
    for (int x = 0; x < image.width; ++x) {
      const unsigned char* p = &row[static_cast<size_t>(x) * channels];
      image.pixels.push_back((uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]);
    }
    previous.swap(row);
  }
  return image;
}

}  // namespace cutune::testing
