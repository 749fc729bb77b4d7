#include "client/cli/profile_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/render.h"
#include "client/cli/results_view.h"
#include "server/core/strings.h"
#include "server/profile/ncu.h"

namespace cutune::cli {
namespace {

const pb::ProfileMetric* Find(const pb::Profile& profile, std::string_view name) {
  for (const pb::ProfileMetric& m : profile.metrics()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

// A value in its unit, made readable: percentages with one decimal, nanoseconds as us, counts
// whole.
std::string Value(const pb::ProfileMetric& m) {
  if (m.unit() == "%") return absl::StrCat(FormatDouble(m.value(), 1), "%");
  // ncu 2025.3 prints durations in "ns" with --print-units base (older ones "nsecond").
  if (m.unit() == "ns" || m.unit() == "nsecond") {
    return absl::StrCat(FormatDouble(m.value() / 1000.0, 2), " us");
  }
  if (m.unit() == "us" || m.unit() == "usecond") {
    return absl::StrCat(FormatDouble(m.value(), 2), " us");
  }
  std::string number = FormatDouble(m.value(), m.value() == static_cast<int64_t>(m.value()) ? 0 : 2);
  if (m.unit().empty() || m.unit() == "register/thread") return number;
  return absl::StrCat(number, " ", m.unit());
}

}  // namespace

std::string ProfileLine(const pb::Profile& profile) {
  if (profile.metrics_size() == 0) return "";
  // Short names for the compact line, in kMetrics' order.
  const std::pair<std::string_view, std::string_view> shown[] = {
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank conflicts "},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM "},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy "},
      {"lts__t_sector_hit_rate.pct", "L2 hit "},
      {"launch__registers_per_thread", ""},
      {"gpu__time_duration.sum", ""},
  };
  std::vector<std::string> parts;
  for (const auto& [name, label] : shown) {
    const pb::ProfileMetric* m = Find(profile, name);
    if (m == nullptr) continue;
    std::string part = absl::StrCat(ToAbsl(label), Value(*m));
    if (name == "launch__registers_per_thread") absl::StrAppend(&part, " regs");
    parts.push_back(std::move(part));
  }
  return absl::StrCat(absl::StrJoin(parts, " · "), " (ncu ", profile.ncu_version(), ")");
}

std::string ProfiledRows(const std::vector<pb::Measurement>& rows, int max) {
  std::vector<const pb::Measurement*> profiled;
  for (const pb::Measurement* row : Ranked(rows, 0)) {
    if (row->profile().metrics_size() > 0) profiled.push_back(row);
  }
  if (profiled.empty()) return "";
  std::string out = "profiled (Nsight Compute, `cutune profile`):\n";
  for (size_t i = 0; i < profiled.size() && static_cast<int>(i) < max; ++i) {
    absl::StrAppend(&out, "  ", FormatParams(ParamsOf(*profiled[i])), ": ",
                    ProfileLine(profiled[i]->profile()), "\n");
  }
  if (static_cast<int>(profiled.size()) > max) {
    absl::StrAppend(&out, "  ... and ", profiled.size() - max, " more (--json has them all)\n");
  }
  return out;
}

std::string ProfileReport(const pb::ProfileCandidateResponse& response) {
  Params params(response.params().begin(), response.params().end());
  std::string out = absl::StrCat("profiled ", FormatParams(params), " on ",
                                 response.device_model(), " (GPU ", response.ordinal(),
                                 ") with Nsight Compute ", response.profile().ncu_version(),
                                 ":\n");
  for (const profile::MetricSpec& spec : profile::kMetrics) {
    const pb::ProfileMetric* m = Find(response.profile(), spec.name);
    absl::StrAppend(&out, "  ", ToAbsl(spec.label), ": ", m ? Value(*m) : "n/a", " (",
                    ToAbsl(spec.meaning), ")\n");
  }
  if (response.has_row()) {
    absl::StrAppend(&out, "measured time (stored row): ", FormatDouble(response.row().time_us(), 2),
                    " us median; ncu's profiled duration runs at base clocks with caches "
                    "flushed\n");
  }
  absl::StrAppend(&out, response.stored()
                            ? "stored with the row: `cutune results` shows it\n"
                            : "not stored: no measured row of this configuration (sweep it "
                              "first to keep its profile)\n");
  return out;
}

}  // namespace cutune::cli
