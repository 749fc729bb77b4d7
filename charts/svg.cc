#include "charts/svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cutune::charts {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {
struct Rgb {
  double r, g, b;
};
constexpr std::array<Rgb, 5> kViridis = {{{0x44, 0x01, 0x54},
                                          {0x3b, 0x52, 0x8b},
                                          {0x21, 0x91, 0x8c},
                                          {0x5e, 0xc9, 0x62},
                                          {0xfd, 0xe7, 0x25}}};
}  // namespace

std::string Viridis(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const double pos = t * (kViridis.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(pos), kViridis.size() - 2);
  const double f = pos - i;
  auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return absl::StrFormat("#%02x%02x%02x", mix(kViridis[i].r, kViridis[i + 1].r),
                         mix(kViridis[i].g, kViridis[i + 1].g),
                         mix(kViridis[i].b, kViridis[i + 1].b));
}

Scale::Scale(double lo, double hi, double pixel_lo, double pixel_hi, bool log)
    : lo_(lo), hi_(hi), pixel_lo_(pixel_lo), pixel_hi_(pixel_hi), log_(log && lo > 0 && hi > 0) {
  if (!(hi_ > lo_)) {  // one value (or none): a range around it
    const double pad = lo_ == 0 ? 1 : std::abs(lo_) * 0.1;
    lo_ -= log_ ? lo_ * 0.5 : pad;
    hi_ += pad;
  }
}

bool Scale::WantsLog(double lo, double hi, double ratio) { return lo > 0 && hi / lo > ratio; }

double Scale::operator()(double value) const {
  double t;
  if (log_) {
    t = (std::log10(std::max(value, lo_ * 1e-3)) - std::log10(lo_)) /
        (std::log10(hi_) - std::log10(lo_));
  } else {
    t = (value - lo_) / (hi_ - lo_);
  }
  return pixel_lo_ + t * (pixel_hi_ - pixel_lo_);
}

std::vector<double> Scale::Ticks() const {
  std::vector<double> ticks;
  if (log_) {
    for (double decade = std::pow(10, std::floor(std::log10(lo_))); decade <= hi_; decade *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = decade * m;
        if (v >= lo_ * 0.999 && v <= hi_ * 1.001) ticks.push_back(v);
      }
    }
    if (ticks.size() > 8) {  // decades only
      std::erase_if(ticks, [](double v) {
        const double l = std::log10(v);
        return std::abs(l - std::round(l)) > 1e-9;
      });
    }
    if (ticks.size() >= 2) return ticks;
    ticks.clear();
  }
  const double span = hi_ - lo_;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(lo_ / step) * step; v <= hi_ + step * 1e-9; v += step) {
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  }
  return ticks;
}

std::string FormatNumber(double value) {
  const double a = std::abs(value);
  if (a >= 1e6) return absl::StrFormat("%.3g", value);
  if (a >= 100 || a == 0) return absl::StrFormat("%.0f", value);
  if (a >= 10) return absl::StrFormat("%.1f", value);
  if (a >= 1) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.3g", value);
}

Picture::Picture(int width, int height, std::string_view title, std::string_view subtitle,
                 std::string_view provenance)
    : width_(width), height_(height), provenance_(provenance) {
  absl::StrAppendFormat(&body_,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
                        "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                        width, height, width, height, width, height);
  absl::StrAppendFormat(&body_,
                        "<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\" "
                        "fill=\"#111\">%s</text>\n",
                        Escape(title));
  if (!subtitle.empty()) Text(16, 42, subtitle, 12, "start", "#555");
}

void Picture::Text(double x, double y, std::string_view text, int size, std::string_view anchor,
                   std::string_view fill) {
  absl::StrAppendFormat(&body_,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\" "
                        "fill=\"%s\">%s</text>\n",
                        x, y, size, anchor, fill, Escape(text));
}

void Picture::XAxis(const Scale& x, double y_pixel, double left, double right,
                    std::string_view name) {
  absl::StrAppendFormat(&body_,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                        left, y_pixel, right, y_pixel);
  for (double t : x.Ticks()) {
    const double px = x(t);
    absl::StrAppendFormat(
        &body_, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", px,
        y_pixel, px, y_pixel + 4);
    Text(px, y_pixel + 16, FormatNumber(t), 10, "middle", "#333");
  }
  Text((left + right) / 2, y_pixel + 32, name, 11, "middle", "#222");
}

void Picture::YAxis(const Scale& y, double x_pixel, double top, double bottom,
                    std::string_view name, double grid_right) {
  absl::StrAppendFormat(&body_,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                        x_pixel, top, x_pixel, bottom);
  for (double t : y.Ticks()) {
    const double py = y(t);
    absl::StrAppendFormat(&body_,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                          x_pixel - 4, py, x_pixel, py);
    if (grid_right > x_pixel) {
      absl::StrAppendFormat(
          &body_,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ececec\"/>\n",
          x_pixel + 1, py, grid_right, py);
    }
    Text(x_pixel - 6, py + 4, FormatNumber(t), 10, "end", "#333");
  }
  const double mid = (top + bottom) / 2;
  absl::StrAppendFormat(&body_,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
                        x_pixel - 40, mid, x_pixel - 40, mid, Escape(name));
}

std::string Picture::Finish() && {
  absl::StrAppendFormat(&body_,
                        "<text x=\"16\" y=\"%d\" font-size=\"10\" fill=\"#666\" "
                        "class=\"provenance\">%s</text>\n</svg>\n",
                        height_ - 8, Escape(provenance_));
  return std::move(body_);
}

std::string DriverText(int version) {
  return version > 0 ? absl::StrCat(version / 1000, ".", (version % 1000) / 10) : "—";
}

std::string DateText(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

}  // namespace cutune::charts
