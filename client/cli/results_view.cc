#include "client/cli/results_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/json.h"
#include "client/cli/render.h"

namespace cutune::cli {

Params ParamsOf(const pb::Measurement& row) {
  return Params(row.params().begin(), row.params().end());
}

std::string OutcomeLabel(pb::Outcome outcome) { return EnumLabel(outcome); }

bool UsesTflops(const std::vector<pb::Measurement>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const pb::Measurement& r) { return r.tflops() > 0; });
}

std::string Throughput(const pb::Measurement& row, bool tflops) {
  return tflops ? absl::StrFormat("%.2f TFLOP/s", row.tflops())
                : absl::StrFormat("%.1f GB/s", row.gbps());
}

std::vector<const pb::Measurement*> Ranked(const std::vector<pb::Measurement>& rows, int top) {
  std::vector<const pb::Measurement*> ok;
  for (const auto& row : rows) {
    if (row.outcome() == pb::OUTCOME_OK) ok.push_back(&row);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const pb::Measurement* a, const pb::Measurement* b) {
    return a->time_us() < b->time_us();
  });
  if (top > 0 && ok.size() > static_cast<size_t>(top)) ok.resize(top);
  return ok;
}

ParamCells ParamColumn(const std::vector<Params>& params, bool compact) {
  ParamCells out;
  for (const Params& p : params) {
    if (!compact) {
      out.cells.push_back(FormatParams(p));
      continue;
    }
    std::vector<std::string> values;
    for (const auto& [name, value] : p) values.push_back(absl::StrCat(value));
    out.cells.push_back(absl::StrJoin(values, ","));
  }
  if (compact && !params.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, value] : params.front()) names.push_back(name);
    out.legend = absl::StrCat("parameters: ", absl::StrJoin(names, ","), "\n");
  }
  return out;
}

namespace {

std::string RankedTableOf(const std::vector<const pb::Measurement*>& ranked, bool tflops,
                          bool compact, size_t width) {
  std::vector<Params> params;
  for (const pb::Measurement* row : ranked) params.push_back(ParamsOf(*row));
  const ParamCells cells = ParamColumn(params, compact);
  Table table({"#", compact ? "params" : "parameters", "time us", "spread %",
               tflops ? "TFLOP/s" : "GB/s", "% of ref", "regs", "smem", "spills"});
  table.DropFirst({3, 8, 7, 6, 5});
  table.Elastic(1, 12);
  for (size_t i = 0; i < ranked.size(); ++i) {
    const pb::Measurement* row = ranked[i];
    table.Add({std::to_string(i + 1), cells.cells[i], FormatDouble(row->time_us(), 2),
               FormatDouble(100 * row->rel_spread(), 2),
               tflops ? FormatDouble(row->tflops(), 2) : FormatDouble(row->gbps(), 1),
               row->percent_of_reference() > 0 ? FormatDouble(row->percent_of_reference(), 1) : "",
               std::to_string(row->registers()), std::to_string(row->shared_bytes()),
               std::to_string(row->spill_store_bytes() + row->spill_load_bytes())});
  }
  return cells.legend + table.Render(width);
}

size_t Widest(const std::string& text) {
  size_t widest = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) widest = std::max(widest, line.size());
  return widest;
}

}  // namespace

std::string RankedTable(const std::vector<pb::Measurement>& rows, int top, size_t width) {
  const std::vector<const pb::Measurement*> ranked = Ranked(rows, top);
  if (ranked.empty()) return "no valid candidate\n";
  const bool tflops = UsesTflops(rows);
  std::string full = RankedTableOf(ranked, tflops, /*compact=*/false, 0);
  if (width == 0 || Widest(full) <= width) return full;
  return RankedTableOf(ranked, tflops, /*compact=*/true, width);
}

std::string ResultsCsv(const std::vector<pb::Measurement>& rows) {
  std::set<std::string> names;
  for (const pb::Measurement& row : rows) {
    for (const auto& [name, value] : row.params()) names.insert(name);
  }
  std::map<const pb::Measurement*, int> rank;
  int next = 0;
  for (const pb::Measurement* row : Ranked(rows, 0)) rank[row] = ++next;
  std::vector<const pb::Measurement*> ordered;
  for (const pb::Measurement& row : rows) ordered.push_back(&row);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const pb::Measurement* a, const pb::Measurement* b) {
                     return ParamsOf(*a) < ParamsOf(*b);
                   });
  std::vector<std::string> header(names.begin(), names.end());
  for (const char* column :
       {"rank", "outcome", "time_us", "rel_spread", "gbps", "tflops", "percent_of_reference",
        "registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "samples",
        "compile_ms", "reason"}) {
    header.push_back(column);
  }
  std::string out = CsvRecord(header);
  for (const pb::Measurement* row : ordered) {
    std::vector<std::string> fields;
    for (const std::string& name : names) {
      auto it = row->params().find(name);
      fields.push_back(it == row->params().end() ? "" : absl::StrCat(it->second));
    }
    auto ranked = rank.find(row);
    fields.push_back(ranked == rank.end() ? "" : absl::StrCat(ranked->second));
    fields.push_back(OutcomeLabel(row->outcome()));
    for (double figure : {row->time_us(), row->rel_spread(), row->gbps(), row->tflops(),
                          row->percent_of_reference()}) {
      fields.push_back(absl::StrCat(figure));
    }
    for (int32_t figure : {row->registers(), row->shared_bytes(), row->spill_store_bytes(),
                           row->spill_load_bytes(), row->samples()}) {
      fields.push_back(absl::StrCat(figure));
    }
    fields.push_back(absl::StrCat(row->compile_ms()));
    fields.push_back(row->detail().substr(0, row->detail().find('\n')));
    out += CsvRecord(fields);
  }
  return out;
}

