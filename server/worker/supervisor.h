// The daemon's side of one GPU's worker process: starts cutune-worker, sends it requests with a
// deadline, and replaces it when a candidate kills it (fault) or hangs it (timeout). A GPU whose
// worker keeps dying at start-up is quarantined.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cutune/v1/worker.pb.h"
#include "server/observe/events.h"

namespace cutune::worker {

namespace wpb = ::cutune::worker::v1;

struct WorkerOptions {
  std::string executable;  // path of cutune-worker; empty: next to this program, then $PATH
  int ordinal = 0;
  std::chrono::milliseconds start_timeout{60'000};
  std::chrono::milliseconds prepare_timeout{300'000};
  int max_start_failures = 3;  // consecutive failed starts before the GPU is quarantined
  // Told of every worker replaced and of the quarantine; nullptr: nobody.
  observe::Observer* observer = nullptr;
  // Called once, by the thread that found it, when the GPU is quarantined (for health: a GPU
  // that goes bad mid-sweep is NOT_SERVING at once, not when the sweep ends). The worker's own
  // lock is held: the callback must not call back into this WorkerProcess's Run/Start/Prepare.
  std::function<void(int ordinal)> on_quarantine{};
};

// Where cutune-worker lives: $CUTUNE_WORKER, else beside /proc/self/exe, else "cutune-worker".
std::string DefaultWorkerPath();

class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerOptions options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the worker if it is not running. FAILED_PRECONDITION: no usable driver/GPU (the message
  // says which); UNAVAILABLE: quarantined after repeated start-up crashes.
  absl::StatusOr<wpb::DeviceInfo> Start();

  // Sets up a problem; remembered, and replayed on every replacement worker.
  absl::Status Prepare(const wpb::Prepare& prepare);

  // Runs one candidate. A worker that dies mid-run yields OUTCOME_FAULT, one that misses
  // `timeout` is killed and yields OUTCOME_TIMEOUT; the next call starts a fresh worker. Errors
  // are for failures that are not the candidate's (cannot start a worker, nothing prepared).
  absl::StatusOr<wpb::RunResult> Run(const wpb::Run& run, std::chrono::milliseconds timeout);

  absl::StatusOr<wpb::ReferenceResult> Reference(const wpb::Reference& reference,
                                                 std::chrono::milliseconds timeout);

  // Asks the worker to exit, killing it if it does not within a second.
  void Stop();

  int ordinal() const { return options_.ordinal; }
  bool quarantined() const;
  int restarts() const;  // workers replaced after a fault or timeout
  std::optional<wpb::DeviceInfo> device() const;

 private:
  absl::StatusOr<wpb::DeviceInfo> StartLocked();
  absl::Status SpawnLocked();
  absl::Status EnsurePreparedLocked();
  void KillLocked();
  void ReapLocked();
  absl::StatusOr<wpb::Response> CallLocked(wpb::Request request,
                                           std::chrono::milliseconds timeout);

  // Counts a replaced worker and tells the observer why ("fault", "timeout", "poisoned").
  void CountRestartLocked(std::string_view reason, std::string_view detail);

  const WorkerOptions options_;
  mutable std::mutex mu_;  // held for every exchange with the worker (a whole candidate run)
  pid_t pid_ = -1;
  int fd_ = -1;
  uint64_t next_id_ = 1;
  int start_failures_ = 0;
  std::optional<std::string> no_device_;  // the worker's own reason, when there is no GPU
  // What readers may see while a run holds mu_: written with mu_ and state_mu_ held, read with
  // either.
  mutable std::mutex state_mu_;
  int restarts_ = 0;
  bool quarantined_ = false;
  std::optional<wpb::DeviceInfo> device_;
  std::optional<wpb::Prepare> prepared_;
  bool needs_prepare_ = false;
};

}  // namespace cutune::worker
