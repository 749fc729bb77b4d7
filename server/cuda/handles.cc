#include "server/cuda/handles.h"

#include "absl/strings/str_cat.h"

namespace cutune::cuda {
namespace {

constexpr char kResultPayload[] = "cutune.cuda.CUresult";

const DriverApi& Api() {
  // Handles exist only after a successful Driver() call, so this cannot fail here.
  return **Driver();
}

}  // namespace

absl::Status CheckCu(CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  absl::Status status(absl::StatusCode::kInternal,
                      absl::StrCat(std::string(what), ": ", DescribeError(result)));
  status.SetPayload(kResultPayload, absl::Cord(std::to_string(static_cast<int>(result))));
  return status;
}

CUresult ResultOf(const absl::Status& status) {
  if (status.ok()) return CUDA_SUCCESS;
  auto payload = status.GetPayload(kResultPayload);
  if (!payload) return CUDA_ERROR_UNKNOWN;
  return static_cast<CUresult>(std::stoi(std::string(*payload)));
}

namespace internal {

void FreeMemory(CUdeviceptr ptr) noexcept { Api().cuMemFree(ptr); }
void UnloadModule(CUmodule module) noexcept { Api().cuModuleUnload(module); }
void DestroyEvent(CUevent event) noexcept { Api().cuEventDestroy(event); }
void DestroyStream(CUstream stream) noexcept { Api().cuStreamDestroy(stream); }

}  // namespace internal

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  DeviceBuffer buffer;
  if (auto s = CheckCu((*driver)->cuMemAlloc(buffer.ptr_.out(), bytes), "cuMemAlloc"); !s.ok()) {
    return s;
  }
  buffer.bytes_ = bytes;
  return buffer;
}

absl::StatusOr<Module> Module::Load(const std::string& image) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Module module;
  if (auto s = CheckCu((*driver)->cuModuleLoadData(module.module_.out(), image.data()),
                       "cuModuleLoadData");
      !s.ok()) {
    return s;
  }
  return module;
}

absl::StatusOr<CUfunction> Module::Function(const std::string& name) const {
  CUfunction function = nullptr;
  if (auto s = CheckCu(Api().cuModuleGetFunction(&function, module_.get(), name.c_str()),
                       absl::StrCat("cuModuleGetFunction(", name, ")"));
      !s.ok()) {
    return s;
  }
  return function;
}

absl::StatusOr<Event> Event::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Event event;
  if (auto s = CheckCu((*driver)->cuEventCreate(event.event_.out(), CU_EVENT_DEFAULT),
                       "cuEventCreate");
      !s.ok()) {
    return s;
  }
  return event;
}

absl::StatusOr<Stream> Stream::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Stream stream;
  if (auto s = CheckCu((*driver)->cuStreamCreate(stream.stream_.out(), CU_STREAM_NON_BLOCKING),
                       "cuStreamCreate");
      !s.ok()) {
    return s;
  }
  return stream;
}

}  // namespace cutune::cuda
