// cutune-worker: the process that owns one GPU's CUDA context for cutuned. It answers requests
// on an inherited socket (--fd) until told to stop, and exits as soon as its context takes a
// sticky error, so that the supervisor replaces it with a clean one. With --profile it is a
// one-shot run for Nsight Compute instead: one problem, one candidate, then exit.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "server/worker/executor.h"
#include "server/worker/framing.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: cutune-worker --fd N --device ORDINAL\n"
               "       cutune-worker --profile JOB --result OUT --device ORDINAL\n"
               "Started by cutuned; speaks length-prefixed protobuf (worker.proto) on fd N. With\n"
               "--profile (under ncu): sets up the ProfileJob's problem as a sweep does, runs its\n"
               "candidate once, writes the RunResult to OUT; exit 0 when the run is ok.\n");
  return 2;
}

// The one-shot run ncu profiles: the same Prepare and Run a sweep sends, so the profiled launch
// is a timed launch of the sweep (same inputs, geometry, attributes, L2 flush before it).
// Exit codes: 0 ok, 5 the candidate's outcome is not ok, 3 the worker itself failed.
int ProfileOnce(int ordinal, const std::string& job_path, const std::string& result_path) {
  using namespace cutune::worker;
  std::ifstream in(job_path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  wpb::ProfileJob job;
  if (!in || !job.ParseFromString(bytes.str())) {
    std::fprintf(stderr, "cutune-worker: cannot read the profile job %s\n", job_path.c_str());
    return 3;
  }
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "cutune-worker: %s\n", s.ToString().c_str());
    return 3;
  };
  auto executor = Executor::Create(ordinal);
  if (!executor.ok()) return fail(executor.status());
  if (absl::Status s = (*executor)->Prepare(job.prepare()); !s.ok()) return fail(s);
  auto result = (*executor)->Run(job.run());
  if (!result.ok()) return fail(result.status());
  std::ofstream out(result_path, std::ios::binary | std::ios::trunc);
  if (!result->SerializeToOstream(&out) || !out.flush()) {
    std::fprintf(stderr, "cutune-worker: cannot write %s\n", result_path.c_str());
    return 3;
  }
  if (result->outcome() != wpb::OUTCOME_OK) {
    std::fprintf(stderr, "cutune-worker: candidate outcome %d: %s\n", result->outcome(),
                 result->detail().c_str());
    // A poisoned context must not be torn down by destructors that call into it.
    if ((*executor)->poisoned()) _exit(5);
    return 5;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cutune::worker;
  int fd = -1, ordinal = 0;
  std::string profile, result_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage(), 0;
    if (i + 1 >= argc) return Usage();
    if (arg == "--fd") {
      if (!absl::SimpleAtoi(argv[++i], &fd)) return Usage();
    } else if (arg == "--device") {
      if (!absl::SimpleAtoi(argv[++i], &ordinal)) return Usage();
    } else if (arg == "--profile") {
      profile = argv[++i];
    } else if (arg == "--result") {
      result_path = argv[++i];
    } else {
      return Usage();
    }
  }
  if (!profile.empty()) {
    return result_path.empty() ? Usage() : ProfileOnce(ordinal, profile, result_path);
  }
  if (fd < 0) return Usage();

  wpb::Response hello;
  auto executor = Executor::Create(ordinal);
  if (!executor.ok()) {
    hello.set_error(std::string(executor.status().message()));
    hello.set_error_code(static_cast<int>(executor.status().code()));
    (void)WriteFrame(fd, hello);
    return 3;
  }
  *hello.mutable_ready() = (*executor)->device();
  if (!WriteFrame(fd, hello).ok()) return 1;

  while (true) {
    wpb::Request request;
    if (!ReadFrame(fd, request).ok()) return 0;  // the daemon went away
    wpb::Response response;
    response.set_id(request.id());
    switch (request.kind_case()) {
      case wpb::Request::kPrepare: {
        absl::Status s = (*executor)->Prepare(request.prepare());
        if (s.ok()) {
          response.set_prepared(true);
        } else {
          response.set_error(std::string(s.message()));
          response.set_error_code(static_cast<int>(s.code()));
        }
        break;
      }
      case wpb::Request::kRun: {
        // An error here is the worker's own failure, not the candidate's outcome.
        auto result = (*executor)->Run(request.run());
        if (result.ok()) {
          *response.mutable_run() = *std::move(result);
        } else {
          response.set_error(std::string(result.status().message()));
          response.set_error_code(static_cast<int>(result.status().code()));
        }
        break;
      }
      case wpb::Request::kReference: {
        auto result = (*executor)->Reference(request.reference());
        if (result.ok()) {
          *response.mutable_reference() = *result;
        } else {
          response.set_error(std::string(result.status().message()));
          response.set_error_code(static_cast<int>(result.status().code()));
        }
        break;
      }
      case wpb::Request::kShutdown:
        (void)WriteFrame(fd, response);
        return 0;
      case wpb::Request::KIND_NOT_SET:
        response.set_error("empty request");
        break;
    }
    // A poisoned context can never run another kernel: say so, leave, and let the daemon start
    // afresh. _exit skips destructors that would call into the dead context.
    response.set_exiting((*executor)->poisoned());
    if (!WriteFrame(fd, response).ok()) return 1;
    if ((*executor)->poisoned()) _exit(4);
  }
}
