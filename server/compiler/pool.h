// A fixed set of threads compiling ahead of the GPU. NVRTC is thread-safe for distinct programs,
// so each request runs on its own program, in parallel.
#pragma once

#include <atomic>
#include <memory>

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/compiler/cache.h"
#include "server/compiler/compiler.h"

namespace cutune::compiler {

class CompilePool {
 public:
  // threads <= 0: one per hardware thread.
  explicit CompilePool(CachingCompiler& compiler, int threads = 0);
  // Finishes every submitted request, then joins the threads.
  ~CompilePool();

  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  std::future<absl::StatusOr<CompileResult>> Submit(CompileRequest request);
  // The same, abandoned (CANCELLED, nothing compiled) if `abandon` is set before a thread takes
  // it up: a cancelled sweep's queued compilations must not delay the next job.
  std::future<absl::StatusOr<CompileResult>> Submit(
      CompileRequest request, std::shared_ptr<const std::atomic<bool>> abandon);

  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Work();

  CachingCompiler& compiler_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<absl::StatusOr<CompileResult>()>> queue_;  // guarded by mutex_
  bool stopping_ = false;                                                  // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace cutune::compiler
