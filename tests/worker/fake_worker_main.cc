// A stand-in for cutune-worker that needs no GPU, so the supervisor's handling of crashes, hangs
// and restarts is tested on every machine. It speaks the real protocol; its "measurements" are
// fixed numbers and it is never part of the product. The real worker is covered by the gpu tests.
//   --fd N --device K [--fail-start]; FAKE_WORKER_RUN_MS=N makes every run take N ms;
//   FAKE_WORKER_RUN_LOG=FILE appends "run verify=0|1 device=K" per run (to count what was
//   measured, and where); FAKE_WORKER_FAST_DEVICE=K makes device K's times 2% shorter (two GPUs
//   of one model a little apart); FAKE_WORKER_BREAK_FILE=F: while F holds this device's ordinal,
//   its worker dies at its next run and at every start (a GPU that has gone bad);
//   FAKE_WORKER_FIRST_SCALE=F multiplies the times of verifying runs (a candidate's first
//   measurement) by F, as small kernels on an H200 time below their re-measurements;
//   FAKE_WORKER_DEVICES=N reports N GPUs (default 1); FAKE_WORKER_MEMORY_MB=N its memory;
//   FAKE_WORKER_TIMING=T the timing it says its samples start with (default "held");
//   FAKE_WORKER_POISON_FILE=F: while F exists, the next run removes it and answers as a poisoned
//   worker does (an error marked exiting, then exit); FAKE_WORKER_CRASH_FILE=F and
//   FAKE_WORKER_HANG_FILE=F: while F exists, the next run removes it and dies (a candidate that
//   faults) or hangs (one that times out), for tests of a whole daemon. It
//   describes itself as an H100-like sm_90 device with 80 GiB, so the service's pruning and
//   memory checks see real limits. --profile JOB --result OUT is the one-shot run ncu profiles
//   (as cutune-worker's): it reads the ProfileJob and writes an ok RunResult (FAKE_WORKER_RUN_LOG
//   gets "profile family=F kernel=K device=K"); FAKE_WORKER_PROFILE_OUTCOME=wrong_answer makes
//   it a wrong answer (exit 5).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cutune/v1/worker.pb.h"
#include "server/compiler/compiler.h"
#include "server/worker/framing.h"

