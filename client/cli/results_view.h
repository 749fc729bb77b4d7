// How measurement rows are shown: the ranked table of the fastest valid candidates and the
// summary of rejected ones by outcome and reason, as text and as the --json reports of
// proto/cutune/v1/cli.proto. Shared by `results`, `sweep` and `report`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cutune/v1/cli.pb.h"
#include "cutune/v1/cutune.pb.h"
#include "server/core/types.h"

namespace cutune::cli {

namespace pb = ::cutune::v1;

Params ParamsOf(const pb::Measurement& row);
std::string OutcomeLabel(pb::Outcome outcome);  // "ok", "compile_failed", ...
// Whether rows measure throughput in TFLOP/s (matmul) rather than GB/s (transpose).
bool UsesTflops(const std::vector<pb::Measurement>& rows);
std::string Throughput(const pb::Measurement& row, bool tflops);  // "3921.4 GB/s"

// The `top` fastest ok rows (all when top <= 0), fastest first.
std::vector<const pb::Measurement*> Ranked(const std::vector<pb::Measurement>& rows, int top);

// Parameter sets as table cells: "minb=0,pad=1,..." each, or, when `compact`, the values alone
// ("0,1,8,...") in the order `legend` names them ("parameters: minb,pad,...").
struct ParamCells {
  std::vector<std::string> cells;
  std::string legend;  // empty unless compact
};
ParamCells ParamColumn(const std::vector<Params>& params, bool compact);

// "#  parameters  time (us)  spread  GB/s  % of ref  regs  smem  spills", fastest first. With a
// `width` (a terminal's), a table wider than it shows the parameters' values alone under a
// legend, then leaves out spread, spills, smem, regs and % of ref, in that order, as needed.
std::string RankedTable(const std::vector<pb::Measurement>& rows, int top, size_t width = 0);

// `results --csv`: a header row, then one row per candidate in parameter order (stable from run
// to run, so two exports diff line by line): one column per parameter, then `rank` (by time
// among the ok rows; empty for rejected ones), outcome, the figures and the first line of the
// detail.
std::string ResultsCsv(const std::vector<pb::Measurement>& rows);

// Why a finished sweep has no valid candidate, from its counts: "4 pruned, 2 failed to compile,
// 1 wrong answer", or that the (narrowed) space has no candidate at all.
std::string NoValidCandidateReason(const pb::JobProgress& job);

struct RejectedGroup {
  pb::Outcome outcome = pb::OUTCOME_UNSPECIFIED;
  std::string reason;  // first line of the rows' detail
  int64_t count = 0;
  Params example;      // parameters of one such candidate
};
// Rows that are not ok, grouped by outcome and reason, largest group first.
std::vector<RejectedGroup> Rejected(const std::vector<pb::Measurement>& rows);
// With a `width`, the reasons are cut and then the examples left out, as needed.
std::string RejectedSummary(const std::vector<pb::Measurement>& rows, size_t width = 0);

// `results --json`: every row of `response` and the rejected groups.
pb::ResultsReport ResultsReportOf(const pb::Problem& problem,
                                  const pb::ListResultsResponse& response);
// `sweep --json`: the job's last progress, the `top` fastest ok rows and the rejected groups.
pb::SweepReport SweepReportOf(const pb::JobProgress& job, const pb::ListResultsResponse& results,
                              int top);

}  // namespace cutune::cli
