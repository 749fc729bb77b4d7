#include "charts/sweep_charts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "charts/svg.h"

namespace cutune::charts {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool Ok(const pb::Measurement& row) { return row.outcome() == pb::OUTCOME_OK && row.time_us() > 0; }

std::string Short(const std::string& hash) {
  return hash.size() > 12 ? absl::StrCat(hash.substr(0, 8), "…", hash.substr(hash.size() - 4))
                          : hash;
}

std::string Subtitle(const SweepData& data) { return data.problem; }

// A small deterministic jitter so that equal values of a strip do not hide each other.
double Jitter(size_t i) { return (static_cast<double>((i * 2654435761u) % 1000) / 1000.0 - 0.5); }

std::string Circle(double x, double y, double r, std::string_view fill, double opacity = 0.75) {
  return absl::StrFormat(
      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n", x, y, r,
      fill, opacity);
}

std::string Line(double x1, double y1, double x2, double y2, std::string_view stroke,
                 std::string_view extra = "") {
  return absl::StrFormat(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" %s/>\n", x1, y1, x2, y2,
      stroke, extra);
}

// A picture with nothing to draw says so in words (never an empty frame).
std::string Nothing(const SweepData& data, std::string_view title, std::string_view why) {
  Picture p(560, 140, title, Subtitle(data), ProvenanceLine(data.provenance));
  p.Text(16, 80, why, 13, "start", "#555");
  return std::move(p).Finish();
}

std::pair<double, double> TimeRange(const std::vector<pb::Measurement>& rows) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& row : rows) {
    if (!Ok(row)) continue;
    lo = any ? std::min(lo, row.time_us()) : row.time_us();
    hi = any ? std::max(hi, row.time_us()) : row.time_us();
    any = true;
  }
  return {lo, hi};
}

Scale TimeScale(const std::vector<pb::Measurement>& rows, double bottom, double top) {
  auto [lo, hi] = TimeRange(rows);
  const bool log = Scale::WantsLog(lo, hi, 4);
  return Scale(log ? lo / 1.15 : lo * 0.95, hi * 1.05, bottom, top, log);
}

}  // namespace

std::string ProvenanceLine(const Provenance& p) {
  std::vector<std::string> parts;
  parts.push_back(p.device_model.empty() ? "device unknown" : p.device_model);
  if (p.sweep_id > 0) parts.push_back(absl::StrCat("sweep ", p.sweep_id));
  if (!p.source_hash.empty()) parts.push_back(absl::StrCat("source ", Short(p.source_hash)));
  parts.push_back(p.driver_version > 0 ? absl::StrCat("driver ", DriverText(p.driver_version))
                                       : "driver unknown");
  parts.push_back(p.nvrtc_version.empty() ? "NVRTC unknown"
                                          : absl::StrCat("NVRTC ", p.nvrtc_version));
  if (!p.timing.empty()) parts.push_back(absl::StrCat(p.timing, " start"));
  if (p.date_ms > 0) parts.push_back(DateText(p.date_ms));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) absl::StrAppend(&out, i ? " · " : "", parts[i]);
  return out;
}

Provenance ProvenanceOf(const pb::SweepSummary& sweep, const std::string& device_model) {
  return {device_model,          sweep.source_hash(), sweep.driver_version(), sweep.nvrtc_version(),
          sweep.started_at_ms(), sweep.sweep_id(),    sweep.timing()};
}

SweepData FromResults(std::string problem, const pb::ListResultsResponse& results) {
  SweepData data;
  data.problem = std::move(problem);
  data.provenance = ProvenanceOf(results.sweep(), results.device_model());
  data.reference_name = results.sweep().reference_name();
  data.reference_us = results.sweep().reference_us();
  data.rows.assign(results.rows().begin(), results.rows().end());
  return data;
}

const pb::Measurement* Winner(const std::vector<pb::Measurement>& rows) {
  const pb::Measurement* best = nullptr;
  for (const auto& row : rows) {
    if (Ok(row) && (best == nullptr || row.time_us() < best->time_us())) best = &row;
  }
  return best;
}

