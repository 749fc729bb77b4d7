#include "client/cli/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/results_view.h"

namespace cutune::cli {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

struct Rgb {
  double r, g, b;
};

// Viridis at five anchors: perceptually even, readable in grey and by colour-blind readers.
constexpr std::array<Rgb, 5> kViridis = {{{0x44, 0x01, 0x54},
                                          {0x3b, 0x52, 0x8b},
                                          {0x21, 0x91, 0x8c},
                                          {0x5e, 0xc9, 0x62},
                                          {0xfd, 0xe7, 0x25}}};

// t in [0, 1]: 0 worst, 1 best.
std::string Colour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const double pos = t * (kViridis.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(pos), kViridis.size() - 2);
  const double f = pos - i;
  auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return absl::StrFormat("#%02x%02x%02x", mix(kViridis[i].r, kViridis[i + 1].r),
                         mix(kViridis[i].g, kViridis[i + 1].g),
                         mix(kViridis[i].b, kViridis[i + 1].b));
}

std::string MetricName(ReportMetric metric, bool tflops) {
  switch (metric) {
    case ReportMetric::kPercentOfReference:
      return "% of reference";
    case ReportMetric::kTime:
      return "time (us)";
    case ReportMetric::kThroughput:
      return tflops ? "TFLOP/s" : "GB/s";
  }
  return "";
}

double MetricValue(const pb::Measurement& row, ReportMetric metric, bool tflops) {
  switch (metric) {
    case ReportMetric::kPercentOfReference:
      return row.percent_of_reference();
    case ReportMetric::kTime:
      return row.time_us();
    case ReportMetric::kThroughput:
      return tflops ? row.tflops() : row.gbps();
  }
  return 0;
}

std::string FormatMetric(double value, ReportMetric metric) {
  switch (metric) {
    case ReportMetric::kPercentOfReference:
      return absl::StrFormat("%.1f%%", value);
    case ReportMetric::kTime:
      return value >= 100 ? absl::StrFormat("%.0f", value) : absl::StrFormat("%.2f", value);
    case ReportMetric::kThroughput:
      return value >= 100 ? absl::StrFormat("%.0f", value) : absl::StrFormat("%.2f", value);
  }
  return "";
}

struct Cell {
  const pb::Measurement* best = nullptr;  // fastest ok row of this (x, y)
  int64_t rejected = 0;
};

struct Grid {
  std::vector<int64_t> xs, ys;
  std::map<std::pair<int64_t, int64_t>, Cell> cells;
  double lo = 0, hi = 0;  // metric range over cells with a best row
};

