#include "client/cli/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "charts/sweep_charts.h"
#include "client/cli/profile_view.h"
#include "client/cli/results_view.h"

namespace cutune::cli {
namespace {

using charts::Escape;

std::string Colour(double t) { return charts::Viridis(t); }

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
      std::string fill = charts::kEmptyFill, label = "", text_fill = "#888";
      std::string stroke = "#ffffff", dash = "";
      if (it != grid.cells.end() && it->second.best != nullptr) {
        const double v = MetricValue(*it->second.best, input.metric, tflops);
        double t = grid.hi > grid.lo ? (v - grid.lo) / (grid.hi - grid.lo) : 1.0;
        if (lower_is_better) t = 1 - t;
        fill = Colour(t);
        label = FormatMetric(v, input.metric);
        text_fill = t < 0.6 ? "#ffffff" : "#000000";
      } else if (it != grid.cells.end()) {
        fill = charts::kRejectedFill;
        label = absl::StrCat(it->second.rejected, " rejected");
        text_fill = "#555";
      }
      if (it == grid.cells.end()) {  // no candidate at all: outlined, dashed, blank
        stroke = charts::kEmptyStroke;
        dash = " stroke-dasharray=\"4 3\"";
      }
      absl::StrAppendFormat(&s,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                            "stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                            x + 1, y + 1, cw - 2, ch - 2, fill, stroke, dash);
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
  for (int k = 0; k <= 4; ++k) {
    const double t = k / 4.0;
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
  // The two cells that carry no value, told apart by outline and label as well as shade.
  absl::StrAppendFormat(&s,
                        "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"14\" fill=\"%s\"/>"
                        "<text x=\"%d\" y=\"%d\" font-size=\"12\">all candidates rejected</text>\n"
                        "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"14\" fill=\"%s\" "
                        "stroke=\"%s\" stroke-dasharray=\"4 3\"/>"
                        "<text x=\"%d\" y=\"%d\" font-size=\"12\">empty: no candidate</text>\n",
                        legend_x, top + gh + 16, charts::kRejectedFill, legend_x + 28,
                        top + gh + 27, legend_x, top + gh + 38, charts::kEmptyFill,
                        charts::kEmptyStroke, legend_x + 28, top + gh + 49);

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
      height - 30, input.rows.size(), Escape(absl::StrJoin(parts, ", ")));
  absl::StrAppendFormat(
      &s, "<text x=\"24\" y=\"%d\" font-size=\"11\" fill=\"#666\" class=\"provenance\">%s</text>\n",
      height - 10,
      Escape(charts::ProvenanceLine(charts::ProvenanceOf(input.sweep, input.device_model))));
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
      ".charts svg { margin: 6px 8px 6px 24px; border: 1px solid #ddd; vertical-align: top; }\n"
      "</style>\n</head>\n<body>\n",
      *svg);
  // The sweep's other pictures, drawn as the dashboard draws them.
  charts::SweepData data;
  data.problem = input.problem;
  data.provenance = charts::ProvenanceOf(input.sweep, input.device_model);
  data.reference_name = input.sweep.reference_name();
  data.reference_us = input.sweep.reference_us();
  data.rows = input.rows;
  s += "<div class=\"charts\">\n";
  for (const auto& [id, chart] : charts::SweepCharts(data)) {
    absl::StrAppend(&s, "<div id=\"chart-", id, "\" style=\"display:inline-block\">", chart,
                    "</div>\n");
  }
  s += "</div>\n";
  // Nsight Compute counters of the profiled rows (`cutune profile`, e.g. of the winner).
  if (std::vector<const pb::Measurement*> ranked = Ranked(input.rows, 0);
      std::any_of(ranked.begin(), ranked.end(),
                  [](const pb::Measurement* r) { return r->profile().metrics_size() > 0; })) {
    s += "<h2>Profiled (Nsight Compute)</h2>\n<table id=\"profiles\">\n"
         "<tr><th>parameters</th><th>time (us)</th><th>counters</th></tr>\n";
    for (const pb::Measurement* row : ranked) {
      if (row->profile().metrics_size() == 0) continue;
      absl::StrAppend(&s, "<tr><td>", Escape(FormatParams(ParamsOf(*row))), "</td><td>",
                      absl::StrFormat("%.2f", row->time_us()), "</td><td>",
                      Escape(ProfileLine(row->profile())), "</td></tr>\n");
    }
    s += "</table>\n";
  }
  s += "<h2>Rejected candidates</h2>\n";
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
