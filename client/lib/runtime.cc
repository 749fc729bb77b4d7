// cutune::Client and cutune::Kernel (client/include/cutune/client.h). Phases of a request:
// resolve the device (current context, its model and architecture) -> answer (in-process cache,
// else the daemon, else the offline table) -> cubin (the daemon's, else NVRTC here) -> load in the
// context and set the contract's attributes -> launch with the contract's arguments.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/lib/connection.h"
#include "client/lib/enum_label.h"
#include "client/lib/launch_plan.h"
#include "cutune/client.h"
#include "cutune/v1/cutune.grpc.pb.h"
#include "server/cuda/check.h"
#include "server/cuda/driver.h"
#include "server/cuda/errors.h"
#include "server/service/answer.h"
#include "server/service/offline_table.h"

namespace cutune::client {
namespace {

namespace pb = ::cutune::v1;

ErrorCode CodeOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return ErrorCode::kInvalidArgument;
    case absl::StatusCode::kNotFound:
      return ErrorCode::kNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return ErrorCode::kUnavailable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return ErrorCode::kPermissionDenied;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
      return ErrorCode::kFailedPrecondition;
    default:
      return ErrorCode::kInternal;
  }
}

[[noreturn]] void Throw(const absl::Status& status, std::optional<ErrorCode> code = std::nullopt) {
  throw Error(code.value_or(CodeOf(status.code())),
              absl::StrCat("cutune: ", std::string(status.message())));
}

[[noreturn]] void Throw(ErrorCode code, const std::string& message) {
  throw Error(code, "cutune: " + message);
}

const cuda::DriverApi& Api() {
  auto driver = cuda::Driver();
  if (!driver.ok()) Throw(driver.status(), ErrorCode::kNoGpu);
  return **driver;
}

void CheckCuda(const absl::Status& status) {
  if (!status.ok()) Throw(status, ErrorCode::kCudaError);
}

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrJoin(shape, "x"); }

// The device of the current context (a retained primary context of device 0 when the thread has
// none): what a lookup asks for and what a cubin is compiled for.
struct DeviceOfContext {
  CUcontext context = nullptr;
  std::string model;
  std::string arch;  // "sm_90"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;
};

DeviceOfContext CurrentDevice() {
  const cuda::DriverApi& api = Api();
  DeviceOfContext out;
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuCtxGetCurrent, &out.context));
  if (out.context == nullptr) {
    CUdevice device0 = 0;
    CheckCuda(CUTUNE_DRIVER_CALL(api, cuDeviceGet, &device0, 0));
    CheckCuda(CUTUNE_DRIVER_CALL(api, cuDevicePrimaryCtxRetain, &out.context, device0));
    CheckCuda(CUTUNE_DRIVER_CALL(api, cuCtxSetCurrent, out.context));
  }
  CUdevice device = 0;
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuCtxGetDevice, &device));
  char name[256] = {};
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuDeviceGetName, name, static_cast<int>(sizeof(name)), device));
  out.model = name;
  int major = 0, minor = 0;
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuDeviceGetAttribute, &major,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuDeviceGetAttribute, &minor,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  out.arch = absl::StrCat("sm_", major, minor);
  out.cc_major = major;
  out.cc_minor = minor;
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuDeviceGetAttribute, &out.sm_count,
                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuDriverGetVersion, &out.driver_version));
  return out;
}

Answer ToAnswer(const pb::GetBestConfigResponse& r, bool from_table) {
  Answer a;
  a.problem.family = r.problem().family();
  a.problem.shape.assign(r.problem().shape().begin(), r.problem().shape().end());
  a.problem.dtype = r.problem().dtype();
  a.rung = EnumLabel(r.rung());
  a.device_model = r.device_model();
  a.tuned_shape.assign(r.tuned_shape().begin(), r.tuned_shape().end());
  a.params.insert(r.params().begin(), r.params().end());
  a.compile_options.assign(r.compile_options().begin(), r.compile_options().end());
  a.kernel = r.launch().kernel().empty() ? r.kernel() : r.launch().kernel();
  for (int i = 0; i < 3; ++i) {
    a.grid[i] = i < r.geometry().grid_size() ? r.geometry().grid(i) : 1;
    a.block[i] = i < r.geometry().block_size() ? r.geometry().block(i) : 1;
  }
  a.dynamic_shared_bytes = r.geometry().dynamic_shared_bytes();
  for (const pb::KernelArgument& arg : r.launch().arguments()) {
    a.arguments.push_back({arg.name(), EnumLabel(arg.role()), arg.type(),
                           arg.element_type(),
                           std::vector<std::string>(arg.extent().begin(), arg.extent().end())});
  }
  for (const pb::FunctionAttribute& attribute : r.launch().function_attributes()) {
    a.function_attributes.push_back(
        {attribute.name(), attribute.driver_attribute(), attribute.value()});
  }
  a.one_module_per_stream =
      r.launch().concurrency() == pb::LaunchContract::CONCURRENCY_ONE_MODULE_PER_STREAM;
  // An answer without a contract (an older daemon) is refused at PlanLaunch; this is for Get().
  a.pointer_alignment = r.launch().pointer_alignment() ? r.launch().pointer_alignment()
                                                      : kernels::kPointerAlignment;
  a.time_us = r.time_us();
  a.measured_at_asked_shape = r.measured_at_asked_shape();
  a.predicted_time_us = r.predicted_time_us();
  a.expected_slowdown = r.expected_slowdown();
  a.stale.assign(r.stale().begin(), r.stale().end());
  a.source_hash = r.source_hash();
  a.from_table = from_table;
  return a;
}

}  // namespace

