// cutune-search-bench: how close each search strategy gets to a full sweep's best, and with how
// many evaluations, replayed on recorded sweeps (bench/data/<gpu>/<family>-<shape>.csv: every
// candidate of a default space measured on a real GPU). No GPU needed; deterministic per seed.
// The design target: within 3% of the brute-force optimum with at most 15% of the evaluations,
// median over seeds. With --table, `quick` starts where a daemon holding only that table starts
// it for --device (its quick start: the table's portfolio and winners, or those of a model of
// the same compute capability); without, as a daemon holding no table: the family's starters,
// then its baseline (store/quick_start.h). Quick is deterministic,
// so one seed is enough for it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "kernels/family.h"
#include "server/service/offline_table.h"
#include "server/store/quick_start.h"
#include "server/tuner/replay.h"

namespace {

using namespace cutune;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Replays search strategies on recorded sweeps and prints how near each gets to "
      "the best candidate, with how many evaluations"};
  std::string data_dir = "bench/data/h200";
  std::vector<std::string> strategies = {"random", "local"};
  int seeds = 21;
  double fraction = 0.15;
  size_t window = 32;
  double target_gap = 3.0;
  app.add_option("--data", data_dir, "Directory of recorded sweeps (<family>-<shape>.csv)")
      ->capture_default_str();
  app.add_option("--strategy", strategies, "Strategies to replay")->capture_default_str();
  app.add_option("--seeds", seeds, "Seeds per strategy (1..N)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--fraction", fraction, "Evaluation budget as a fraction of the valid candidates")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--window", window,
                 "Proposals outstanding before a result is heard (the "
                 "sweep's: twice the compile threads)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string table_path, device_name = "NVIDIA H200";
  std::string capability = "9.0";
  app.add_option("--table", table_path,
                 "A tuning table: quick starts as a daemon holding only it starts (else as one "
                 "holding no table: the family's starters, then its baseline)");
  bool no_starters = false;
  app.add_flag("--no-starters", no_starters,
               "Without --table: quick from the family baseline alone (no starters), as before "
               "they existed");
  app.add_option("--device", device_name, "The GPU model asking, for --table's quick start")
      ->capture_default_str();
  app.add_option("--cc", capability, "--device's compute capability (MAJOR.MINOR)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (no_starters && !table_path.empty()) {
    std::fprintf(stderr,
                 "--no-starters is for a start without --table (a table's start is the "
                 "daemon's, starters included)\n");
    return 2;
  }

  std::unique_ptr<service::OfflineTable> table;
  store::DeviceModel device{device_name, 0, 0, 0, 0};
  if (!table_path.empty()) {
    auto opened = service::OfflineTable::Open(table_path);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
      return 4;
    }
    table = *std::move(opened);
    const std::vector<std::string> cc = absl::StrSplit(capability, '.');
    if (cc.size() != 2 || !absl::SimpleAtoi(cc[0], &device.cc_major) ||
        !absl::SimpleAtoi(cc[1], &device.cc_minor)) {
      std::fprintf(stderr, "--cc wants MAJOR.MINOR, not '%s'\n", capability.c_str());
      return 4;
    }
  }

  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir, ec)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "cutune-search-bench: no recorded sweeps (*.csv) in %s\n",
                 data_dir.c_str());
    return 4;
  }
  std::sort(files.begin(), files.end());

  std::printf("%-28s %-8s %6s %6s %10s %10s %8s\n", "recording", "strategy", "evals", "of",
              "median gap", "worst gap", "<= 3%");
  bool all_pass = true;
  for (const auto& file : files) {
    const std::string stem = file.stem().string();
    const std::vector<std::string> parts = absl::StrSplit(stem, absl::MaxSplits('-', 1));
    const kernels::KernelFamily* family = kernels::FindFamily(parts[0]);
    if (family == nullptr) {
      std::fprintf(stderr, "%s: no kernel family '%s'\n", file.c_str(), parts[0].c_str());
      return 4;
    }
    auto recorded = tuner::LoadRecordedSweep(file.string(), &family->default_space());
    if (!recorded.ok() || !recorded->best_us) {
      std::fprintf(stderr, "%s\n",
                   recorded.ok() ? "no successful candidate recorded"
                                 : std::string(recorded.status().message()).c_str());
      return 1;
    }
    const kernels::Space& space = family->default_space();
    // Over what the recording holds (a recording of an older space lacks the newer candidates).
    const tuner::ValidCandidates candidates =
        tuner::RecordedSubset(tuner::EnumerateValid(space), *recorded);
    const auto valid = static_cast<int64_t>(candidates.candidates.size());
    const int64_t budget = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(fraction * static_cast<double>(valid))));
    std::vector<Params> start;
    if (table != nullptr) {
      auto shape = ParseShape(parts.size() == 2 ? parts[1] : "");
      auto started = shape.ok() ? table->QuickStart(device, *family, DType::kF32, *shape)
                                : absl::StatusOr<std::vector<Params>>(shape.status());
      if (!started.ok()) {
        std::fprintf(stderr, "%s: %s\n", file.c_str(),
                     std::string(started.status().message()).c_str());
        return 4;
      }
      start = *std::move(started);
    } else {
      start = store::QuickStartOfNothing(no_starters ? std::vector<Params>{} : family->starters(),
                                         family->baseline());
    }
    for (const std::string& strategy : strategies) {
      std::vector<double> gaps;
      int64_t evaluations = 0;
      const int runs = strategy == "quick" ? 1 : seeds;
      for (int seed = 1; seed <= runs; ++seed) {
        auto run =
            tuner::Replay(space, candidates, *recorded, strategy, static_cast<uint64_t>(seed),
                          strategy == "brute_force" || strategy == "quick" ? 0 : budget, window,
                          strategy == "quick" ? start : std::vector<Params>{});
        if (!run.ok()) {
          std::fprintf(stderr, "%s: %s\n", file.c_str(),
                       std::string(run.status().message()).c_str());
          return 1;
        }
        evaluations = std::max(evaluations, run->evaluations);
        gaps.push_back(run->best_us ? 100.0 * (*run->best_us / *recorded->best_us - 1) : 1e9);
      }
      const double median = Median(gaps);
      const double hits =
          static_cast<double>(
              std::count_if(gaps.begin(), gaps.end(), [&](double g) { return g <= target_gap; })) /
          static_cast<double>(gaps.size());
      if (strategy == "local" && median > target_gap) all_pass = false;
      std::printf("%-28s %-8s %6lld %6lld %9.2f%% %9.2f%% %7.0f%%\n", stem.c_str(),
                  strategy.c_str(), static_cast<long long>(evaluations),
                  static_cast<long long>(valid), median,
                  *std::max_element(gaps.begin(), gaps.end()), 100 * hits);
    }
  }
  std::printf(
      "\nlocal search, %.0f%% of the evaluations, median over %d seeds within %.0f%% of the "
      "best in every recording: %s\n",
      100 * fraction, seeds, target_gap, all_pass ? "pass" : "MISS");
  return 0;
}