Ranking RankCandidates(const std::vector<pb::Measurement>& rows) {
  Ranking r;
  const pb::Measurement* winner = Winner(rows);
  if (winner == nullptr) return r;
  r.of_reference = winner->percent_of_reference() > 0;
  for (const auto& row : rows) {
    if (!Ok(row)) continue;
    r.percent.push_back(r.of_reference ? row.percent_of_reference()
                                       : 100 * winner->time_us() / row.time_us());
    const double slower = row.time_us() / winner->time_us() - 1;
    r.within_1 += slower <= 0.01;
    r.within_5 += slower <= 0.05;
  }
  std::sort(r.percent.begin(), r.percent.end(), std::greater<>());
  return r;
}

std::vector<double> BestSoFar(const std::vector<pb::Measurement>& rows) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].sequence() < rows[b].sequence();
  });
  std::vector<double> best;
  double so_far = kNaN;
  for (size_t i : order) {
    if (Ok(rows[i]) && !(rows[i].time_us() >= so_far)) so_far = rows[i].time_us();
    best.push_back(so_far);
  }
  return best;
}

std::vector<OutcomeCount> CountOutcomes(const std::vector<pb::Measurement>& rows) {
  // Each outcome its own colour: the good one green, the space's own refusals (pruned, out of
  // resources) quiet, compiler and correctness failures warm, the process-killing ones dark.
  std::vector<OutcomeCount> counts = {
      {pb::OUTCOME_OK, "ok", "#2a9d8f"},
      {pb::OUTCOME_PRUNED, "pruned", "#8d99ae"},
      {pb::OUTCOME_OUT_OF_RESOURCES, "out of resources", "#e9c46a"},
      {pb::OUTCOME_COMPILE_FAILED, "compile failed", "#f4a261"},
      {pb::OUTCOME_WRONG_ANSWER, "wrong answer", "#e76f51"},
      {pb::OUTCOME_TIMEOUT, "timeout", "#6a4c93"},
      {pb::OUTCOME_FAULT, "fault (crash)", "#7f1d1d"},
  };
  for (const auto& row : rows) {
    for (OutcomeCount& c : counts) c.count += c.outcome == row.outcome();
  }
  return counts;
}

std::vector<Strip> Strips(const std::vector<pb::Measurement>& rows) {
  std::map<std::string, std::map<int64_t, std::vector<double>>> by_param;
  for (const auto& row : rows) {
    for (const auto& [name, value] : row.params()) {
      auto& times = by_param[name][value];
      if (Ok(row)) times.push_back(row.time_us());
    }
  }
  const pb::Measurement* winner = Winner(rows);
  std::vector<Strip> strips;
  for (auto& [name, values] : by_param) {
    Strip s;
    s.parameter = name;
    for (auto& [value, times] : values) {
      s.values.push_back(value);
      s.times.push_back(std::move(times));
    }
    if (winner != nullptr) {
      auto it = winner->params().find(name);
      if (it != winner->params().end()) s.winner_value = it->second;
    }
    strips.push_back(std::move(s));
  }
  return strips;
}

Roofline RooflineOf(const SweepData& data) {
  Roofline r;
  const pb::Measurement* winner = Winner(data.rows);
  if (winner == nullptr || winner->percent_of_reference() <= 0) return r;
  const bool tflops = winner->tflops() > 0;
  r.winner = tflops ? winner->tflops() : winner->gbps();
  if (r.winner <= 0) return r;
  r.unit = tflops ? "TFLOP/s" : "GB/s";
  r.percent = winner->percent_of_reference();
  r.ceiling = r.winner / (r.percent / 100);
  r.available = true;
  return r;
}

