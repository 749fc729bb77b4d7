// Move-only RAII owners of CUDA driver objects. Destructors never throw: a failure while
// releasing is logged and otherwise ignored, because by then the context may already be poisoned
// and the process is about to be replaced anyway.
#pragma once

#include <cuda.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/cuda/check.h"
#include "server/cuda/driver.h"

namespace cutune::cuda {
namespace internal {

// Owns one driver handle, released with Release when destroyed or moved over; move-only. The
// release functions log a failure and go on (see the top of this file).
template <typename Handle, void (*Release)(Handle)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  ~UniqueHandle() { Reset(); }

  Handle get() const { return handle_; }
  Handle* out() { return &handle_; }  // for the driver call that creates it (when empty)

 private:
  void Reset() noexcept {
    if (handle_ != Handle{}) Release(handle_);
    handle_ = Handle{};
  }
  Handle handle_{};
};

void FreeMemory(CUdeviceptr ptr) noexcept;
void UnloadModule(CUmodule module) noexcept;
void DestroyEvent(CUevent event) noexcept;
void DestroyStream(CUstream stream) noexcept;
void FreeHost(void* ptr) noexcept;

}  // namespace internal

class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  CUdeviceptr get() const { return ptr_.get(); }
  size_t bytes() const { return ptr_.get() != 0 ? bytes_ : 0; }  // 0 once moved from

 private:
  internal::UniqueHandle<CUdeviceptr, internal::FreeMemory> ptr_;
  size_t bytes_ = 0;
};

class Module {
 public:
  static absl::StatusOr<Module> Load(const std::string& image);
  absl::StatusOr<CUfunction> Function(const std::string& name) const;

 private:
  internal::UniqueHandle<CUmodule, internal::UnloadModule> module_;
};

// One 32-bit word of pinned host memory that the GPU reads (mapped into its address space): a
// stream can wait on it (cuStreamWaitValue32) until the host stores a value, so that work queued
// behind the wait starts together, without the gaps of the host's enqueueing between them.
class HostFlag {
 public:
  // Zero at first.
  static absl::StatusOr<HostFlag> Allocate();
  CUdeviceptr device() const { return device_; }
  // Stores `value` where the GPU sees it (a release store: what was enqueued before is enqueued).
  void Store(uint32_t value) const;

 private:
  internal::UniqueHandle<void*, internal::FreeHost> host_;
  CUdeviceptr device_ = 0;
};

class Event {
 public:
  static absl::StatusOr<Event> Create();
  CUevent get() const { return event_.get(); }

 private:
  internal::UniqueHandle<CUevent, internal::DestroyEvent> event_;
};

class Stream {
 public:
  static absl::StatusOr<Stream> Create();
  CUstream get() const { return stream_.get(); }

 private:
  internal::UniqueHandle<CUstream, internal::DestroyStream> stream_;
};

}  // namespace cutune::cuda
