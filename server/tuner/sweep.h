// A sweep: one family on one shape, over a (possibly narrowed) space, within a budget. Candidates
// are chosen by a strategy, pruned against the device, compiled ahead on the compile pool, then
// verified and timed one at a time by the GPU's worker. Every candidate ends as a Measurement
// row whatever its outcome; the best few are re-measured interleaved, and the winner is the
// first of those tied with the fastest by PreferredAmongTied (winner.h).
//
// A sweep may be sharded across several GPUs of one model: each of their workers takes the next
// candidate as it becomes free, all rows go to the one result, and the first GPU (the sweep's
// own) measures the reference and re-measures the finalists alone, so that the winner is chosen
// on one GPU's figures.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/family.h"
#include "server/compiler/pool.h"
#include "server/core/types.h"
#include "server/worker/supervisor.h"

namespace cutune::tuner {

struct TimingOptions {
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 200;
  double target_rel_spread = 0.01;  // stop once stdev/mean <= 1% (after min_samples)
  double max_ms = 100;              // per candidate
  bool flush_l2 = true;             // between samples, for memory-bound families
  // A candidate whose first sample is above the fastest time so far times this stops there
  // (tuner::AbandonAbove; 0: every candidate timed in full).
  double abandon_factor = 0;
};

// The timing of a strategy's first measurement of each candidate: `base` for all but "quick",
// which answers in seconds and so times each candidate briefly (one warm-up, which the
// candidate's checked launch is, at least 3 samples, stopping at 2% spread or 50 ms: a kernel of
// milliseconds is within 0.4% by then, and a noisier one keeps sampling; one sample where it is
// 25% behind the fastest so far, kQuickAbandonFactor). The reference and the finalists'
// interleaved re-measurement always use `base`, so the winner is chosen on full measurements,
// and a first time that came out lucky is re-measured as a challenger (winner.h).
inline constexpr double kQuickAbandonFactor = 1.25;
TimingOptions TimingFor(std::string_view strategy, TimingOptions base);

struct SweepOptions {
  const kernels::KernelFamily* family = nullptr;
  Shape shape;
  DType dtype = DType::kF32;
  std::optional<kernels::Space> space;  // default: the family's default space
  // An explicit candidate list (e.g. the best configurations of another shape): replaces the
  // strategy's selection; each must obey the space's constraints. With strategy "quick" it is
  // the starting set instead (the portfolio), and members outside the space are skipped.
  std::vector<Params> candidates;
  std::string strategy = "brute_force";  // "brute_force" | "random" | "local" | "quick"
  int max_evaluations = 0;               // 0: no limit
  double max_seconds = 0;                // 0: no limit
  uint64_t seed = 1;                     // inputs and random strategies
  TimingOptions timing;
  // Fastest ok rows, re-measured interleaved; then rows timed once that beat the re-measured
  // fastest (tuner::Challengers), up to three times as many in all. The winner is one (0: none).
  int finalists = 4;
  int remeasure_rounds = 3;
  std::chrono::milliseconds candidate_timeout{10'000};
  bool verify = true;
  // Rows already measured (an interrupted sweep being resumed): not measured again, but ranked.
  std::vector<Measurement> finished;
  // Test hooks: make the named candidates misbehave in the worker process itself.
  std::set<std::string> debug_hang, debug_crash;
};

// Where the sweep's wall time went (seconds).
struct TimeBreakdown {
  double wall = 0;
  double compile = 0;        // NVRTC time summed over the pool's threads
  double compile_wait = 0;   // GPU idle, waiting for a compilation to finish
  double prepare = 0;        // buffers, inputs, reference output
  double reference = 0;      // copy / cuBLAS roofline figure
  double gpu = 0;            // candidates loaded, verified and timed (round trips to the worker)
  double load = 0;           //   of which: loading modules
  double verify = 0;         //   of which: the checked run, poisoning and comparison
  double timing = 0;         //   of which: warm-up and timed samples
  double remeasure = 0;      // finalists
};

struct Progress {
  int64_t done = 0;
  int64_t total = 0;
  std::map<Outcome, int64_t> counts;
  std::optional<Measurement> best;
  double elapsed_seconds = 0;
  double eta_seconds = 0;
  int latest_device = -1;  // ordinal of the GPU that measured the latest row (-1: none, resumed)
};

struct SweepResult {
  DeviceDescription device;
  int driver_version = 0;
  std::string nvrtc_version;
  std::string arch;
  std::vector<Measurement> rows;       // every candidate considered, in evaluation order
  std::optional<size_t> winner;        // index into rows: the PreferredAmongTied-first of `tied`
  // Only finalists can be tied: the fastest rows re-measured after the evaluation
  // (SweepOptions::finalists), those of them re-measured at least once. Without a re-measurement
  // (one ok row, or a sweep stopped before it) the fastest is tied alone. In row order; empty
  // when there is no winner.
  std::vector<size_t> tied;  // indices into rows tied with the fastest, the winner among them
  std::string reference_name;
  double reference_us = 0;
  int64_t invalid = 0;                 // combinations that break the space's constraints
  int64_t cache_hits = 0;
  bool cancelled = false;
  bool budget_exhausted = false;
  TimeBreakdown time;
  int worker_restarts = 0;  // summed over the sweep's GPUs
  // A sharded sweep: the ordinals of its GPUs (the sweep's own first), how many rows each
  // measured, and the GPUs dropped from it when their worker failed (their reasons); the others
  // went on with the candidate it held.
  std::vector<int> devices;
  std::map<int, int64_t> rows_by_device;
  std::vector<std::string> dropped;
};

using ProgressCallback = std::function<void(const Measurement& latest, const Progress& progress)>;

// The device limits a worker reported, in the form the families prune with.
kernels::DeviceLimits LimitsFrom(const worker::wpb::DeviceInfo& info);

class Sweeper {
 public:
  Sweeper(compiler::CompilePool& pool, worker::WorkerProcess& worker)
      : pool_(pool), workers_{&worker} {}
  // A sharded sweep: `workers` are GPUs of one model, the first the sweep's own (reference,
  // finalists). Not empty.
  Sweeper(compiler::CompilePool& pool, std::vector<worker::WorkerProcess*> workers)
      : pool_(pool), workers_(std::move(workers)) {}

  // Runs a sweep to the end, the budget, or `cancel`. Errors only for failures that are not any
  // candidate's: bad options (INVALID_ARGUMENT), no GPU (FAILED_PRECONDITION), quarantined GPU
  // (UNAVAILABLE), problem too large (RESOURCE_EXHAUSTED).
  absl::StatusOr<SweepResult> Run(const SweepOptions& options, const ProgressCallback& on_result,
                                  const std::atomic<bool>* cancel = nullptr);

 private:
  compiler::CompilePool& pool_;
  std::vector<worker::WorkerProcess*> workers_;
};

// Fills gbps / tflops / percent_of_reference of an ok row from its median time.
void DeriveFigures(const kernels::KernelFamily& family, const Shape& shape, double reference_us,
                   Measurement& row);

}  // namespace cutune::tuner
