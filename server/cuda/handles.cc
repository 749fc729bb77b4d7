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

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  DeviceBuffer buffer;
  if (auto s = CheckCu((*driver)->cuMemAlloc(&buffer.ptr_, bytes), "cuMemAlloc"); !s.ok()) {
    return s;
  }
  buffer.bytes_ = bytes;
  return buffer;
}

void DeviceBuffer::Reset() noexcept {
  if (ptr_ != 0) Api().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}

absl::StatusOr<Module> Module::Load(const std::string& image) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Module module;
  if (auto s = CheckCu((*driver)->cuModuleLoadData(&module.module_, image.data()),
                       "cuModuleLoadData");
      !s.ok()) {
    return s;
  }
  return module;
}

absl::StatusOr<CUfunction> Module::Function(const std::string& name) const {
  CUfunction function = nullptr;
  if (auto s = CheckCu(Api().cuModuleGetFunction(&function, module_, name.c_str()),
                       absl::StrCat("cuModuleGetFunction(", name, ")"));
      !s.ok()) {
    return s;
  }
  return function;
}

void Module::Reset() noexcept {
  if (module_ != nullptr) Api().cuModuleUnload(module_);
  module_ = nullptr;
}

absl::StatusOr<Event> Event::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Event event;
  if (auto s = CheckCu((*driver)->cuEventCreate(&event.event_, CU_EVENT_DEFAULT), "cuEventCreate");
      !s.ok()) {
    return s;
  }
  return event;
}

void Event::Reset() noexcept {
  if (event_ != nullptr) Api().cuEventDestroy(event_);
  event_ = nullptr;
}

absl::StatusOr<Stream> Stream::Create() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  Stream stream;
  if (auto s = CheckCu((*driver)->cuStreamCreate(&stream.stream_, CU_STREAM_NON_BLOCKING),
                       "cuStreamCreate");
      !s.ok()) {
    return s;
  }
  return stream;
}

void Stream::Reset() noexcept {
  if (stream_ != nullptr) Api().cuStreamDestroy(stream_);
  stream_ = nullptr;
}

}  // namespace cutune::cuda
