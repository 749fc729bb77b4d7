// Nsight Compute (ncu) as the daemon uses it: the counters asked for, where ncu is installed, the
// command line that profiles exactly one launch of a candidate, and what ncu's CSV output says.
// All pure except FindNcu's look at the file system; process.h runs the command.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cutune::profile {

// One counter asked of ncu, with words for people.
struct MetricSpec {
  std::string_view name;     // ncu's name
  std::string_view label;    // "shared-memory bank conflicts"
  std::string_view meaning;  // one line: why it matters here
};

// The counters every profile asks for, in the order they are shown: the seeds' two yardsticks
// (bank conflicts, DRAM throughput), achieved occupancy, L2 hit rate, registers, and ncu's own
// duration of the profiled launch. All exist on sm_70 and newer (sm_90 included).
inline constexpr MetricSpec kMetrics[] = {
    {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "shared-memory bank conflicts",
     "the seeds' yardstick for padding/swizzle"},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput",
     "share of peak bandwidth: near 100 is memory-bound at the roofline"},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy",
     "active warps over the SM's maximum"},
    {"lts__t_sector_hit_rate.pct", "L2 hit rate", "sectors served by L2 without DRAM"},
    {"launch__registers_per_thread", "registers per thread", "what limits occupancy first"},
    {"gpu__time_duration.sum", "profiled duration",
     "ncu's time of the launch (base clocks, caches flushed)"},
};

// The spec of `name`; nullptr for a counter not in kMetrics.
const MetricSpec* FindMetric(std::string_view name);

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;  // as ncu prints it with --print-units base: "%", "ns", "register/thread", ""
};

// Where ncu is: `flag` (the daemon's --ncu) if given; else $CUTUNE_NCU; else the CUDA toolkit's
// /usr/local/cuda/bin/ncu; else `ncu` on $PATH. FAILED_PRECONDITION "Nsight Compute (ncu) not
// found: ..." naming every place looked at. `flag` or $CUTUNE_NCU naming a file that is not
// executable is that error too (no fallback: the operator asked for that one).
absl::StatusOr<std::string> FindNcu(std::string_view flag);

// FindNcu with its inputs given: the value of $CUTUNE_NCU (nullptr: unset), of $PATH, and what
// counts as an executable file.
absl::StatusOr<std::string> FindNcu(std::string_view flag, const char* env_ncu,
                                    std::string_view path_env,
                                    const std::function<bool(const std::string&)>& executable);

// What to profile: a command (cutune-worker --profile ...) whose `launch_skip`-th launch (from 0)
// of `kernel` is the one measured.
struct ProfileTarget {
  std::string kernel;
  int launch_skip = 0;
  std::vector<std::string> command;
};

// ncu's argv (ncu first): CSV of the details page in base units (no "Kbyte" or "usecond"
// scaling), only kMetrics, only the one launch of the kernel, in the target's child processes
// too. ncu's defaults stay: caches flushed and clocks locked to base before the launch.
std::vector<std::string> NcuArguments(const std::string& ncu, const ProfileTarget& target);

// The metrics of the one profiled launch of `kernel` in ncu's `--csv --page details` output
// (mixed with ncu's ==PROF== lines and whatever the target printed). Columns are found by their
// header names; values may carry thousands separators ("1,048,576"; ncu runs with LC_ALL=C, so
// '.' is the decimal point). Errors: FAILED_PRECONDITION for ERR_NVGPUCTRPERM (no permission to
// read the counters: how to allow it) and for "no kernels were profiled"; INTERNAL for another
// ==ERROR== line (its text) or output without the metrics (a tail of it).
absl::StatusOr<std::vector<Metric>> ParseNcuCsv(std::string_view output, std::string_view kernel);

// One CSV record's fields: quoted fields may hold commas and doubled quotes.
std::vector<std::string> SplitCsvLine(std::string_view line);

// A value as ncu prints it: "1,048,576", "87.25", "0"; nullopt for "n/a" or text.
std::optional<double> ParseNcuNumber(std::string_view text);

// "2025.3.1.0" from `ncu --version` ("... Version 2025.3.1.0 (build 36398880) ..."); nullopt
// when it says no version.
std::optional<std::string> ParseNcuVersion(std::string_view output);

}  // namespace cutune::profile
