// The GPU side of a worker process: owns the device's primary context, the problem's buffers and
// the loaded candidate modules; verifies each candidate against the trusted reference and times
// it. Lives only inside cutune-worker, never in the daemon. Every driver call is checked
// (server/cuda/check.h) and what a failure means is decided by server/cuda/errors.h alone.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/worker.pb.h"
#include "kernels/family.h"
#include "server/cuda/errors.h"
#include "server/cuda/handles.h"
#include "server/tuner/verification.h"

namespace cutune::worker {

namespace wpb = ::cutune::worker::v1;

// How a run whose `stage` failed with `status` ends, by the rule of server/cuda/errors.h: `partial`
// with the outcome the error implies (a sticky error: OUTCOME_FAULT, which also poisons the
// context; a refused launch: OUTCOME_OUT_OF_RESOURCES), or, where it implies none, the status
// itself naming the stage: the worker's own failure, which no outcome would describe truly.
struct RunFailure {
  absl::StatusOr<wpb::RunResult> result;
  bool poisons_context = false;
};
RunFailure ClassifyRunFailure(wpb::RunResult partial, const absl::Status& status,
                              absl::string_view stage, cuda::CallSite site = cuda::CallSite::kAny);

class Executor {
 public:
  // Initialises the driver and device `ordinal`, and compiles the support kernels.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(int ordinal);
  ~Executor();

  const wpb::DeviceInfo& device() const { return device_; }

  // Allocates the problem's buffers, fills inputs from the seed and computes the reference.
  absl::Status Prepare(const wpb::Prepare& prepare);
  // Loads, verifies and times one candidate. A failed step ends as ClassifyRunFailure says: in
  // the candidate's outcome, or in an error status (the worker's failure, never an outcome).
  absl::StatusOr<wpb::RunResult> Run(const wpb::Run& run);
  absl::StatusOr<wpb::ReferenceResult> Reference(const wpb::Reference& reference);

  // Whether any request took a sticky error: the context is dead and the process must exit.
  bool poisoned() const { return poisoned_; }

 private:
  Executor() = default;
  struct Problem;

  absl::Status SetUp(const wpb::Prepare& prepare);
  absl::StatusOr<wpb::ReferenceResult> MeasureReference(const wpb::Reference& reference);
  // Marks the executor poisoned when `status` carries a context-fatal CUresult; returns it.
  absl::Status MarkIfFatal(absl::Status status);
  // ClassifyRunFailure, marking the executor poisoned where the failure says so.
  absl::StatusOr<wpb::RunResult> Failed(wpb::RunResult partial, const absl::Status& status,
                                        absl::string_view stage,
                                        cuda::CallSite site = cuda::CallSite::kAny);

  // `launched`: launches of the same kernel just before, which count as warm-up launches. Each
  // sample is an event pair around one launch; where the stream can wait on a host flag (held
  // start), the pair and the launch are queued behind a wait that the host lifts once all of
  // them are queued, so that the sample holds the kernel's time on the GPU and not the gaps of
  // the host's enqueueing (on an idle GPU, launch-bound kernels measured 10-20% apart from one
  // sample to the next: bench/results/unseen-shapes.md, section 32).
  absl::StatusOr<wpb::Stats> Time(const std::function<absl::Status()>& launch,
                                  const wpb::TimingPolicy& policy, bool flush_l2, int launched = 0);
  absl::Status LaunchOn(CUfunction function, const LaunchGeometry& geometry, CUdeviceptr output);
  // The prepared output against the reference (the support module's compare kernel).
  absl::StatusOr<tuner::OutputComparison> CompareOutput();
  absl::Status Fill(CUdeviceptr buffer, int64_t count, uint64_t seed);
  absl::StatusOr<CUfunction> LoadCandidate(const wpb::Candidate& candidate);

  wpb::DeviceInfo device_;
  CUdevice cu_device_ = 0;
  CUcontext context_ = nullptr;
  cuda::Stream stream_;
  cuda::Event start_, stop_;
  cuda::Module support_;
  CUfunction fill_ = nullptr, compare_ = nullptr;
  cuda::DeviceBuffer flush_buffer_;
  // Held start (Time): the flag the stream waits on and the last value stored; unset where this
  // driver or device cannot wait on host memory, or CUTUNE_TIMING_IDLE_START is set (to compare
  // with samples taken the old way).
  std::optional<cuda::HostFlag> hold_;
  uint32_t hold_value_ = 0;
  cuda::DeviceBuffer compare_scratch_;  // sums (2 doubles), max bits, nonfinite count
  std::unique_ptr<Problem> problem_;
  std::map<std::string, cuda::Module> modules_;  // by candidate key
  bool poisoned_ = false;
};

}  // namespace cutune::worker
