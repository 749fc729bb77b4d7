#include "server/profile/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace cutune::profile {

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const ProcessOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("no command to run");
  // The child's environment: ours, with options.env's names replaced.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    env[entry.substr(0, entry.find('='))] = entry;
  }
  for (const std::string& entry : options.env) env[entry.substr(0, entry.find('='))] = entry;
  std::vector<char*> envp;
  for (auto& [name, entry] : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (std::string& arg : copy) args.push_back(arg.data());
  args.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  // The daemon blocks SIGTERM/SIGINT for its sigwait thread; the child must not inherit that.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start '", argv[0], "': ", strerror(rc)));
  }

  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  bool open = true;
  char buffer[65536];
  while (open) {
    if (options.cancel != nullptr && options.cancel->load()) {
      result.cancelled = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    result.output.append(buffer, static_cast<size_t>(n));
    if (result.output.size() > options.max_output) {
      result.output.erase(0, result.output.size() - options.max_output);
    }
  }
  close(fds[0]);
  if (result.timed_out || result.cancelled) kill(-pid, SIGKILL);
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    // Output closed but the command lingers: the same limit and cancellation hold.
    if (!result.timed_out && std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
    }
    if (!result.cancelled && options.cancel != nullptr && options.cancel->load()) {
      result.cancelled = true;
      kill(-pid, SIGKILL);
    }
    usleep(10'000);
  }
  // Whatever ncu left behind in its group (its target) goes too.
  kill(-pid, SIGKILL);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace cutune::profile