absl::StatusOr<Grid> BuildGrid(const ReportInput& input, bool tflops) {
  if (input.x == input.y) {
    return absl::InvalidArgumentError(
        absl::StrCat("--x and --y must name two different parameters (both are '", input.x, "')"));
  }
  std::set<std::string> names;
  for (const auto& row : input.rows) {
    for (const auto& [name, value] : row.params()) names.insert(name);
  }
  for (const std::string* axis : {&input.x, &input.y}) {
    if (!names.contains(*axis)) {
      return absl::InvalidArgumentError(
          absl::StrCat("no parameter '", *axis, "' in the rows of ", input.problem,
                       " (parameters: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  Grid grid;
  std::set<int64_t> xs, ys;
  for (const auto& row : input.rows) {
    auto x = row.params().find(input.x);
    auto y = row.params().find(input.y);
    if (x == row.params().end() || y == row.params().end()) continue;
    xs.insert(x->second);
    ys.insert(y->second);
    Cell& cell = grid.cells[{x->second, y->second}];
    if (row.outcome() != pb::OUTCOME_OK) {
      ++cell.rejected;
    } else if (cell.best == nullptr || row.time_us() < cell.best->time_us()) {
      cell.best = &row;
    }
  }
  grid.xs.assign(xs.begin(), xs.end());
  grid.ys.assign(ys.begin(), ys.end());
  bool any = false;
  for (const auto& [key, cell] : grid.cells) {
    if (cell.best == nullptr) continue;
    double v = MetricValue(*cell.best, input.metric, tflops);
    grid.lo = any ? std::min(grid.lo, v) : v;
    grid.hi = any ? std::max(grid.hi, v) : v;
    any = true;
  }
  if (!any) {
    return absl::NotFoundError(absl::StrCat("no valid candidate among the ", input.rows.size(),
                                            " rows of ", input.problem, ": nothing to draw"));
  }
  return grid;
}

}  // namespace

absl::StatusOr<std::string> RenderReportSvg(const ReportInput& input) {
  const bool tflops = UsesTflops(input.rows);
  auto built = BuildGrid(input, tflops);
  if (!built.ok()) return built.status();
  const Grid& grid = *built;
  const bool lower_is_better = input.metric == ReportMetric::kTime;
  const std::string metric = MetricName(input.metric, tflops);

  const int left = 120, top = 96;
  const int nx = static_cast<int>(grid.xs.size()), ny = static_cast<int>(grid.ys.size());
  const int cw = std::min(120, 620 / nx), ch = std::min(72, 440 / ny);
  const int gw = cw * nx, gh = ch * ny;
  const int legend_x = left + gw + 40;
  const std::vector<const pb::Measurement*> top10 = Ranked(input.rows, 10);
  const int list_top = top + gh + 90;
  const int width = 1160;
  const int height = list_top + 28 + 20 * static_cast<int>(top10.size()) + 40;

  std::string s;
  absl::StrAppendFormat(&s,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
                        width, height, width, height);
  absl::StrAppendFormat(&s, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height);
  absl::StrAppendFormat(
      &s, "<text x=\"24\" y=\"36\" font-size=\"22\" font-weight=\"bold\">%s on %s</text>\n",
      Escape(input.problem), Escape(input.device_model));
  absl::StrAppendFormat(&s,
                        "<text x=\"24\" y=\"62\" font-size=\"14\" fill=\"#444\">best %s by %s and "
                        "%s (other parameters: best over all values)</text>\n",
                        Escape(metric), Escape(input.x), Escape(input.y));

  // Cells.
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const int x = left + i * cw, y = top + j * ch;
      auto it = grid.cells.find({grid.xs[i], grid.ys[j]});
      std::string fill = "#f4f4f4", label = "", text_fill = "#888";
      if (it != grid.cells.end() && it->second.best != nullptr) {
        const double v = MetricValue(*it->second.best, input.metric, tflops);
        double t = grid.hi > grid.lo ? (v - grid.lo) / (grid.hi - grid.lo) : 1.0;
        if (lower_is_better) t = 1 - t;
        fill = Colour(t);
        label = FormatMetric(v, input.metric);
        text_fill = t < 0.6 ? "#ffffff" : "#000000";
      } else if (it != grid.cells.end()) {
        fill = "#d9d9d9";
        label = absl::StrCat(it->second.rejected, " rejected");
        text_fill = "#555";
      }
      absl::StrAppendFormat(&s,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                            "stroke=\"#ffffff\" stroke-width=\"2\"/>\n",
                            x, y, cw, ch, fill);
      if (!label.empty()) {
        absl::StrAppendFormat(&s,
                              "<text x=\"%d\" y=\"%d\" font-size=\"%d\" text-anchor=\"middle\" "
                              "fill=\"%s\">%s</text>\n",
                              x + cw / 2, y + ch / 2 + 5, cw >= 70 ? 14 : 10, text_fill,
                              Escape(label));
      }
    }
  }
  // Axes: tick labels and names.
  for (int i = 0; i < nx; ++i) {
    absl::StrAppendFormat(
        &s, "<text x=\"%d\" y=\"%d\" font-size=\"14\" text-anchor=\"middle\">%d</text>\n",
        left + i * cw + cw / 2, top + gh + 22, grid.xs[i]);
  }
  for (int j = 0; j < ny; ++j) {
    absl::StrAppendFormat(
        &s, "<text x=\"%d\" y=\"%d\" font-size=\"14\" text-anchor=\"end\">%d</text>\n", left - 10,
        top + j * ch + ch / 2 + 5, grid.ys[j]);
  }
  absl::StrAppendFormat(&s,
                        "<text x=\"%d\" y=\"%d\" font-size=\"16\" font-weight=\"bold\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        left + gw / 2, top + gh + 50, Escape(input.x));
  absl::StrAppendFormat(&s,
                        "<text x=\"40\" y=\"%d\" font-size=\"16\" font-weight=\"bold\" "
                        "text-anchor=\"middle\" transform=\"rotate(-90 40 %d)\">%s</text>\n",
                        top + gh / 2, top + gh / 2, Escape(input.y));

  // Colour scale: best at the top.
  s += "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (size_t k = 0; k < kViridis.size(); ++k) {
    const double t = static_cast<double>(k) / (kViridis.size() - 1);
    absl::StrAppendFormat(&s, "<stop offset=\"%.2f\" stop-color=\"%s\"/>\n", t, Colour(t));
  }
  s += "</linearGradient></defs>\n";
  absl::StrAppendFormat(&s,
                        "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"%d\" fill=\"url(#scale)\" "
                        "stroke=\"#333\"/>\n",
                        legend_x, top, gh);
  const double best = lower_is_better ? grid.lo : grid.hi;
  const double worst = lower_is_better ? grid.hi : grid.lo;
  absl::StrAppendFormat(&s, "<text x=\"%d\" y=\"%d\" font-size=\"13\">%s (best)</text>\n",
                        legend_x + 28, top + 12, FormatMetric(best, input.metric));
  absl::StrAppendFormat(&s, "<text x=\"%d\" y=\"%d\" font-size=\"13\">%s</text>\n", legend_x + 28,
                        top + gh, FormatMetric(worst, input.metric));
  absl::StrAppendFormat(&s, "<text x=\"%d\" y=\"%d\" font-size=\"13\" fill=\"#444\">%s</text>\n",
                        legend_x, top - 10, Escape(metric));

  // Ranked top 10.
  absl::StrAppendFormat(&s,
                        "<text x=\"24\" y=\"%d\" font-size=\"16\" font-weight=\"bold\">Top %d "
                        "candidates</text>\n",
                        list_top, top10.size());
  int line = 0;
  for (const pb::Measurement* row : top10) {
    std::string text =
        absl::StrFormat("%2d. %10.2f us  %s", line + 1, row->time_us(), Throughput(*row, tflops));
    if (row->percent_of_reference() > 0) {
      absl::StrAppendFormat(&text, "  %5.1f%% of ref", row->percent_of_reference());
    }
    absl::StrAppend(&text, "  ", FormatParams(ParamsOf(*row)));
    absl::StrAppendFormat(&s,
                          "<text x=\"24\" y=\"%d\" font-size=\"13\" font-family=\"DejaVu Sans "
                          "Mono, monospace\" xml:space=\"preserve\">%s</text>\n",
                          list_top + 26 + 20 * line, Escape(text));
    ++line;
  }
  std::map<std::string, int64_t> counts;
  for (const auto& row : input.rows) ++counts[OutcomeLabel(row.outcome())];
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts) parts.push_back(absl::StrCat(name, " ", n));
  absl::StrAppendFormat(
      &s, "<text x=\"24\" y=\"%d\" font-size=\"13\" fill=\"#444\">%d rows: %s</text>\n",
      height - 16, input.rows.size(), Escape(absl::StrJoin(parts, ", ")));
  s += "</svg>\n";
  return s;
}

