#include "server/worker/supervisor.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/worker/framing.h"

extern char** environ;

namespace cutune::worker {

std::string DefaultWorkerPath() {
  if (const char* env = std::getenv("CUTUNE_WORKER"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "cutune-worker";
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return "cutune-worker";
}

WorkerProcess::WorkerProcess(WorkerOptions options) : options_(std::move(options)) {}

WorkerProcess::~WorkerProcess() { Stop(); }

// The three readers take only state_mu_: mu_ is held for a whole candidate run, and lookups
// and listings must never wait on the GPU.
bool WorkerProcess::quarantined() const {
  std::lock_guard lock(state_mu_);
  return quarantined_;
}

int WorkerProcess::restarts() const {
  std::lock_guard lock(state_mu_);
  return restarts_;
}

std::optional<wpb::DeviceInfo> WorkerProcess::device() const {
  std::lock_guard lock(state_mu_);
  return device_;
}

void WorkerProcess::CountRestartLocked(std::string_view reason, std::string_view detail) {
  {
    std::lock_guard lock(state_mu_);
    ++restarts_;
  }
  if (options_.observer) options_.observer->WorkerRestarted({options_.ordinal, reason, detail});
}

absl::Status WorkerProcess::SpawnLocked() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  // The child's end must survive exec; only it loses CLOEXEC (dup2 onto a fixed number would
  // race with other threads' descriptors, a fresh dup does not).
  int child_fd = dup(fds[1]);
  close(fds[1]);
  std::string path = options_.executable.empty() ? DefaultWorkerPath() : options_.executable;
  std::string fd_text = std::to_string(child_fd), device_text = std::to_string(options_.ordinal);
  const char* argv[] = {path.c_str(), "--fd", fd_text.c_str(), "--device", device_text.c_str(),
                        nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, path.c_str(), &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(child_fd);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start the GPU worker '", path, "': ", strerror(rc)));
  }
  pid_ = pid;
  fd_ = fds[0];
  return absl::OkStatus();
}

void WorkerProcess::ReapLocked() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    // The worker is exiting or was killed; wait so no zombie is left, but not forever.
    for (int i = 0; i < 500; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) != 0) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
}

void WorkerProcess::KillLocked() {
  if (pid_ > 0) kill(pid_, SIGKILL);
  ReapLocked();
}

absl::StatusOr<wpb::DeviceInfo> WorkerProcess::Start() {
  std::lock_guard lock(mu_);
  return StartLocked();
}

absl::StatusOr<wpb::DeviceInfo> WorkerProcess::StartLocked() {
  if (pid_ > 0 && device_) return *device_;
  if (quarantined_) {
    return absl::UnavailableError(absl::StrCat("GPU ", options_.ordinal,
                                               " is quarantined: its worker failed to start ",
                                               start_failures_, " times in a row"));
  }
  if (no_device_) return absl::FailedPreconditionError(*no_device_);
  while (true) {
    if (auto s = SpawnLocked(); !s.ok()) return s;
    wpb::Response hello;
    absl::Status s = ReadFrame(fd_, hello, options_.start_timeout);
    if (s.ok() && hello.has_ready()) {
      {
        std::lock_guard state(state_mu_);
        device_ = hello.ready();
      }
      start_failures_ = 0;
      if (prepared_) needs_prepare_ = true;
      return *device_;
    }
    KillLocked();
    if (s.ok() && !hello.error().empty()) {
      // The worker ran and explained itself (no driver, no such GPU): not a crash, and final.
      no_device_ = hello.error();
      return absl::FailedPreconditionError(hello.error());
    }
    if (++start_failures_ >= options_.max_start_failures) {
      {
        std::lock_guard state(state_mu_);
        quarantined_ = true;
      }
      if (options_.observer) {
        options_.observer->DeviceQuarantined(
            {options_.ordinal, start_failures_, ToStd(s.message())});
      }
      if (options_.on_quarantine) options_.on_quarantine(options_.ordinal);
      return absl::UnavailableError(absl::StrCat(
          "GPU ", options_.ordinal, " is quarantined: its worker failed to start ",
          start_failures_, " times in a row (last: ", std::string(s.message()), ")"));
    }
  }
}

