#include "server/cuda/handles.h"

#include <atomic>

namespace cutune::cuda {
namespace {

const DriverApi& Api() {
  // Handles exist only after a successful Driver() call, so this cannot fail here.
  return **Driver();
}

}  // namespace

namespace internal {

void FreeMemory(CUdeviceptr ptr) noexcept { CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuMemFree, ptr); }
void UnloadModule(CUmodule module) noexcept {
  CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuModuleUnload, module);
}
void DestroyEvent(CUevent event) noexcept {
  CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuEventDestroy, event);
}
void DestroyStream(CUstream stream) noexcept {
  CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuStreamDestroy, stream);
}
void FreeHost(void* ptr) noexcept { CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuMemFreeHost, ptr); }

}  // namespace internal

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  DeviceBuffer buffer;
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuMemAlloc, buffer.ptr_.out(), bytes); !s.ok()) {
    return s;
  }
  buffer.bytes_ = bytes;
  return buffer;
}

absl::StatusOr<HostFlag> HostFlag::Allocate() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  HostFlag flag;
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuMemHostAlloc, flag.host_.out(), sizeof(uint32_t),
                                  CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
      !s.ok()) {
    return s;
  }
  std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(flag.host_.get())).store(0);
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuMemHostGetDevicePointer, &flag.device_,
                                  flag.host_.get(), 0);
      !s.ok()) {
    return s;
  }
  return flag;
}

void HostFlag::Store(uint32_t value) const {
  std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(host_.get()))
      .store(value, std::memory_order_release);
}

absl::StatusOr<Module> Module::Load(const std::string& image) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Module module;
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuModuleLoadData, module.module_.out(), image.data());
      !s.ok()) {
    return s;
  }
  return module;
}

absl::StatusOr<CUfunction> Module::Function(const std::string& name) const {
  CUfunction function = nullptr;
  if (auto s =
          CUTUNE_DRIVER_CALL(Api(), cuModuleGetFunction, &function, module_.get(), name.c_str());
      !s.ok()) {
    return Annotate(s, name);
  }
  return function;
}

absl::StatusOr<Event> Event::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Event event;
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuEventCreate, event.event_.out(), CU_EVENT_DEFAULT);
      !s.ok()) {
    return s;
  }
  return event;
}

absl::StatusOr<Stream> Stream::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Stream stream;
  if (auto s = CUTUNE_DRIVER_CALL(**driver, cuStreamCreate, stream.stream_.out(),
                                  CU_STREAM_NON_BLOCKING);
      !s.ok()) {
    return s;
  }
  return stream;
}

}  // namespace cutune::cuda
