// Tuning jobs: one queue and one runner thread per GPU, so each GPU runs one sweep at a time and
// several GPUs tune in parallel. A sharded job (JobSpec::shards) also holds the other GPUs it
// measures on: it starts once all of them are free, and no younger job takes one of them while
// it waits, so jobs start in the order they were queued wherever their GPUs overlap. Identical in-flight requests are merged, idempotency keys return
// the job they first created, queues are bounded, cancellation is checked between candidates,
// and every candidate's row goes to the store as it is measured (so a killed daemon resumes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/family.h"
#include "server/compiler/pool.h"
#include "server/observe/events.h"
#include "server/service/profiler.h"
#include "server/store/store.h"
#include "server/tuner/sweep.h"
#include "server/worker/supervisor.h"

namespace cutune::service {

enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kCancelled };
std::string_view JobStateName(JobState state);

struct JobSpec {
  const kernels::KernelFamily* family = nullptr;
  Shape shape;
  DType dtype = DType::kF32;
  int device = 0;  // GPU ordinal
  std::string strategy = "brute_force";
  int max_evaluations = 0;
  double max_seconds = 0;
  std::map<std::string, std::vector<int64_t>> space;  // narrowing of the default space
  // Measured in order instead of the strategy's choice; with "quick", its starting set (empty:
  // store::QuickStart's, from what the store knows of the device, the family's starters and
  // its baseline).
  std::vector<Params> candidates;
  uint64_t seed = 1;
  std::string idempotency_key;
  // Continue an earlier sweep of this very spec (StartTuningRequest.resume). Like the key, not
  // part of what the spec describes: it is no part of MergeKey or the stored request.
  bool resume = false;
  // More GPUs of `device`'s model to shard the sweep across (ordinals; Submit removes `device`
  // and repeats), or all of them that are not quarantined (`shard_all`, resolved by Submit).
  // Where the work runs, not what it is: no part of MergeKey, the stored request or resume.
  std::vector<int> shards;
  bool shard_all = false;
  tuner::TimingOptions timing;

  // Two specs describing the same work (for merging in-flight requests).
  std::string MergeKey() const;
};

// A consistent copy of a job's state, for answers and progress streams.
struct JobSnapshot {
  std::string id;
  JobSpec spec;
  JobState state = JobState::kQueued;
  tuner::Progress progress;
  std::optional<Measurement> latest;
  std::string error;
  std::string reference_name;
  double reference_us = 0;
  std::map<std::string, double> phase_seconds;  // when ended; see JobProgress.phase_seconds
  std::vector<Measurement> ties;                 // when ended; see JobProgress.ties
  int64_t sweep_id = 0;                          // the store's sweep, once the job started
  int64_t resumed = 0;  // rows of `progress.done` an earlier run measured (JobProgress.resumed)
  std::vector<int> devices;        // once started: the GPUs it measures on, its own first
  std::vector<std::string> notes;  // what it survived: a GPU that left a sharded sweep, and why
  uint64_t version = 0;  // grows with every change
  bool finished() const {
    return state == JobState::kSucceeded || state == JobState::kFailed ||
           state == JobState::kCancelled;
  }
};

class Job;

// The scheduling rule, a pure function: a job waiting first in its GPU's queue, with its queue
// order (`seq`) and the GPUs it would hold (its own first, then its shards).
struct WaitingJob {
  uint64_t seq = 0;
  std::vector<int> gpus;
};
// Whether `job` may start: none of its GPUs is `held` by a running job, and no older job among
// `firsts` (each queue's first) waits for one of them. So the oldest waiting job always starts
// once its GPUs are let go: no deadlock, and no sharded job starved by a stream of small ones.
bool MayStart(const WaitingJob& job, const std::vector<bool>& held,
              const std::vector<WaitingJob>& firsts);

// One GPU as the service sees it: its worker process and its queue.
struct GpuInfo {
  int ordinal = 0;
  std::optional<worker::wpb::DeviceInfo> device;
  bool quarantined = false;
  bool busy = false;  // running a job, its own or one sharded onto it
  int queued = 0;
};

