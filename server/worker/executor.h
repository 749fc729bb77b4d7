// The GPU side of a worker process: owns the device's primary context, the problem's buffers and
// the loaded candidate modules; verifies each candidate against the trusted reference and times
// it. Lives only inside cutune-worker, never in the daemon.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/worker.pb.h"
#include "kernels/family.h"
#include "server/cuda/handles.h"

namespace cutune::worker {

namespace wpb = ::cutune::worker::v1;

class Executor {
 public:
  // Initialises the driver and device `ordinal`, and compiles the support kernels.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(int ordinal);
  ~Executor();

  const wpb::DeviceInfo& device() const { return device_; }

  // Allocates the problem's buffers, fills inputs from the seed and computes the reference.
  absl::Status Prepare(const wpb::Prepare& prepare);
  // Loads, verifies and times one candidate. `poisoned()` tells afterwards whether the context
  // took a sticky error (the process must then exit).
  wpb::RunResult Run(const wpb::Run& run);
  absl::StatusOr<wpb::ReferenceResult> Reference(const wpb::Reference& reference);

  bool poisoned() const { return poisoned_; }

 private:
  Executor() = default;
  struct Problem;

  absl::StatusOr<wpb::Stats> Time(const std::function<absl::Status()>& launch,
                                  const wpb::TimingPolicy& policy, bool flush_l2);
  absl::Status LaunchOn(CUfunction function, const LaunchGeometry& geometry, CUdeviceptr output);
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
  cuda::DeviceBuffer compare_scratch_;  // sums (2 doubles), max bits, nonfinite count
  std::unique_ptr<Problem> problem_;
  std::map<std::string, cuda::Module> modules_;  // by candidate key
  bool poisoned_ = false;
};

}  // namespace cutune::worker