// ---- Kernel ------------------------------------------------------------------------------------

struct Kernel::State {
  CUcontext context = nullptr;
  Answer answer;
  std::string cubin;
  LaunchPlan plan;
  bool check_pointers = false;
  // One module for every launch, or (one_module_per_stream) one per stream, loaded on first use.
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::mutex streams_mu;
  std::vector<std::tuple<CUstream, CUmodule, CUfunction>> per_stream;

  // Loads the cubin in `context` (current) and sets the contract's attributes.
  absl::Status Load(CUmodule* module_out, CUfunction* function_out) const {
    const cuda::DriverApi& api = Api();
    CUmodule m = nullptr;
    if (auto s = CUTUNE_DRIVER_CALL(api, cuModuleLoadData, &m, cubin.data()); !s.ok()) return s;
    CUfunction f = nullptr;
    if (auto s = CUTUNE_DRIVER_CALL(api, cuModuleGetFunction, &f, m, answer.kernel.c_str());
        !s.ok()) {
      api.cuModuleUnload(m);
      return s;
    }
    for (const FunctionAttribute& a : answer.function_attributes) {
      if (auto s = CUTUNE_DRIVER_CALL(api, cuFuncSetAttribute, f,
                                      static_cast<CUfunction_attribute>(a.driver_attribute),
                                      static_cast<int>(a.value));
          !s.ok()) {
        api.cuModuleUnload(m);
        return absl::Status(s.code(), absl::StrCat("setting ", a.name, ": ", s.message()));
      }
    }
    *module_out = m;
    *function_out = f;
    return absl::OkStatus();
  }

  CUfunction FunctionFor(CUstream stream) {
    if (!answer.one_module_per_stream) return function;
    std::lock_guard<std::mutex> lock(streams_mu);
    for (const auto& [s, m, f] : per_stream) {
      if (s == stream) return f;
    }
    if (per_stream.empty() && module != nullptr) {  // the first stream takes the first module
      per_stream.emplace_back(stream, module, function);
      module = nullptr;
      return function;
    }
    CUmodule m = nullptr;
    CUfunction f = nullptr;
    CheckCuda(Load(&m, &f));
    per_stream.emplace_back(stream, m, f);
    return f;
  }
};

Kernel::Kernel(std::unique_ptr<State> state) : state_(std::move(state)) {}

Kernel::~Kernel() {
  auto driver = cuda::Driver();
  if (!driver.ok()) return;
  // The context may be gone already (the program destroyed it): nothing to release then.
  if (state_->module != nullptr) (*driver)->cuModuleUnload(state_->module);
  for (const auto& [s, m, f] : state_->per_stream) (*driver)->cuModuleUnload(m);
}

const Answer& Kernel::answer() const { return state_->answer; }
CUcontext Kernel::context() const { return state_->context; }
CUfunction Kernel::function(CUstream stream) { return state_->FunctionFor(stream); }