class JobManager {
 public:
  struct Options {
    int max_queue_per_gpu = 8;
    int compile_threads = 0;
    std::string worker_path;  // empty: next to this program
    std::chrono::milliseconds candidate_timeout{10'000};
    // Told of every job's queueing, start and end, every candidate measured, and (through the
    // workers) every worker restart and quarantine. nullptr: nobody.
    observe::Observer* observer = nullptr;
    // Nsight Compute for Profile: a path, or empty for profile::FindNcu's search.
    std::string ncu_path;
    std::chrono::milliseconds profile_timeout{180'000};
  };

  // Starts the first GPU's worker to learn how many GPUs there are. Without a driver or GPU the
  // manager still works as a table server: Submit fails with FAILED_PRECONDITION and the reason.
  JobManager(Options options, store::Store& store, compiler::CompilePool& pool);
  ~JobManager();

  // "" when GPUs are usable, else why not ("no CUDA driver on this host: ...").
  const std::string& no_gpu_reason() const { return no_gpu_reason_; }
  std::vector<GpuInfo> Gpus() const;
  // How many of the jobs this daemon has seen are in each state (every state listed).
  std::map<JobState, int> CountByState() const;

  // Queues a job (or returns the identical one in flight: merged = true). INVALID_ARGUMENT for a
  // bad spec, NOT_FOUND for an unknown GPU, FAILED_PRECONDITION without GPUs, UNAVAILABLE for a
  // quarantined GPU, RESOURCE_EXHAUSTED when its queue is full.
  absl::StatusOr<std::pair<std::string, bool>> Submit(JobSpec spec);

  absl::StatusOr<JobSnapshot> Get(const std::string& id) const;
  std::vector<JobSnapshot> List() const;
  // Waits until the job's version passes `after` or `deadline`; returns the latest snapshot.
  absl::StatusOr<JobSnapshot> WaitForChange(const std::string& id, uint64_t after,
                                            std::chrono::steady_clock::time_point deadline) const;
  absl::StatusOr<JobState> Cancel(const std::string& id);

  // Runs `job` under Nsight Compute on GPU `ordinal` (RunUnderNcu) once no job runs there: it
  // waits in that GPU's queue like a job, in queue order, and holds the GPU while it runs (the
  // GPU's worker is stopped meanwhile, so nothing else has a context there; the next job starts
  // a fresh one). Waits for the end. FAILED_PRECONDITION without ncu ("Nsight Compute (ncu) not
  // found: ...") or GPUs, NOT_FOUND for an unknown GPU, UNAVAILABLE for a quarantined one or a
  // shutdown, RESOURCE_EXHAUSTED when the queue is full; else RunUnderNcu's answer.
  absl::StatusOr<ProfileRun> Profile(int ordinal, const worker::wpb::ProfileJob& job);
  // The ncu Profile would run (profile::FindNcu of Options::ncu_path), or why there is none.
  absl::StatusOr<std::string> Ncu() const;

  // Stops taking work, cancels queued and running jobs (left resumable in the store), wakes every
  // WaitForChange caller, stops the workers. Idempotent.
  void Shutdown();
  bool shutting_down() const;

  // Called when a GPU's health changes (quarantined or back); for the health service.
  void SetHealthCallback(std::function<void(int ordinal, bool serving)> callback);

 private:
  struct Lane;
  void RunLane(Lane& lane);
  // Whether `job`, first in its GPU's queue, may start: none of its GPUs runs a job, and no
  // older job first in another queue waits for one of them.
  bool CanStartLocked(const Job& job) const;
  // Checks and resolves a spec's shards (in place): other GPUs of its model, not quarantined.
  absl::Status ResolveShardsLocked(JobSpec& spec) const;
  void RunJob(Lane& lane, const std::shared_ptr<Job>& job);
  // A job with work of its own (a profile): the GPU's worker stopped, then the work.
  void RunWork(Lane& lane, const std::shared_ptr<Job>& job);
  // Ends `job` succeeded with what the stored, succeeded `sweep` found (a resume of it).
  absl::Status AnswerFromSweep(Job& job, const store::SweepInfo& sweep);
  std::shared_ptr<Job> FindLocked(const std::string& id) const;
  // Tells the observer that a job ended (ran, or was cancelled before it started); each Job
  // calls it once, from the update that ended it.
  void ReportEnd(const JobSnapshot& job, double wall_seconds);

  const Options options_;
  observe::Observer& observer_;
  store::Store& store_;
  compiler::CompilePool& pool_;
  std::string no_gpu_reason_;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::condition_variable lanes_changed_;  // a queue grew or shrank, or a job let its GPUs go
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::map<std::string, std::string> by_idempotency_key_;
  std::map<std::string, std::string> in_flight_;  // MergeKey -> job id
  uint64_t next_job_ = 1;
  bool shutting_down_ = false;
  std::function<void(int, bool)> health_callback_;
  // Retrains the store's prediction models after finished sweeps (store::Store::RetrainModels),
  // off the lanes: neither the job's client nor the next job waits for the training.
  void RunTrainer();
  bool retrain_wanted_ = false;  // guarded by mu_
  std::condition_variable retrain_changed_;
  std::thread trainer_;
};

}  // namespace cutune::service