int main(int argc, char** argv) {
  using namespace cutune::worker;
  int fd = -1;
  int device = 0;
  bool fail_start = false;
  std::string profile, result_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--profile" && i + 1 < argc) profile = argv[++i];
    if (arg == "--result" && i + 1 < argc) result_path = argv[++i];
    if (arg == "--fd" && i + 1 < argc) fd = std::atoi(argv[++i]);
    if (arg == "--device" && i + 1 < argc) device = std::atoi(argv[++i]);
    if (arg == "--fail-start") fail_start = true;
  }
  if (const char* mode = std::getenv("FAKE_WORKER_MODE"); mode && std::string(mode) == "crash")
    std::abort();
  if (!profile.empty()) {
    std::ifstream in(profile, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    v1::ProfileJob job;
    if (!in || !job.ParseFromString(bytes.str()) || !job.run().verify()) return 3;
    if (const char* log = std::getenv("FAKE_WORKER_RUN_LOG")) {
      std::ofstream(log, std::ios::app) << "profile family=" << job.prepare().family()
                                        << " kernel=" << job.run().candidate().kernel()
                                        << " device=" << device << "\n";
    }
    v1::RunResult result;
    const char* outcome = std::getenv("FAKE_WORKER_PROFILE_OUTCOME");
    const bool wrong = outcome != nullptr && std::string(outcome) == "wrong_answer";
    result.set_outcome(wrong ? v1::OUTCOME_WRONG_ANSWER : v1::OUTCOME_OK);
    if (wrong) result.set_detail("max abs error 1 (fake)");
    result.mutable_stats()->set_samples(1);
    result.mutable_stats()->set_median_us(12.5);
    std::ofstream out(result_path, std::ios::binary | std::ios::trunc);
    if (!result.SerializeToOstream(&out)) return 3;
    return wrong ? 5 : 0;
  }
  // Whether FAKE_WORKER_BREAK_FILE names this device now.
  const auto broken = [device] {
    const char* file = std::getenv("FAKE_WORKER_BREAK_FILE");
    if (file == nullptr) return false;
    std::ifstream in(file);
    int ordinal = -1;
    return static_cast<bool>(in >> ordinal) && ordinal == device;
  };
  if (broken()) std::abort();
  const char* fast = std::getenv("FAKE_WORKER_FAST_DEVICE");
  const double scale = fast != nullptr && std::atoi(fast) == device ? 0.98 : 1.0;
  v1::Response hello;
  if (fail_start) {
    hello.set_error("no CUDA driver on this host (fake)");
    hello.set_error_code(9);
    (void)WriteFrame(fd, hello);
    return 3;
  }
  v1::DeviceInfo& ready = *hello.mutable_ready();
  ready.set_ordinal(device);
  ready.set_name("Fake GPU");
  ready.set_uuid("GPU-fake-" + std::to_string(device));
  ready.set_cc_major(9);
  ready.set_cc_minor(0);
  ready.set_sm_count(132);
  const char* memory_mb = std::getenv("FAKE_WORKER_MEMORY_MB");
  ready.set_total_memory_bytes(memory_mb ? std::atoll(memory_mb) << 20 : int64_t{80} << 30);
  ready.set_max_threads_per_block(1024);
  ready.set_max_shared_per_block_optin(227 * 1024);
  ready.set_max_registers_per_block(64 * 1024);
  ready.set_max_shared_per_sm(228 * 1024);
  ready.set_max_registers_per_sm(64 * 1024);
  ready.set_driver_version(13000);
  ready.set_nvrtc_version(cutune::compiler::NvrtcVersion());
  const char* timing = std::getenv("FAKE_WORKER_TIMING");
  ready.set_timing(timing ? timing : "held");
  const char* devices = std::getenv("FAKE_WORKER_DEVICES");
  ready.set_device_count(devices ? std::atoi(devices) : 1);
  (void)WriteFrame(fd, hello);
  bool prepared = false;
  while (true) {
    v1::Request request;
    if (!ReadFrame(fd, request).ok()) return 0;
    v1::Response response;
    response.set_id(request.id());
    if (request.has_prepare()) {
      prepared = true;
      response.set_prepared(true);
    } else if (request.has_run()) {
      if (request.run().debug_crash() || broken()) std::abort();
      if (request.run().debug_hang()) std::this_thread::sleep_for(std::chrono::hours(1));
      if (const char* crash = std::getenv("FAKE_WORKER_CRASH_FILE");
          crash != nullptr && std::remove(crash) == 0) {
        std::abort();
      }
      if (const char* hang = std::getenv("FAKE_WORKER_HANG_FILE");
          hang != nullptr && std::remove(hang) == 0) {
        std::this_thread::sleep_for(std::chrono::hours(1));
      }
      if (const char* log = std::getenv("FAKE_WORKER_RUN_LOG")) {
        std::ofstream(log, std::ios::app)
            << "run verify=" << request.run().verify() << " device=" << device << "\n";
      }
      if (const char* delay = std::getenv("FAKE_WORKER_RUN_MS")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(delay)));
      }
      if (const char* poison = std::getenv("FAKE_WORKER_POISON_FILE");
          poison != nullptr && std::ifstream(poison).good()) {
        // As the real worker after a sticky error outside the candidate's launch: an error
        // answer that says the worker exits, then the exit. The file is consumed, so the
        // replacement worker runs normally.
        std::remove(poison);
        response.set_error("cuMemsetD32Async(...) failed: CUDA_ERROR_ILLEGAL_ADDRESS (700) (fake)");
        response.set_error_code(13);
        response.set_exiting(true);
        (void)WriteFrame(fd, response);
        return 4;
      }
      if (!prepared) {
        response.set_error("run before prepare");
      } else {
        response.mutable_run()->set_outcome(v1::OUTCOME_OK);
        // A stable, parameter-dependent "time" so that rankings are deterministic.
        const std::string& key = request.run().candidate().key();
        const char* first_scale = std::getenv("FAKE_WORKER_FIRST_SCALE");
        const double first =
            first_scale != nullptr && request.run().verify() ? std::atof(first_scale) : 1.0;
        response.mutable_run()->mutable_stats()->set_median_us(
            first * scale *
            static_cast<double>(10 + key.size() % 7 + (key.empty() ? 0 : key[0] % 5)));
        response.mutable_run()->mutable_stats()->set_samples(10);
      }
    } else if (request.has_shutdown()) {
      (void)WriteFrame(fd, response);
      return 0;
    }
    if (!WriteFrame(fd, response).ok()) return 1;
  }
}