absl::StatusOr<wpb::Response> WorkerProcess::CallLocked(wpb::Request request,
                                                        std::chrono::milliseconds timeout) {
  request.set_id(next_id_++);
  if (auto s = WriteFrame(fd_, request); !s.ok()) {
    KillLocked();
    return s;
  }
  wpb::Response response;
  absl::Status s = ReadFrame(fd_, response, timeout);
  if (!s.ok()) {
    KillLocked();
    return s;
  }
  if (response.id() != request.id()) {
    KillLocked();
    return absl::InternalError("worker answered out of order");
  }
  if (response.exiting()) {
    // Its context is poisoned: collect it now, so the next request starts a fresh worker
    // instead of meeting a dead one (and blaming that candidate).
    const bool candidate = response.has_run() && response.run().outcome() == wpb::OUTCOME_FAULT;
    CountRestartLocked(candidate ? "fault" : "poisoned",
                       candidate ? response.run().detail() : response.error());
    ReapLocked();
  }
  return response;
}

absl::Status WorkerProcess::EnsurePreparedLocked() {
  if (!prepared_) return absl::FailedPreconditionError("no problem prepared on this GPU");
  if (auto started = StartLocked(); !started.ok()) return started.status();
  if (!needs_prepare_) return absl::OkStatus();
  // A replacement worker: set the same problem up again before anything else.
  wpb::Request request;
  *request.mutable_prepare() = *prepared_;
  auto response = CallLocked(request, options_.prepare_timeout);
  if (!response.ok() || !response->error().empty()) {
    return absl::InternalError("a replacement worker could not prepare the problem again");
  }
  needs_prepare_ = false;
  return absl::OkStatus();
}

absl::Status WorkerProcess::Prepare(const wpb::Prepare& prepare) {
  std::lock_guard lock(mu_);
  prepared_ = prepare;
  needs_prepare_ = true;
  if (auto started = StartLocked(); !started.ok()) return started.status();
  wpb::Request request;
  *request.mutable_prepare() = prepare;
  auto response = CallLocked(request, options_.prepare_timeout);
  if (!response.ok()) {
    return absl::InternalError(
        absl::StrCat("worker failed while preparing the problem: ", response.status().ToString()));
  }
  if (!response->error().empty()) {
    prepared_.reset();
    return absl::Status(static_cast<absl::StatusCode>(response->error_code()), response->error());
  }
  needs_prepare_ = false;
  return absl::OkStatus();
}

absl::StatusOr<wpb::RunResult> WorkerProcess::Run(const wpb::Run& run,
                                                  std::chrono::milliseconds timeout) {
  std::lock_guard lock(mu_);
  if (auto s = EnsurePreparedLocked(); !s.ok()) return s;
  wpb::Request request;
  *request.mutable_run() = run;
  auto response = CallLocked(request, timeout);
  wpb::RunResult result;
  if (!response.ok()) {
    const bool hung = absl::IsDeadlineExceeded(response.status());
    if (hung) {
      result.set_outcome(wpb::OUTCOME_TIMEOUT);
      result.set_detail(absl::StrCat("no result within ", timeout.count(),
                                     " ms; the worker was killed and replaced"));
    } else {
      result.set_outcome(wpb::OUTCOME_FAULT);
      result.set_detail("the worker process died while running this candidate; replaced");
    }
    CountRestartLocked(hung ? "timeout" : "fault", result.detail());
    return result;
  }
  if (!response->has_run()) {
    return absl::InternalError(absl::StrCat("worker error: ", response->error()));
  }
  result = response->run();
  if (result.outcome() == wpb::OUTCOME_FAULT && !response->exiting()) {
    // A worker that does not say so (an older one) still exits after a sticky error.
    CountRestartLocked("fault", result.detail());
    ReapLocked();
  }
  return result;
}

absl::StatusOr<wpb::ReferenceResult> WorkerProcess::Reference(const wpb::Reference& reference,
                                                              std::chrono::milliseconds timeout) {
  std::lock_guard lock(mu_);
  if (auto s = EnsurePreparedLocked(); !s.ok()) return s;
  wpb::Request request;
  *request.mutable_reference() = reference;
  auto response = CallLocked(request, timeout);
  if (!response.ok()) return response.status();
  if (!response->has_reference()) {
    return absl::InternalError(absl::StrCat("reference measurement failed: ", response->error()));
  }
  return response->reference();
}

void WorkerProcess::Stop() {
  std::lock_guard lock(mu_);
  if (pid_ <= 0) return;
  wpb::Request request;
  request.mutable_shutdown();
  (void)CallLocked(request, std::chrono::milliseconds(1000));
  ReapLocked();
}

}  // namespace cutune::worker
