// Runs a command to its end with a time limit, its stdout and stderr captured together: how the
// daemon runs ncu (which starts the worker as its own child). The command gets its own process
// group, so a limit or a cancellation kills ncu and its target alike.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cutune::profile {

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal (then `signal` says which)
  int signal = 0;
  bool timed_out = false;
  bool cancelled = false;
  std::string output;  // stdout and stderr interleaved, at most max_output bytes (the last ones)
};

struct ProcessOptions {
  std::chrono::milliseconds timeout{60'000};
  std::vector<std::string> env;  // "NAME=value", added to (or replacing in) this process's
  const std::atomic<bool>* cancel = nullptr;  // checked every 50 ms
  size_t max_output = 4 << 20;
};

// FAILED_PRECONDITION when the command cannot be started (its path and why).
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const ProcessOptions& options);

}  // namespace cutune::profile
