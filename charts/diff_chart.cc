#include "charts/diff_chart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "charts/svg.h"

namespace cutune::charts {
namespace {

namespace pb = ::cutune::v1;

constexpr char kOldColour[] = "#9aa5c4";
constexpr char kNewColour[] = "#3b528b";
constexpr char kFaster[] = "#2a9d8f";
constexpr char kSlower[] = "#d62728";

std::string Key(const pb::TableDiffEntry& e) {
  return absl::StrCat(e.family(), " ", absl::StrJoin(e.shape(), "x"), " ", e.dtype());
}

std::string ChangeText(const pb::TableDiffEntry& e) {
  switch (e.change()) {
    case pb::TableDiffEntry::CHANGE_ONLY_IN_A: return "removed (only in old)";
    case pb::TableDiffEntry::CHANGE_ONLY_IN_B: return "added (only in new)";
    case pb::TableDiffEntry::CHANGE_SAME: return "same winner";
    case pb::TableDiffEntry::CHANGE_TIE: return "tied winner";
    case pb::TableDiffEntry::CHANGE_WINNER_CHANGED: return "winner changed";
    default: return "";
  }
}

}  // namespace

std::string TableDiffChart(const pb::TableDiffReport& report, const std::string& a_name,
                           const std::string& b_name, const std::string& provenance) {
  const int n = report.entries_size();
  const int row_h = 34, top = 84, left = 300, right = 760, w = 1000;
  const int h = top + row_h * std::max(1, n) + 50;
  Picture p(w, h, "Tuning table diff: winner time per shape",
            absl::StrCat("old: ", a_name, " · new: ", b_name), provenance);
  std::string& s = p.body();
  // Legend.
  absl::StrAppendFormat(&s, "<rect x=\"%d\" y=\"52\" width=\"14\" height=\"10\" fill=\"%s\"/>\n",
                        left, kOldColour);
  p.Text(left + 18, 61, "old time (us)", 11);
  absl::StrAppendFormat(&s, "<rect x=\"%d\" y=\"52\" width=\"14\" height=\"10\" fill=\"%s\"/>\n",
                        left + 120, kNewColour);
  p.Text(left + 138, 61, "new time (us)", 11);
  p.Text(right + 10, 61, "change (new vs old)", 11);
  if (n == 0) {
    p.Text(16, top + 20, "both tables are empty", 13, "start", "#555");
    return std::move(p).Finish();
  }
  double most = 0;
  for (const auto& e : report.entries()) most = std::max({most, e.a().time_us(), e.b().time_us()});
  if (most <= 0) most = 1;
  for (int i = 0; i < n; ++i) {
    const pb::TableDiffEntry& e = report.entries(i);
    const double y = top + row_h * i;
    p.Text(left - 8, y + 12, Key(e), 12, "end", "#111");
    p.Text(left - 8, y + 25, e.device_model(), 10, "end", "#666");
    const bool has_a = e.change() != pb::TableDiffEntry::CHANGE_ONLY_IN_B;
    const bool has_b = e.change() != pb::TableDiffEntry::CHANGE_ONLY_IN_A;
    auto bar = [&](bool present, double t, double yy, const char* colour) {
      if (!present) {
        absl::StrAppendFormat(&s,
                              "<rect x=\"%d\" y=\"%.1f\" width=\"40\" height=\"11\" fill=\"%s\" "
                              "stroke=\"%s\" stroke-dasharray=\"3 2\"/>\n",
                              left, yy, kEmptyFill, kEmptyStroke);
        p.Text(left + 46, yy + 10, "not in this table", 10, "start", "#888");
        return;
      }
      const double bw = std::max(1.0, (right - left - 60) * t / most);
      absl::StrAppendFormat(
          &s, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"11\" fill=\"%s\"/>\n", left, yy,
          bw, colour);
      p.Text(left + bw + 4, yy + 10, FormatNumber(t), 10, "start", "#333");
    };
    bar(has_a, e.a().time_us(), y + 2, kOldColour);
    bar(has_b, e.b().time_us(), y + 15, kNewColour);
    std::string change = ChangeText(e);
    const char* colour = "#333";
    if (has_a && has_b) {
      const double pct = e.time_change_percent();
      change = absl::StrFormat("%+.1f%%  %s%s", pct, change,
                               e.source_hash_changed() ? " (source changed)" : "");
      colour = pct > 1 ? kSlower : pct < -1 ? kFaster : "#333";
    }
    p.Text(right + 10, y + 17, change, 12, "start", colour);
  }
  return std::move(p).Finish();
}

std::string TableDiffHtml(const pb::TableDiffReport& report, const std::string& a_name,
                          const std::string& b_name, const std::string& provenance) {
  std::string s = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>cutune table diff</title>\n<style>\n"
      "body { margin: 8px; background: #fff; color: #111; font-family: 'DejaVu Sans', Arial, "
      "sans-serif; }\n"
      "table { border-collapse: collapse; margin: 8px 16px; font-size: 13px; }\n"
      "th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; }\n"
      "</style>\n</head>\n<body>\n",
      TableDiffChart(report, a_name, b_name, provenance),
      "<table>\n<tr><th>device model</th><th>key</th><th>change</th><th>old us</th><th>new "
      "us</th><th>change %</th></tr>\n");
  for (const auto& e : report.entries()) {
    absl::StrAppend(&s, "<tr><td>", Escape(e.device_model()), "</td><td>", Escape(Key(e)),
                    "</td><td>", Escape(ChangeText(e)), "</td><td>",
                    e.has_a() ? FormatNumber(e.a().time_us()) : "", "</td><td>",
                    e.has_b() ? FormatNumber(e.b().time_us()) : "", "</td><td>",
                    e.has_a() && e.has_b() ? absl::StrFormat("%+.1f", e.time_change_percent()) : "",
                    "</td></tr>\n");
  }
  s += "</table>\n</body>\n</html>\n";
  return s;
}

}  // namespace cutune::charts