std::string PercentChart(const SweepData& data) {
  const char* title = "Every candidate, sorted";
  const Ranking r = RankCandidates(data.rows);
  if (r.percent.empty()) return Nothing(data, title, "no candidate passed: nothing to rank");
  const int w = 560, h = 300, left = 60, right = w - 20, top = 60, bottom = h - 60;
  const std::string what =
      r.of_reference ? absl::StrCat("% of ", data.reference_name.empty() ? "reference"
                                                                         : data.reference_name)
                     : "% of the winner's speed";
  Picture p(w, h, title, Subtitle(data), ProvenanceLine(data.provenance));
  const double hi = std::max(100.0, r.percent.front()) * 1.05;
  Scale y(0, hi, bottom, top, false);
  Scale x(1, std::max<double>(2, r.percent.size()), left, right, false);
  p.YAxis(y, left, top, bottom, what, right);
  p.XAxis(x, bottom, left, right, "rank (1 = winner)");
  std::string& s = p.body();
  // The winner's band: within 1% and 5% of it.
  const double best = r.percent.front();
  for (auto [frac, shade] : {std::pair{0.95, "#fde72533"}, std::pair{0.99, "#fde72599"}}) {
    absl::StrAppendFormat(&s,
                          "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n",
                          left + 1, y(best), right - left - 1, y(best * frac) - y(best), shade);
  }
  if (r.of_reference) s += Line(left, y(100), right, y(100), "#333", "stroke-dasharray=\"5 3\"");
  for (size_t i = 0; i < r.percent.size(); ++i) {
    s += Circle(x(i + 1.0), y(r.percent[i]), r.percent.size() > 300 ? 1.6 : 2.6,
                i == 0 ? kWinnerColour : kPointColour, i == 0 ? 1 : 0.7);
  }
  p.Text(right, top - 4,
         absl::StrFormat("winner %.1f%%; %d of %d within 1%%, %d within 5%% of it", best,
                         r.within_1, r.percent.size(), r.within_5),
         11, "end", "#222");
  return std::move(p).Finish();
}

std::string ParameterChart(const SweepData& data) {
  const char* title = "Time against each parameter";
  std::vector<Strip> strips = Strips(data.rows);
  auto [lo, hi] = TimeRange(data.rows);
  if (strips.empty() || hi <= 0) return Nothing(data, title, "no ok candidate: nothing to plot");
  const int cols = strips.size() <= 4 ? static_cast<int>(strips.size()) : 4;
  const int pw = 250, ph = 170;
  const int rows_n = (static_cast<int>(strips.size()) + cols - 1) / cols;
  const int w = std::max(560, cols * pw + 20), h = 70 + rows_n * ph + 30;
  Picture p(w, h, title,
            absl::StrCat(Subtitle(data), " · each dot an ok candidate; red: the winner's value"),
            ProvenanceLine(data.provenance));
  for (size_t k = 0; k < strips.size(); ++k) {
    const Strip& st = strips[k];
    const int ox = 10 + static_cast<int>(k % cols) * pw, oy = 60 + static_cast<int>(k / cols) * ph;
    const double l = ox + 52, r = ox + pw - 10, t = oy + 18, b = oy + ph - 36;
    Scale y = TimeScale(data.rows, b, t);
    p.YAxis(y, l, t, b, "time (us)", r);
    std::string& s = p.body();
    s += Line(l, b, r, b, "#333");
    const double band = (r - l) / st.values.size();
    for (size_t v = 0; v < st.values.size(); ++v) {
      const double cx = l + band * (v + 0.5);
      const bool win = st.values[v] == st.winner_value;
      p.Text(cx, b + 13, absl::StrCat(st.values[v]), 10, "middle", win ? kWinnerColour : "#333");
      if (st.times[v].empty()) {
        p.Text(cx, (t + b) / 2, "none ok", 9, "middle", "#999");
        continue;
      }
      for (size_t i = 0; i < st.times[v].size(); ++i) {
        s += Circle(cx + Jitter(i) * band * 0.6, y(st.times[v][i]), 1.8, kPointColour, 0.45);
      }
      if (win) {
        s += Circle(cx, y(*std::min_element(st.times[v].begin(), st.times[v].end())), 3.6,
                    kWinnerColour, 1);
      }
    }
    p.Text((l + r) / 2, b + 27, st.parameter, 11, "middle", "#111");
  }
  return std::move(p).Finish();
}

