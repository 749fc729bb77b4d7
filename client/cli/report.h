// The picture of a sweep: a heatmap of the best result over two chosen parameters (the others
// minimized over), with a colour scale, axis labels, a title naming device and problem, and the
// ranked top 10. Self-contained SVG, or an HTML page that inlines it (no script, no network).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/cutune.pb.h"

namespace cutune::cli {

namespace pb = ::cutune::v1;

enum class ReportMetric { kPercentOfReference, kTime, kThroughput };

struct ReportInput {
  std::string problem;       // "transpose 8192x8192 f32"
  std::string device_model;  // "NVIDIA H200"
  std::string x;             // parameter on the horizontal axis
  std::string y;             // parameter on the vertical axis
  ReportMetric metric = ReportMetric::kPercentOfReference;
  std::vector<pb::Measurement> rows;
};

// The two ends of the colour scale: worst and best cell. Tests look for them in a screenshot.
inline constexpr char kWorstColour[] = "#440154";
inline constexpr char kBestColour[] = "#fde725";

// INVALID_ARGUMENT when x or y is not a parameter of the rows or they are the same;
// NOT_FOUND when no row is ok (nothing to draw).
absl::StatusOr<std::string> RenderReportSvg(const ReportInput& input);
absl::StatusOr<std::string> RenderReportHtml(const ReportInput& input);

}  // namespace cutune::cli
