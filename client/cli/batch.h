// `cutune sweep FAMILY --shapes FILE`: the parts of a batch that make no call, apart so that the
// CPU tests check them directly: reading the shape list, the batch's place in the one progress
// line, and the closing summary table (text of the same BatchSweepReport that --json prints).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/cli.pb.h"
#include "kernels/family.h"
#include "server/core/types.h"

namespace cutune::cli {

namespace pb = ::cutune::v1;

struct ListedShape {
  Shape shape;
  int line = 0;  // 1-based
};

// One shape a line in the CLI's spelling (8192x8192, 4096x4096x4096); "#" starts a comment,
// blank lines are skipped. Any error is INVALID_ARGUMENT naming `name:line` (`name` as given,
// "-" for standard input): a bad shape, a shape `family` refuses (when this CLI knows the
// family; else the daemon says), a shape listed twice, or a list without any shape.
absl::StatusOr<std::vector<ListedShape>> ParseShapeList(std::string_view text,
                                                        std::string_view name,
                                                        const kernels::KernelFamily* family);

// Fills the report's counts from its shapes' states.
void CountShapes(pb::BatchSweepReport& report);

// What the progress line shows before the running shape's bar: "shape 2/3 (1 done, 1 failed)
// 4096x4096x4096".
std::string BatchPrefix(const pb::BatchSweepReport& report, int running);

// The closing table, a row per shape in file order (shape, state, winner, its time and % of
// reference, candidates measured and taken from earlier runs, seconds), then each failure's
// error and a line of counts.
// With a `width` (a terminal's), a wider table shows the winners' values alone under a legend,
// then leaves out earlier, seconds, % of ref and candidates, as needed.
std::string BatchSummary(const pb::BatchSweepReport& report, size_t width = 0);

}  // namespace cutune::cli
