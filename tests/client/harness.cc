#include "tests/client/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace cutune::testing {

std::filesystem::path BinDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

std::filesystem::path AssetsDir() { return CUTUNE_CLI_ASSETS; }

std::string ReadFileOrDie(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

std::vector<std::string> Environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (entry.rfind("CUTUNE_SERVER=", 0) == 0 || entry.rfind("CUTUNE_TOKEN=", 0) == 0) continue;
    env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t Spawn(const std::string& program, const std::vector<std::string>& args,
            const std::vector<std::string>& env, const std::string& out_path,
            const std::string& err_path) {
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = Environment(env);
  auto argv = Pointers(argv_strings);
  auto envp = Pointers(env_strings);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
  return pid;
}

// Waits up to `timeout`; kills the process after that. Returns the exit code (128+signal when
// killed).
int WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

RunResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                     const std::vector<std::string>& env, int timeout_seconds) {
  TempDir dir;
  const std::string out = (dir.path() / "stdout").string();
  const std::string err = (dir.path() / "stderr").string();
  pid_t pid = Spawn(program, args, env, out, err);
  RunResult result;
  result.exit_code = WaitFor(pid, std::chrono::seconds(timeout_seconds));
  result.out = ReadFileOrDie(out);
  result.err = ReadFileOrDie(err);
  return result;
}

Running::Running(const std::string& program, const std::vector<std::string>& args,
                 const std::vector<std::string>& env) {
  pid_ = Spawn(program, args, env, (dir_.path() / "stdout").string(),
               (dir_.path() / "stderr").string());
}

Running::~Running() {
  if (pid_ > 0) WaitFor(pid_, std::chrono::milliseconds(0));
}

RunResult Running::Wait(int timeout_seconds) {
  RunResult result;
  result.exit_code = WaitFor(pid_, std::chrono::seconds(timeout_seconds));
  pid_ = -1;
  result.out = ReadFileOrDie(dir_.path() / "stdout");
  result.err = ReadFileOrDie(dir_.path() / "stderr");
  return result;
}

RunResult RunInTerminal(const std::string& program, const std::vector<std::string>& args,
                        int columns, const std::vector<std::string>& env, int timeout_seconds) {
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = Environment(env);
  auto argv = Pointers(argv_strings);
  auto envp = Pointers(env_strings);
  winsize size{};
  size.ws_row = 24;
  size.ws_col = static_cast<unsigned short>(columns);
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, &size);
  if (pid < 0) throw std::runtime_error(std::string("forkpty: ") + std::strerror(errno));
  if (pid == 0) {
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  RunResult result;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd ready{terminal, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    const ssize_t n = read(terminal, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: the program closed the terminal (it exited)
    result.out.append(buffer, static_cast<size_t>(n));
  }
  close(terminal);
  result.exit_code = WaitFor(pid, std::chrono::seconds(1));
  return result;
}

std::string FakeWorker() { return (BinDir() / "fake-worker").string(); }

std::unique_ptr<Daemon> Daemon::Start(const std::vector<std::string>& extra_args,
                                      const std::vector<std::string>& probe_args,
                                      const std::vector<std::string>& env) {
  std::unique_ptr<Daemon> daemon(new Daemon());
  const std::filesystem::path& dir = daemon->dir_.path();
  daemon->target_ = "unix:" + (dir / "cutuned.sock").string();
  std::vector<std::string> args = {"--listen",    daemon->target_,
                                   "--db",        (dir / "cutune.db").string(),
                                   "--tables",    (AssetsDir() / "tables").string(),
                                   "--cache-dir", (dir / "cache").string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  // Hide any GPU: these tests need a table server on every machine, GPU runners included.
  std::vector<std::string> daemon_env = {"CUDA_VISIBLE_DEVICES="};
  daemon_env.insert(daemon_env.end(), env.begin(), env.end());
  daemon->pid_ = Spawn((BinDir() / "cutuned").string(), args, daemon_env,
                       (dir / "cutuned.out").string(), (dir / "cutuned.log").string());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (waitpid(daemon->pid_, &status, WNOHANG) == daemon->pid_) {
      daemon->pid_ = -1;
      throw std::runtime_error("cutuned exited at start:\n" + daemon->log());
    }
    if (std::filesystem::exists(dir / "cutuned.sock")) {
      std::vector<std::string> probe = {"devices", "--server", daemon->target_, "--timeout", "2"};
      probe.insert(probe.end(), probe_args.begin(), probe_args.end());
      RunResult answer = RunProgram((BinDir() / "cutune").string(), probe);
      // 7: a daemon with token files answered UNAUTHENTICATED, which is an answer too.
      if (answer.exit_code == 0 || answer.exit_code == 7) return daemon;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("cutuned did not answer within 30 s:\n" + daemon->log());
}

Daemon::~Daemon() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (WaitFor(pid_, std::chrono::seconds(15)) != 0) {
      std::fprintf(stderr, "cutuned did not stop cleanly; its log:\n%s\n", log().c_str());
    }
  }
}

std::string Daemon::log() const {
  try {
    return ReadFileOrDie(dir_.path() / "cutuned.log");
  } catch (const std::exception&) {
    return "(no log)";
  }
}

}  // namespace cutune::testing
