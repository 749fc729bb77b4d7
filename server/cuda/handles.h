// Move-only RAII owners of CUDA driver objects. Destructors never throw: a failure while
// releasing is ignored on purpose, because by then the context may already be poisoned and the
// process is about to be replaced anyway.
#pragma once

#include <cuda.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/cuda/driver.h"

namespace cutune::cuda {

// The status for a failed driver call: "<what>: CUDA_ERROR_... (n): text". Keeps the CUresult
// retrievable with ResultOf() so callers can classify it.
absl::Status CheckCu(CUresult result, std::string_view what);
CUresult ResultOf(const absl::Status& status);  // CUDA_SUCCESS when ok, else the stored result

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      ptr_ = std::exchange(other.ptr_, 0);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { Reset(); }

  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void Reset() noexcept;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

class Module {
 public:
  Module() = default;
  static absl::StatusOr<Module> Load(const std::string& image);
  Module(Module&& other) noexcept : module_(std::exchange(other.module_, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) {
      Reset();
      module_ = std::exchange(other.module_, nullptr);
    }
    return *this;
  }
  ~Module() { Reset(); }

  absl::StatusOr<CUfunction> Function(const std::string& name) const;

 private:
  void Reset() noexcept;
  CUmodule module_ = nullptr;
};

class Event {
 public:
  Event() = default;
  static absl::StatusOr<Event> Create();
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      Reset();
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  ~Event() { Reset(); }
  CUevent get() const { return event_; }

 private:
  void Reset() noexcept;
  CUevent event_ = nullptr;
};

class Stream {
 public:
  Stream() = default;
  static absl::StatusOr<Stream> Create();
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      Reset();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  ~Stream() { Reset(); }
  CUstream get() const { return stream_; }

 private:
  void Reset() noexcept;
  CUstream stream_ = nullptr;
};

}  // namespace cutune::cuda