absl::StatusOr<std::string> RenderReportHtml(const ReportInput& input) {
  auto svg = RenderReportSvg(input);
  if (!svg.ok()) return svg.status();
  std::string s = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cutune: ",
      Escape(input.problem), " on ", Escape(input.device_model),
      "</title>\n<style>\n"
      "body { margin: 8px; background: #ffffff; color: #111; font-family: 'DejaVu Sans', Arial, "
      "sans-serif; }\n"
      "table { border-collapse: collapse; margin: 8px 24px; font-size: 13px; }\n"
      "th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; }\n"
      "h2 { font-size: 16px; margin: 16px 24px 4px; }\n"
      "</style>\n</head>\n<body>\n",
      *svg, "<h2>Rejected candidates</h2>\n");
  std::vector<RejectedGroup> rejected = Rejected(input.rows);
  if (rejected.empty()) {
    s += "<p style=\"margin: 0 24px\">none</p>\n";
  } else {
    s += "<table>\n<tr><th>outcome</th><th>count</th><th>reason</th><th>e.g.</th></tr>\n";
    for (const RejectedGroup& g : rejected) {
      absl::StrAppend(&s, "<tr><td>", Escape(OutcomeLabel(g.outcome)), "</td><td>", g.count,
                      "</td><td>", Escape(g.reason), "</td><td>", Escape(FormatParams(g.example)),
                      "</td></tr>\n");
    }
    s += "</table>\n";
  }
  s += "</body>\n</html>\n";
  return s;
}

}  // namespace cutune::cli