std::string BestSoFarChart(const SweepData& data) {
  const char* title = "Best so far against evaluations";
  const std::vector<double> best = BestSoFar(data.rows);
  auto [lo, hi] = TimeRange(data.rows);
  if (hi <= 0) return Nothing(data, title, "no ok candidate yet");
  const int w = 560, h = 300, left = 70, right = w - 20, top = 60, bottom = h - 60;
  Picture p(w, h, title, Subtitle(data), ProvenanceLine(data.provenance));
  Scale y = TimeScale(data.rows, bottom, top);
  Scale x(1, std::max<double>(2, best.size()), left, right, false);
  p.YAxis(y, left, top, bottom, "time (us)", right);
  p.XAxis(x, bottom, left, right, "evaluations (in measuring order)");
  std::string& s = p.body();
  // Every ok evaluation faintly, the best-so-far as a step line.
  std::vector<size_t> order(data.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return data.rows[a].sequence() < data.rows[b].sequence();
  });
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& row = data.rows[order[i]];
    if (Ok(row)) s += Circle(x(i + 1.0), y(row.time_us()), 1.6, "#9aa5c4", 0.6);
  }
  std::string path;
  double last = kNaN;
  for (size_t i = 0; i < best.size(); ++i) {
    if (std::isnan(best[i])) continue;
    if (path.empty()) {
      absl::StrAppendFormat(&path, "M%.1f %.1f", x(i + 1.0), y(best[i]));
    } else {
      absl::StrAppendFormat(&path, " H%.1f V%.1f", x(i + 1.0), y(best[i]));
    }
    last = best[i];
  }
  absl::StrAppendFormat(&path, " H%.1f", x(best.size()));
  absl::StrAppendFormat(&s, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                        path, kWinnerColour);
  p.Text(right, top - 4,
         absl::StrFormat("best %s us after %d evaluations", FormatNumber(last), best.size()), 11,
         "end", "#222");
  return std::move(p).Finish();
}

std::string OutcomeChart(const SweepData& data) {
  const std::vector<OutcomeCount> counts = CountOutcomes(data.rows);
  int64_t most = 1;
  for (const auto& c : counts) most = std::max(most, c.count);
  const int w = 560, row_h = 26, top = 60, left = 140, right = w - 70;
  const int h = top + row_h * static_cast<int>(counts.size()) + 40;
  Picture p(w, h, "Outcome of every candidate",
            absl::StrCat(Subtitle(data), " · ", data.rows.size(), " candidates"),
            ProvenanceLine(data.provenance));
  std::string& s = p.body();
  for (size_t i = 0; i < counts.size(); ++i) {
    const OutcomeCount& c = counts[i];
    const double y = top + row_h * i;
    p.Text(left - 8, y + 16, c.label, 12, "end", "#222");
    if (c.count == 0) {
      // None: an outlined, dashed empty box, never a bar of some colour.
      absl::StrAppendFormat(&s,
                            "<rect x=\"%d\" y=\"%.1f\" width=\"40\" height=\"18\" fill=\"%s\" "
                            "stroke=\"%s\" stroke-dasharray=\"3 2\"/>\n",
                            left, y + 3, kEmptyFill, kEmptyStroke);
      p.Text(left + 48, y + 16, "none", 11, "start", "#888");
      continue;
    }
    const double bw = std::max(2.0, (right - left) * static_cast<double>(c.count) / most);
    absl::StrAppendFormat(&s,
                          "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>\n",
                          left, y + 3, bw, c.colour);
    p.Text(left + bw + 6, y + 16, absl::StrCat(c.count), 12, "start", "#111");
  }
  return std::move(p).Finish();
}

