// The small SVG toolkit the charts share: escaping, the colour scales, axis scales with ticks,
// and the frame (title, provenance footer) every picture is drawn in. No fonts, scripts or
// styles from the network: everything a picture needs is in its own text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cutune::charts {

// Text for SVG and HTML (element content and attribute values).
std::string Escape(std::string_view text);

// Viridis at t in [0, 1] (0 worst, 1 best): perceptually even, readable in grey and by
// colour-blind readers. "#440154" at 0, "#fde725" at 1.
std::string Viridis(double t);
inline constexpr char kWorstColour[] = "#440154";
inline constexpr char kBestColour[] = "#fde725";

// Cells and bars with no candidate at all ("empty") and with only rejected candidates: two
// greys told apart by a dashed outline and a label, never by shade alone.
inline constexpr char kEmptyFill[] = "#ffffff";
inline constexpr char kEmptyStroke[] = "#9a9a9a";
inline constexpr char kRejectedFill[] = "#c8c8c8";
// The winner, wherever it is marked.
inline constexpr char kWinnerColour[] = "#d62728";
// Everything else that is a point of data.
inline constexpr char kPointColour[] = "#3b528b";

// A map from data to pixels, linear or log10, with round ticks.
class Scale {
 public:
  Scale(double lo, double hi, double pixel_lo, double pixel_hi, bool log);
  // Log when the data spans more than `ratio` (and is positive).
  static bool WantsLog(double lo, double hi, double ratio = 20);
  double operator()(double value) const;
  std::vector<double> Ticks() const;  // 3-8 round values within [lo, hi]
  bool log() const { return log_; }

 private:
  double lo_, hi_, pixel_lo_, pixel_hi_;
  bool log_;
};

// "123", "12.3", "1.23", "0.123": three significant figures, no exponent below 1e6.
std::string FormatNumber(double value);

// An SVG document being written: a title line, a subtitle, the drawing, and the provenance
// footer; Finish() closes it.
class Picture {
 public:
  Picture(int width, int height, std::string_view title, std::string_view subtitle,
          std::string_view provenance);
  std::string& body() { return body_; }
  // Axes: a left and a bottom line with ticks and names.
  void XAxis(const Scale& x, double y_pixel, double left, double right, std::string_view name);
  // With `grid_right` past x_pixel, faint lines at the ticks across the plot.
  void YAxis(const Scale& y, double x_pixel, double top, double bottom, std::string_view name,
             double grid_right = 0);
  void Text(double x, double y, std::string_view text, int size = 12,
            std::string_view anchor = "start", std::string_view fill = "#222");
  std::string Finish() &&;

  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_, height_;
  std::string body_;
  std::string provenance_;
};

// Provenance as every picture and page prints it: a driver version (13000 -> "13.0"; "—" for
// none) and a time in milliseconds since the epoch ("2026-12-01 21:04 UTC").
std::string DriverText(int version);
std::string DateText(int64_t ms);

}  // namespace cutune::charts
