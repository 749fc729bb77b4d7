#include "client/cli/batch.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/render.h"
#include "client/cli/results_view.h"
#include "server/core/strings.h"

namespace cutune::cli {
namespace {

std::string ShapeText(const pb::Problem& problem) { return absl::StrJoin(problem.shape(), "x"); }

std::string StateLabel(const pb::BatchSweepShape& shape) {
  switch (shape.state()) {
    case pb::BatchSweepShape::STATE_SUCCEEDED:
      // Nothing measured now: an earlier run of the same request had finished it.
      if (shape.sweep().job().resumed() > 0 &&
          shape.sweep().job().resumed() == shape.sweep().job().done()) {
        return "done before";
      }
      return shape.sweep().job().resumed() > 0 ? "resumed" : "succeeded";
    case pb::BatchSweepShape::STATE_FAILED:
      return "failed";
    case pb::BatchSweepShape::STATE_NOT_STARTED:
      return "not started";
    case pb::BatchSweepShape::STATE_INTERRUPTED:
      return "interrupted";
    default:
      return "?";
  }
}

}  // namespace

absl::StatusOr<std::vector<ListedShape>> ParseShapeList(std::string_view text,
                                                        std::string_view name,
                                                        const kernels::KernelFamily* family) {
  std::vector<ListedShape> out;
  std::map<Shape, int> first_line;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(text), '\n')) {
    ++number;
    absl::string_view line = raw.substr(0, raw.find('#'));
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    auto error = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(ToAbsl(name), ":", number, ": ", why));
    };
    absl::StatusOr<Shape> shape = ParseShape(ToStd(line));
    if (!shape.ok()) return error(shape.status().message());
    if (family != nullptr) {
      if (absl::Status s = family->ValidateShape(*shape); !s.ok()) {
        return error(absl::StrCat(ToAbsl(family->name()), " ", line, ": ", s.message()));
      }
    }
    auto [it, fresh] = first_line.emplace(*shape, number);
    if (!fresh) return error(absl::StrCat(line, " is listed twice (first on line ", it->second, ")"));
    out.push_back({*std::move(shape), number});
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(name), ": no shape listed"));
  }
  return out;
}

void CountShapes(pb::BatchSweepReport& report) {
  int64_t succeeded = 0, failed = 0, not_finished = 0;
  for (const pb::BatchSweepShape& shape : report.shapes()) {
    succeeded += shape.state() == pb::BatchSweepShape::STATE_SUCCEEDED;
    failed += shape.state() == pb::BatchSweepShape::STATE_FAILED;
    not_finished += shape.state() == pb::BatchSweepShape::STATE_NOT_STARTED ||
                   shape.state() == pb::BatchSweepShape::STATE_INTERRUPTED;
  }
  report.set_succeeded(succeeded);
  report.set_failed(failed);
  report.set_not_finished(not_finished);
}

std::string BatchPrefix(const pb::BatchSweepReport& report, int running) {
  int64_t done = 0, failed = 0;
  for (const pb::BatchSweepShape& shape : report.shapes()) {
    done += shape.state() == pb::BatchSweepShape::STATE_SUCCEEDED;
    failed += shape.state() == pb::BatchSweepShape::STATE_FAILED;
  }
  std::string out = absl::StrFormat("shape %d/%d (%d done", running + 1, report.shapes_size(), done);
  if (failed > 0) absl::StrAppend(&out, ", ", failed, " failed");
  absl::StrAppend(&out, ")");
  if (running >= 0 && running < report.shapes_size()) {
    absl::StrAppend(&out, " ", ShapeText(report.shapes(running).problem()));
  }
  return out;
}

namespace {

std::string BatchTable(const pb::BatchSweepReport& report, bool compact, size_t width) {
  std::vector<Params> winners;
  std::vector<bool> has_winner;
  for (const pb::BatchSweepShape& shape : report.shapes()) {
    const pb::JobProgress& job = shape.sweep().job();
    const bool best = shape.state() == pb::BatchSweepShape::STATE_SUCCEEDED && job.has_best() &&
                      job.best().outcome() == pb::OUTCOME_OK;
    has_winner.push_back(best);
    winners.push_back(best ? Params(job.best().params().begin(), job.best().params().end())
                           : Params());
  }
  std::vector<Params> named;
  for (size_t i = 0; i < winners.size(); ++i) {
    if (has_winner[i]) named.push_back(winners[i]);
  }
  const ParamCells legend = ParamColumn(named, compact);
  Table table({"shape", "state", "winner", "time us", "% of ref", "candidates", "earlier",
               "seconds"});
  table.DropFirst({6, 7, 4, 5});
  table.Elastic(2, 12);
  for (int i = 0; i < report.shapes_size(); ++i) {
    const pb::BatchSweepShape& shape = report.shapes(i);
    const pb::JobProgress& job = shape.sweep().job();
    const bool ran = shape.has_sweep();
    const bool best = has_winner[i];
    table.Add({ShapeText(shape.problem()), StateLabel(shape),
               best ? ParamColumn({winners[i]}, compact).cells.front() : "-",
               best ? FormatDouble(job.best().time_us(), 2) : "",
               best && job.best().percent_of_reference() > 0
                   ? FormatDouble(job.best().percent_of_reference(), 1)
                   : "",
               ran ? absl::StrCat(job.done()) : "", ran ? absl::StrCat(job.resumed()) : "",
               ran ? FormatDouble(job.elapsed_seconds(), 1) : ""});
  }
  return legend.legend + table.Render(width);
}

}  // namespace

std::string BatchSummary(const pb::BatchSweepReport& report, size_t width) {
  std::string table = BatchTable(report, /*compact=*/false, 0);
  size_t widest = 0;
  for (absl::string_view line : absl::StrSplit(table, '\n')) widest = std::max(widest, line.size());
  if (width > 0 && widest > width) table = BatchTable(report, /*compact=*/true, width);
  std::string failures;
  for (const pb::BatchSweepShape& shape : report.shapes()) {
    if (shape.state() == pb::BatchSweepShape::STATE_FAILED) {
      absl::StrAppend(&failures, "failed: ", ShapeText(shape.problem()), " (line ", shape.line(),
                      "): ", OneLine(shape.error()), "\n");
    }
  }
  return absl::StrCat(table, failures,
                      absl::StrFormat("%s: %d shapes: %d succeeded, %d failed, %d not finished\n",
                                      report.family(), report.shapes_size(), report.succeeded(),
                                      report.failed(), report.not_finished()));
}

}  // namespace cutune::cli
