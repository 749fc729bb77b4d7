// The picture of `cutune table diff`: per key (device model, family, shape), the old and the new
// winner's time side by side, the change in percent coloured by direction, and keys held by one
// table only marked as such (no bar stands in for a missing time).
#pragma once

#include <string>

#include "cutune/v1/cli.pb.h"

namespace cutune::charts {

// `a_name` and `b_name` name the two tables (their files); `provenance` is printed in the footer.
std::string TableDiffChart(const ::cutune::v1::TableDiffReport& report, const std::string& a_name,
                           const std::string& b_name, const std::string& provenance);
// The chart in a page of its own, with a table of the same numbers (no script, no network).
std::string TableDiffHtml(const ::cutune::v1::TableDiffReport& report, const std::string& a_name,
                          const std::string& b_name, const std::string& provenance);

}  // namespace cutune::charts
