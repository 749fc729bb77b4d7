// The picture of a sweep: a heatmap of the best result over two chosen parameters (the others
// minimized over), with a labelled colour scale, "empty" and "rejected" cells told apart, axis
// labels, a title naming device and problem, the ranked top 10 and the sweep's provenance.
// Self-contained SVG, or an HTML page that inlines it and the sweep's other pictures
// (charts/sweep_charts.h, the dashboard's too) with no script and nothing from the network.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "charts/svg.h"
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
  pb::SweepSummary sweep;  // ListResultsResponse.sweep: provenance and reference
};

// The two ends of the colour scale: worst and best cell. Tests look for them in a screenshot.
using charts::kBestColour;
using charts::kWorstColour;

// INVALID_ARGUMENT when x or y is not a parameter of the rows or they are the same;
// NOT_FOUND when no row is ok (nothing to draw).
absl::StatusOr<std::string> RenderReportSvg(const ReportInput& input);
absl::StatusOr<std::string> RenderReportHtml(const ReportInput& input);

}  // namespace cutune::cli