void Kernel::LaunchPointers(CUstream stream, const void* const* pointers, const PointerInfo* info,
                            size_t count) {
  State& s = *state_;
  const LaunchPlan& plan = s.plan;
  static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t));
  CUdeviceptr values[kMaxLaunchPointers] = {};
  if (absl::Status checked = CheckLaunch(plan, pointers, info, count,
                                         reinterpret_cast<uint64_t*>(values));
      !checked.ok()) {
    Throw(checked);
  }
  const cuda::DriverApi& api = Api();
  if (s.check_pointers) {
    for (size_t i = 0; i < count; ++i) {
      CUcontext owner = nullptr;
      CUdeviceptr start = 0;
      size_t size = 0;
      const bool known =
          api.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, values[i]) ==
              CUDA_SUCCESS &&
          api.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, values[i]) ==
              CUDA_SUCCESS &&
          api.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, values[i]) ==
              CUDA_SUCCESS;
      if (!known) {
        Throw(ErrorCode::kInvalidArgument,
              absl::StrCat("argument ", plan.names[i], " is not device memory the driver knows"));
      }
      if (owner != nullptr && owner != s.context) {
        Throw(ErrorCode::kInvalidArgument, absl::StrCat("argument ", plan.names[i],
                                                        " belongs to another CUDA context"));
      }
      const uint64_t left = start + size - values[i];
      if (left < static_cast<uint64_t>(plan.bytes[i])) {
        Throw(ErrorCode::kInvalidArgument,
              absl::StrCat("argument ", plan.names[i], " needs ", plan.bytes[i],
                           " bytes for shape ", ShapeText(s.answer.problem.shape),
                           "; its allocation has ", left, " from there"));
      }
    }
  }
  void* args[kMaxLaunchPointers + kMaxLaunchDims] = {};
  int32_t dims[kMaxLaunchDims] = {};
  std::copy(plan.dims.begin(), plan.dims.end(), dims);
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const LaunchPlan::Slot& slot = plan.slots[i];
    args[i] = slot.pointer ? static_cast<void*>(&values[slot.index])
                           : static_cast<void*>(&dims[slot.index]);
  }
  const Answer& a = s.answer;
  CheckCuda(CUTUNE_DRIVER_CALL(api, cuLaunchKernel, s.FunctionFor(stream), a.grid[0], a.grid[1],
                               a.grid[2], a.block[0], a.block[1], a.block[2],
                               a.dynamic_shared_bytes, stream, args, nullptr));
}

// ---- Client ------------------------------------------------------------------------------------

struct Client::Impl {
  ClientOptions options;
  std::mutex mu;
  std::unique_ptr<Connection> connection;
  std::unique_ptr<service::OfflineTable> table;
  struct Entry {
    pb::GetBestConfigResponse response;
    bool from_table = false;
  };
  std::unordered_map<std::string, Entry> answers;                     // by model + problem
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels;   // by context + problem

  static std::string ProblemKey(const std::string& model, const Problem& p) {
    return absl::StrCat(model, "|", p.family, "|", ShapeText(p.shape), "|", p.dtype);
  }

  service::OfflineTable& Table() {
    if (table == nullptr) {
      auto opened = service::OfflineTable::Open(options.table);
      if (!opened.ok()) Throw(opened.status());
      table = *std::move(opened);
    }
    return *table;
  }

  // The daemon's answer, or the table's when the daemon cannot be reached (or `offline`).
  // Who asks: the device model (the options', else the current context's), and for the current
  // context's GPU its compute capability and SM count, so that a table without that model
  // answers from another of its architecture (DeviceSelector).
  struct Asking {
    std::string model;
    int driver_version = 0;
    int cc_major = 0;  // 0: not described
    int cc_minor = 0;
    int sm_count = 0;
  };
  Asking AskingFrom(const DeviceOfContext* device) const {
    Asking a;
    a.model = !options.device_model.empty() ? options.device_model
                                            : (device != nullptr ? device->model : "");
    if (device == nullptr) return a;
    a.driver_version = device->driver_version;
    if (a.model == device->model) {
      a.cc_major = device->cc_major;
      a.cc_minor = device->cc_minor;
      a.sm_count = device->sm_count;
    }
    return a;
  }