std::string NoValidCandidateReason(const pb::JobProgress& job) {
  std::map<pb::Outcome, int64_t> counts;  // in the enum's order, not the map's
  for (const auto& [name, count] : job.outcome_counts()) {
    pb::Outcome outcome = pb::OUTCOME_UNSPECIFIED;
    if (count > 0 && pb::Outcome_Parse(name, &outcome) && outcome != pb::OUTCOME_OK) {
      counts[outcome] += count;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [outcome, count] : counts) {
    std::string what = OutcomeLabel(outcome);
    if (outcome == pb::OUTCOME_COMPILE_FAILED) what = "failed to compile";
    std::replace(what.begin(), what.end(), '_', ' ');
    parts.push_back(absl::StrCat(count, " ", what));
  }
  if (parts.empty()) {
    return "the space has no candidate (every combination of --param values breaks a "
           "constraint: see `cutune space show`)";
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<RejectedGroup> Rejected(const std::vector<pb::Measurement>& rows) {
  std::map<std::pair<std::string, std::string>, RejectedGroup> groups;
  for (const auto& row : rows) {
    if (row.outcome() == pb::OUTCOME_OK) continue;
    std::string reason = row.detail().substr(0, row.detail().find('\n'));
    if (reason.empty()) reason = "(no detail recorded)";
    // Keyed by label, not enum value: groups of one size stay in the text's alphabetical order.
    RejectedGroup& g = groups[{OutcomeLabel(row.outcome()), reason}];
    if (g.count++ == 0) {
      g.outcome = row.outcome();
      g.reason = reason;
      g.example = ParamsOf(row);
    }
  }
  std::vector<RejectedGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const RejectedGroup& a, const RejectedGroup& b) {
    return a.count > b.count;
  });
  return out;
}

std::string RejectedSummary(const std::vector<pb::Measurement>& rows, size_t width) {
  std::vector<RejectedGroup> groups = Rejected(rows);
  if (groups.empty()) return "rejected: none\n";
  int64_t total = 0;
  for (const auto& g : groups) total += g.count;
  Table table({"outcome", "count", "reason", "e.g."});
  table.DropFirst({3});
  table.Elastic(2, 20);
  for (const auto& g : groups) {
    std::string reason = g.reason.size() > 90 ? g.reason.substr(0, 87) + "..." : g.reason;
    table.Add({OutcomeLabel(g.outcome), std::to_string(g.count), reason, FormatParams(g.example)});
  }
  return absl::StrCat("rejected: ", total, " candidates\n", table.Render(width));
}

namespace {

void AddRejected(const std::vector<pb::Measurement>& rows,
                 google::protobuf::RepeatedPtrField<pb::RejectedGroup>* out) {
  for (const RejectedGroup& g : Rejected(rows)) {
    pb::RejectedGroup* group = out->Add();
    group->set_outcome(g.outcome);
    group->set_reason(g.reason);
    group->set_count(g.count);
    for (const auto& [name, value] : g.example) (*group->mutable_example())[name] = value;
  }
}

}  // namespace

pb::ResultsReport ResultsReportOf(const pb::Problem& problem,
                                  const pb::ListResultsResponse& response) {
  pb::ResultsReport report;
  *report.mutable_problem() = problem;
  report.set_device_model(response.device_model());
  *report.mutable_rows() = response.rows();
  const std::vector<pb::Measurement> rows(response.rows().begin(), response.rows().end());
  AddRejected(rows, report.mutable_rejected());
  return report;
}

pb::SweepReport SweepReportOf(const pb::JobProgress& job, const pb::ListResultsResponse& results,
                              int top) {
  pb::SweepReport report;
  *report.mutable_job() = job;
  report.set_device_model(results.device_model());
  const std::vector<pb::Measurement> rows(results.rows().begin(), results.rows().end());
  for (const pb::Measurement* row : Ranked(rows, top)) *report.add_top() = *row;
  AddRejected(rows, report.mutable_rejected());
  return report;
}

}  // namespace cutune::cli
