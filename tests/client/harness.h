// Runs the real binaries for the CLI tests: a cutuned table server on a unix socket (temp
// database, the fixture tables in tests/client/assets/tables), and cutune or any other program
// with captured stdout, stderr and exit code.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace cutune::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The directory of the running test binary, where cutune and cutuned are built too.
std::filesystem::path BinDir();
std::filesystem::path AssetsDir();
std::string ReadFileOrDie(const std::filesystem::path& path);
std::string FakeWorker();  // tests/worker's stand-in for the GPU worker, built beside cutune

// A fresh temporary directory, removed with the object.

// Runs `program` with `args`; the environment is this process's, without CUTUNE_SERVER and
// CUTUNE_TOKEN, plus `env` ("NAME=value"). Killed after `timeout_seconds`.
RunResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}, int timeout_seconds = 60);

// A program left running, to be signalled: stdout and stderr go to files, as in RunProgram.
class Running {
 public:
  Running(const std::string& program, const std::vector<std::string>& args,
          const std::vector<std::string>& env = {});
  ~Running();  // kills it if still running
  pid_t pid() const { return pid_; }
  RunResult Wait(int timeout_seconds = 60);  // then killed

 private:
  TempDir dir_;
  pid_t pid_ = -1;
};

// Runs `program` on a pseudo-terminal of `columns` x 24 (0: a terminal that does not say its
// width): what it wrote to the terminal (stdout and stderr together) and its exit code.
RunResult RunInTerminal(const std::string& program, const std::vector<std::string>& args,
                        int columns, const std::vector<std::string>& env = {},
                        int timeout_seconds = 60);

class Daemon {
 public:
  // Starts cutuned and waits until `cutune devices <probe_args>` gets an answer; `env`
  // ("NAME=value") is added to its environment (the fake worker's knobs).
  static std::unique_ptr<Daemon> Start(const std::vector<std::string>& extra_args = {},
                                       const std::vector<std::string>& probe_args = {},
                                       const std::vector<std::string>& env = {});
  ~Daemon();
  const std::string& target() const { return target_; }  // "unix:/tmp/.../cutuned.sock"
  std::string log() const;

 private:
  Daemon() = default;
  TempDir dir_;
  std::string target_;
  pid_t pid_ = -1;
};

}  // namespace cutune::testing
