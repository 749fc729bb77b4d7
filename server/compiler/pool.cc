// Compile thread pool: a mutex-guarded queue of packaged tasks and a condition variable.
#include "server/compiler/pool.h"

#include <algorithm>
#include <utility>

namespace cutune::compiler {

CompilePool::CompilePool(CachingCompiler& compiler, int threads) : compiler_(compiler) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

std::future<absl::StatusOr<CompileResult>> CompilePool::Submit(CompileRequest request) {
  return Submit(std::move(request), nullptr);
}

std::future<absl::StatusOr<CompileResult>> CompilePool::Submit(
    CompileRequest request, std::shared_ptr<const std::atomic<bool>> abandon) {
  std::packaged_task<absl::StatusOr<CompileResult>()> task(
      [this, request = std::move(request),
       abandon = std::move(abandon)]() -> absl::StatusOr<CompileResult> {
        if (abandon && abandon->load()) return absl::CancelledError("compilation abandoned");
        return compiler_.Compile(request);
      });
  std::future<absl::StatusOr<CompileResult>> future = task.get_future();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
  return future;
}

void CompilePool::Work() {
  for (;;) {
    std::packaged_task<absl::StatusOr<CompileResult>()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain before stopping: every future handed out gets its value.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace cutune::compiler
