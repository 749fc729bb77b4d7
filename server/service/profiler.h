// One candidate under Nsight Compute: the daemon writes the worker's ProfileJob to a temporary
// file, runs `ncu ... cutune-worker --profile JOB --result OUT --device N` with a limit, and reads
// back both the counters (ncu's CSV) and the worker's own verdict on the run. JobManager::Profile
// calls it while it holds the GPU, so no sweep runs there meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/worker.pb.h"
#include "server/profile/ncu.h"

namespace cutune::service {

struct ProfileRun {
  std::vector<profile::Metric> metrics;
  std::string ncu_version;
  worker::v1::RunResult run;  // what the profiled worker reported (outcome ok)
};

struct NcuRunOptions {
  std::string ncu;     // a path FindNcu returned
  std::string worker;  // cutune-worker
  int ordinal = 0;
  std::chrono::milliseconds timeout{180'000};
  const std::atomic<bool>* cancel = nullptr;
};

// Which launch of the candidate's kernel ncu measures, from 0: the first timed one, after the
// warm-ups, the first of which is the run's checked launch (made whether or not it `verify`s).
int ProfiledLaunch(const worker::v1::Run& run);

// Runs `job` under ncu. Errors: FAILED_PRECONDITION when ncu cannot run, may not read the counters
// or the candidate's run is not ok (its outcome and detail); DEADLINE_EXCEEDED past the limit;
// CANCELLED when `cancel` was set; INTERNAL when ncu or the worker failed otherwise (a tail of
// their output).
absl::StatusOr<ProfileRun> RunUnderNcu(const worker::v1::ProfileJob& job,
                                       const NcuRunOptions& options);

}  // namespace cutune::service