std::string ResourceChart(const SweepData& data) {
  const char* title = "Registers and shared memory against time";
  auto [lo, hi] = TimeRange(data.rows);
  if (hi <= 0) return Nothing(data, title, "no ok candidate: nothing to plot");
  const int w = 560, h = 300, top = 60, bottom = h - 60;
  Picture p(w, h, title,
            absl::StrCat(Subtitle(data), " · ok candidates; red: the winner"),
            ProvenanceLine(data.provenance));
  const pb::Measurement* winner = Winner(data.rows);
  struct Panel {
    const char* name;
    double (*value)(const pb::Measurement&);
    double left, right;
  };
  const Panel panels[] = {
      {"registers per thread", [](const pb::Measurement& m) { return double(m.registers()); }, 60,
       270},
      {"static shared memory (KiB)",
       [](const pb::Measurement& m) { return m.shared_bytes() / 1024.0; }, 340, 545},
  };
  for (const Panel& panel : panels) {
    double vlo = 0, vhi = 0;
    for (const auto& row : data.rows) {
      if (Ok(row)) vhi = std::max(vhi, panel.value(row));
    }
    Scale x(vlo, std::max(1.0, vhi * 1.08), panel.left, panel.right, false);
    Scale y = TimeScale(data.rows, bottom, top);
    p.YAxis(y, panel.left, top, bottom, "time (us)", panel.right);
    p.XAxis(x, bottom, panel.left, panel.right, panel.name);
    std::string& s = p.body();
    for (const auto& row : data.rows) {
      if (Ok(row) && &row != winner) {
        s += Circle(x(panel.value(row)), y(row.time_us()), 2, kPointColour, 0.45);
      }
    }
    if (winner != nullptr) {
      s += Circle(x(panel.value(*winner)), y(winner->time_us()), 4, kWinnerColour, 1);
    }
  }
  return std::move(p).Finish();
}

std::string RooflineChart(const SweepData& data) {
  const char* title = "Winner against the measured ceiling";
  const Roofline r = RooflineOf(data);
  if (!r.available) {
    return Nothing(data, title, "no reference measured (or no ok candidate): no ceiling");
  }
  const int w = 560, h = 300, left = 70, right = w - 30, top = 60, bottom = h - 60;
  Picture p(w, h, title,
            absl::StrCat(Subtitle(data), " · every ok candidate's throughput, the winner in red"),
            ProvenanceLine(data.provenance));
  const bool tflops = r.unit == "TFLOP/s";
  double most = std::max(r.ceiling, r.winner);
  for (const auto& row : data.rows) {
    if (Ok(row)) most = std::max(most, tflops ? row.tflops() : row.gbps());
  }
  Scale y(0, most * 1.15, bottom, top, false);
  p.YAxis(y, left, top, bottom, r.unit, right);
  std::string& s = p.body();
  s += Line(left, bottom, right, bottom, "#333");
  // The ceiling: what the reference reached on this shape, measured in this sweep.
  s += Line(left, y(r.ceiling), right, y(r.ceiling), "#111", "stroke-width=\"2\" stroke-dasharray=\"8 4\"");
  p.Text(right, y(r.ceiling) - 6,
         absl::StrCat("ceiling: ", data.reference_name.empty() ? "reference" : data.reference_name,
                      " ", FormatNumber(r.ceiling), " ", r.unit,
                      data.reference_us > 0 ? absl::StrCat(" (", FormatNumber(data.reference_us),
                                                           " us)")
                                            : ""),
         11, "end", "#111");
  // Candidates as a strip on the left, the winner as a bar on the right.
  const double strip_x = left + 90;
  size_t i = 0;
  for (const auto& row : data.rows) {
    if (!Ok(row)) continue;
    s += Circle(strip_x + Jitter(i++) * 80, y(tflops ? row.tflops() : row.gbps()), 2,
                kPointColour, 0.4);
  }
  p.Text(strip_x, bottom + 16, "all ok candidates", 11, "middle", "#333");
  const double bar_x = left + 260;
  absl::StrAppendFormat(&s,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"90\" height=\"%.1f\" fill=\"%s\"/>\n",
                        bar_x, y(r.winner), bottom - y(r.winner), kWinnerColour);
  p.Text(bar_x + 45, y(r.winner) - 6,
         absl::StrFormat("%s %s = %.1f%%", FormatNumber(r.winner), r.unit, r.percent), 12,
         "middle", "#111");
  p.Text(bar_x + 45, bottom + 16, "winner", 11, "middle", "#333");
  return std::move(p).Finish();
}

std::vector<std::pair<std::string, std::string>> SweepCharts(const SweepData& data) {
  return {{"percent", PercentChart(data)},   {"parameters", ParameterChart(data)},
          {"best-so-far", BestSoFarChart(data)}, {"outcomes", OutcomeChart(data)},
          {"resources", ResourceChart(data)}, {"roofline", RooflineChart(data)}};
}

}  // namespace cutune::charts