  Entry Fetch(const Problem& problem, const Asking& asking, bool cubin) {
    pb::GetBestConfigRequest request;
    request.mutable_problem()->set_family(problem.family);
    for (int64_t d : problem.shape) request.mutable_problem()->add_shape(d);
    request.mutable_problem()->set_dtype(problem.dtype);
    if (!asking.model.empty()) {
      request.mutable_device()->set_model(asking.model);
      request.mutable_device()->set_cc_major(asking.cc_major);
      request.mutable_device()->set_cc_minor(asking.cc_minor);
      request.mutable_device()->set_sm_count(asking.sm_count);
    }
    request.set_include_source(true);
    request.set_include_cubin(cubin);
    request.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW);
    absl::Status daemon = absl::UnavailableError("offline: no daemon asked");
    if (!options.offline) {
      if (connection == nullptr) {
        ConnectionOptions c;
        c.server = options.server;
        c.token = options.token;
        c.tls = options.tls;
        c.tls_ca = options.tls_ca;
        c.tls_cert = options.tls_cert;
        c.tls_key = options.tls_key;
        c.deadline = options.timeout;
        auto opened = Connection::Open(c);
        if (!opened.ok()) Throw(opened.status(), ErrorCode::kInvalidArgument);
        connection = *std::move(opened);
      }
      Entry entry;
      daemon = connection->Call(&pb::Tuner::Stub::GetBestConfig, request, &entry.response);
      if (daemon.ok()) return entry;
      if (options.table.empty() || CodeOf(daemon.code()) != ErrorCode::kUnavailable) {
        Throw(daemon);
      }
    }
    if (options.table.empty()) {
      Throw(ErrorCode::kUnavailable, "offline is set but no table file was given");
    }
    auto answered = Table().Answer(request, asking.driver_version);
    if (!answered.ok()) {
      Throw(answered.status().code() == absl::StatusCode::kNotFound
                ? answered.status()
                : absl::Status(answered.status().code(),
                               absl::StrCat(options.table, ": ", answered.status().message())));
    }
    return {*std::move(answered), true};
  }

  const Entry& Lookup(const Problem& problem, const Asking& asking, bool cubin) {
    const std::string key = ProblemKey(asking.model, problem);
    auto it = answers.find(key);
    if (it == answers.end() || (cubin && !it->second.from_table && it->second.response.cubin().empty())) {
      Entry entry = Fetch(problem, asking, cubin);
      if (options.fresh_only && !entry.response.stale().empty()) {
        Throw(ErrorCode::kStale,
              absl::StrCat("the answer for ", problem.family, " ", ShapeText(problem.shape),
                           " is stale (", absl::StrJoin(entry.response.stale(), "; "),
                           ") and fresh_only is set: tune it on this host"));
      }
      it = answers.insert_or_assign(key, std::move(entry)).first;
    }
    return it->second;
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.offline && impl_->options.table.empty()) {
    Throw(ErrorCode::kInvalidArgument, "ClientOptions.offline needs ClientOptions.table");
  }
}

Client::~Client() = default;

Answer Client::Get(const Problem& problem) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  // The device model: the options', else the current context's (a host without a GPU can still
  // ask with options.device_model).
  std::optional<DeviceOfContext> device;
  if (impl_->options.device_model.empty()) device = CurrentDevice();
  const auto& entry =
      impl_->Lookup(problem, impl_->AskingFrom(device ? &*device : nullptr), /*cubin=*/false);
  return ToAnswer(entry.response, entry.from_table);
}

Kernel& Client::kernel(const Problem& problem) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const DeviceOfContext device = CurrentDevice();
  const std::string kernel_key =
      absl::StrCat(reinterpret_cast<uintptr_t>(device.context), "|",
                   Impl::ProblemKey(impl_->AskingFrom(&device).model, problem));
  if (auto it = impl_->kernels.find(kernel_key); it != impl_->kernels.end()) return *it->second;

  const Impl::Entry& entry =
      impl_->Lookup(problem, impl_->AskingFrom(&device), /*cubin=*/true);
  auto state = std::make_unique<Kernel::State>();
  state->context = device.context;
  state->answer = ToAnswer(entry.response, entry.from_table);
  state->check_pointers = impl_->options.check_pointers;
  auto plan = PlanLaunch(entry.response);
  if (!plan.ok()) Throw(plan.status());
  state->plan = *std::move(plan);
  // The daemon's cubin when it loads here; else the answer's source compiled for this device.
  state->cubin = entry.response.cubin();
  absl::Status loaded = absl::NotFoundError("no cubin in the answer");
  if (!state->cubin.empty() && service::AnswerArch(entry.response) == device.arch) {
    loaded = state->Load(&state->module, &state->function);
  }
  if (!loaded.ok()) {
    auto cubin = service::CompileAnswer(entry.response, device.arch);
    if (!cubin.ok()) Throw(cubin.status());
    state->cubin = *std::move(cubin);
    CheckCuda(state->Load(&state->module, &state->function));
  }
  auto kernel = std::unique_ptr<Kernel>(new Kernel(std::move(state)));
  return *impl_->kernels.emplace(kernel_key, std::move(kernel)).first->second;
}

void Client::Clear() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->kernels.clear();
  impl_->answers.clear();
}

}  // namespace cutune::client
