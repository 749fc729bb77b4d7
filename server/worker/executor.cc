#include "server/worker/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/cuda/check.h"
#include "server/cuda/cublas.h"
#include "server/cuda/errors.h"
#include "server/tuner/timing.h"
#include "server/tuner/verification.h"
#include "server/worker/outcome.h"

namespace cutune::worker {

static_assert(kernels::kMaxDynamicSharedAttributeValue ==
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
namespace {

// Every call below goes through CUTUNE_DRIVER_CALL (server/cuda/check.h); none is left unchecked,
// because a step that silently fails makes a later one lie: an output that was never poisoned
// holds the previous candidate's correct answer, and a kernel that writes nothing then passes.

const cuda::DriverApi& Api() { return **cuda::Driver(); }

LaunchGeometry FromProto(const wpb::Geometry& g) {
  LaunchGeometry out;
  for (int i = 0; i < 3; ++i) {
    out.grid[i] = i < g.grid_size() ? g.grid(i) : 1;
    out.block[i] = i < g.block_size() ? g.block(i) : 1;
  }
  out.dynamic_shared_bytes = g.dynamic_shared_bytes();
  return out;
}

// What the driver says about the device, every answer checked: a worker that cannot describe
// its GPU must not start (the supervisor prunes candidates by these limits).
absl::StatusOr<wpb::DeviceInfo> DescribeDevice(const cuda::DriverApi& api, CUdevice device) {
  wpb::DeviceInfo info;
  char name[256] = {};
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceGetName, name, sizeof(name) - 1, device); !s.ok()) {
    return s;
  }
  info.set_name(name);
  CUuuid uuid{};
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceGetUuid, &uuid, device); !s.ok()) return s;
  std::string hex = "GPU-";
  for (int i = 0; i < 16; ++i) {
    absl::StrAppend(&hex, absl::StrFormat("%02x", static_cast<unsigned char>(uuid.bytes[i])));
    if (i == 3 || i == 5 || i == 7 || i == 9) hex += '-';
  }
  info.set_uuid(hex);
  using Setter = void (wpb::DeviceInfo::*)(int32_t);
  const std::pair<CUdevice_attribute, Setter> attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &wpb::DeviceInfo::set_cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &wpb::DeviceInfo::set_cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &wpb::DeviceInfo::set_sm_count},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &wpb::DeviceInfo::set_max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &wpb::DeviceInfo::set_max_shared_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &wpb::DeviceInfo::set_max_registers_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
       &wpb::DeviceInfo::set_max_shared_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
       &wpb::DeviceInfo::set_max_registers_per_sm},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &wpb::DeviceInfo::set_l2_bytes},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &wpb::DeviceInfo::set_sm_clock_khz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &wpb::DeviceInfo::set_memory_clock_khz},
  };
  for (const auto& [attribute, set] : attributes) {
    int value = 0;
    if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceGetAttribute, &value, attribute, device);
        !s.ok()) {
      return cuda::Annotate(s, absl::StrCat("device attribute ", static_cast<int>(attribute)));
    }
    (info.*set)(value);
  }
  size_t total = 0;
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceTotalMem, &total, device); !s.ok()) return s;
  info.set_total_memory_bytes(static_cast<int64_t>(total));
  int driver_version = 0;
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDriverGetVersion, &driver_version); !s.ok()) return s;
  info.set_driver_version(driver_version);
  return info;
}

// Grid of 256-thread blocks covering n elements, for the support kernels.
LaunchGeometry Linear(int64_t n) {
  LaunchGeometry g;
  g.block = {256, 1, 1};
  g.grid = {static_cast<uint32_t>(std::min<int64_t>((n + 255) / 256, 1 << 20)), 1, 1};
  return g;
}

}  // namespace

RunFailure ClassifyRunFailure(wpb::RunResult partial, const absl::Status& status,
                              absl::string_view stage, cuda::CallSite site) {
  std::string detail = absl::StrCat(stage, ": ", status.message());
  std::optional<Outcome> outcome = cuda::OutcomeForError(cuda::ResultOf(status), site);
  if (!outcome.has_value()) {
    return {absl::Status(status.ok() ? absl::StatusCode::kInternal : status.code(), detail)};
  }
  partial.set_outcome(ToProto(*outcome));
  partial.set_detail(std::move(detail));
  return {std::move(partial), *outcome == Outcome::kFault};
}

struct Executor::Problem {
  const kernels::KernelFamily* family = nullptr;
  Shape shape;
  kernels::BufferPlan plan;
  std::vector<cuda::DeviceBuffer> inputs;
  cuda::DeviceBuffer output;
  cuda::DeviceBuffer reference;
};

Executor::~Executor() {
  // Buffers and modules must go before the context is released.
  problem_.reset();
  modules_.clear();
  support_ = cuda::Module();
  flush_buffer_ = cuda::DeviceBuffer();
  compare_scratch_ = cuda::DeviceBuffer();
  start_ = cuda::Event();
  stop_ = cuda::Event();
  stream_ = cuda::Stream();
  if (context_ != nullptr) {
    CUTUNE_DRIVER_CALL_NOEXCEPT(Api(), cuDevicePrimaryCtxRelease, cu_device_);
  }
}

namespace {

// A flag the stream can wait on (cuda::HostFlag), tried once: a wait that is already satisfied,
// then the stream synchronized. Nothing where the driver or device refuses it (stream memory
// operations unsupported): samples are then taken without the hold.
std::optional<cuda::HostFlag> HoldFlag(const cuda::DriverApi& api, CUstream stream) {
  auto flag = cuda::HostFlag::Allocate();
  if (!flag.ok()) return std::nullopt;
  if (!CUTUNE_DRIVER_CALL(api, cuStreamWaitValue32, stream, flag->device(), 0,
                          CU_STREAM_WAIT_VALUE_GEQ)
           .ok() ||
      !CUTUNE_DRIVER_CALL(api, cuStreamSynchronize, stream).ok()) {
    return std::nullopt;
  }
  return *std::move(flag);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(int ordinal) {
  auto driver = cuda::Driver();
  if (!driver.ok()) return driver.status();
  const cuda::DriverApi& api = **driver;
  std::unique_ptr<Executor> ex(new Executor);
  int count = 0;
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceGetCount, &count); !s.ok()) return s;
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(absl::StrCat("no GPU with ordinal ", ordinal, " (", count,
                                            " present)"));
  }
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDeviceGet, &ex->cu_device_, ordinal); !s.ok()) return s;
  if (auto s = CUTUNE_DRIVER_CALL(api, cuDevicePrimaryCtxRetain, &ex->context_, ex->cu_device_);
      !s.ok()) {
    return s;
  }
  if (auto s = CUTUNE_DRIVER_CALL(api, cuCtxSetCurrent, ex->context_); !s.ok()) return s;

  auto described = DescribeDevice(api, ex->cu_device_);
  if (!described.ok()) return described.status();
  wpb::DeviceInfo& info = ex->device_;
  info = std::move(*described);
  info.set_ordinal(ordinal);
  info.set_device_count(count);
  info.set_nvrtc_version(compiler::NvrtcVersion());

  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  ex->stream_ = std::move(*stream);
  for (cuda::Event* e : {&ex->start_, &ex->stop_}) {
    auto event = cuda::Event::Create();
    if (!event.ok()) return event.status();
    *e = std::move(*event);
  }
  // Twice the L2: writing it evicts whatever the previous sample left there.
  auto flush = cuda::DeviceBuffer::Allocate(std::max(2 * info.l2_bytes(), 1 << 20));
  if (!flush.ok()) return flush.status();
  ex->flush_buffer_ = std::move(*flush);
  if (const char* idle = std::getenv("CUTUNE_TIMING_IDLE_START");
      idle == nullptr || *idle == '\0') {
    ex->hold_ = HoldFlag(api, ex->stream_.get());
  }
  info.set_timing(std::string(ex->hold_ ? kTimingHeld : kTimingIdle));
  auto scratch = cuda::DeviceBuffer::Allocate(64);
  if (!scratch.ok()) return scratch.status();
  ex->compare_scratch_ = std::move(*scratch);

  compiler::CompileRequest request;
  request.source = std::string(kernels::SupportSource());
  request.source_name = "support.cu";
  request.arch = absl::StrCat("sm_", info.cc_major(), info.cc_minor());
  auto compiled = compiler::Compile(request);
  if (!compiled.ok()) return compiled.status();
  if (!compiled->ok) {
    return absl::InternalError(absl::StrCat("support kernels do not compile:\n", compiled->log));
  }
  auto module = cuda::Module::Load(compiled->cubin);
  if (!module.ok()) return module.status();
  ex->support_ = std::move(*module);
  auto fill = ex->support_.Function("cutune_fill");
  if (!fill.ok()) return fill.status();
  auto compare = ex->support_.Function("cutune_compare");
  if (!compare.ok()) return compare.status();
  ex->fill_ = *fill;
  ex->compare_ = *compare;
  return ex;
}

absl::Status Executor::Fill(CUdeviceptr buffer, int64_t count, uint64_t seed) {
  long long n = count;
  unsigned long long s = seed;
  void* args[] = {&buffer, &n, &s};
  LaunchGeometry g = Linear(count);
  return cuda::Annotate(CUTUNE_DRIVER_CALL(Api(), cuLaunchKernel, fill_, g.grid[0], 1, 1,
                                           g.block[0], 1, 1, 0, stream_.get(), args, nullptr),
                        "cutune_fill");
}

absl::Status Executor::LaunchOn(CUfunction function, const LaunchGeometry& g, CUdeviceptr output) {
  std::vector<CUdeviceptr> pointers;
  for (const cuda::DeviceBuffer& input : problem_->inputs) pointers.push_back(input.get());
  pointers.push_back(output);
  std::vector<int> dims(problem_->shape.begin(), problem_->shape.end());
  std::vector<void*> args;
  for (CUdeviceptr& p : pointers) args.push_back(&p);
  for (int& d : dims) args.push_back(&d);
  return CUTUNE_DRIVER_CALL(Api(), cuLaunchKernel, function, g.grid[0], g.grid[1], g.grid[2],
                            g.block[0], g.block[1], g.block[2], g.dynamic_shared_bytes,
                            stream_.get(), args.data(), nullptr);
}

absl::Status Executor::MarkIfFatal(absl::Status status) {
  // Whatever the request, a sticky error means this context can never run a kernel again.
  if (cuda::Classify(cuda::ResultOf(status)) == cuda::ErrorClass::kContextFatal) poisoned_ = true;
  return status;
}

absl::Status Executor::Prepare(const wpb::Prepare& prepare) { return MarkIfFatal(SetUp(prepare)); }

absl::Status Executor::SetUp(const wpb::Prepare& prepare) {
  auto family = kernels::GetFamily(prepare.family());
  if (!family.ok()) return family.status();
  Shape shape(prepare.shape().begin(), prepare.shape().end());
  if (auto s = (*family)->ValidateShape(shape); !s.ok()) return s;
  modules_.clear();
  problem_.reset();
  auto problem = std::make_unique<Problem>();
  problem->family = *family;
  problem->shape = shape;
  problem->plan = (*family)->Buffers(shape);
  int64_t bytes = 4 * (std::accumulate(problem->plan.inputs.begin(), problem->plan.inputs.end(),
                                       int64_t{0}) +
                       2 * problem->plan.output);
  size_t free_bytes = 0, total_bytes = 0;
  if (auto s = CUTUNE_DRIVER_CALL(Api(), cuMemGetInfo, &free_bytes, &total_bytes); !s.ok()) {
    return s;
  }
  if (bytes > static_cast<int64_t>(free_bytes)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "problem needs %.2f GB of GPU memory, %.2f GB free", bytes / 1e9, free_bytes / 1e9));
  }
  uint64_t seed = prepare.seed();
  for (int64_t elements : problem->plan.inputs) {
    auto buffer = cuda::DeviceBuffer::Allocate(static_cast<size_t>(elements) * 4);
    if (!buffer.ok()) return buffer.status();
    problem->inputs.push_back(std::move(*buffer));
  }
  for (cuda::DeviceBuffer* b : {&problem->output, &problem->reference}) {
    auto buffer = cuda::DeviceBuffer::Allocate(static_cast<size_t>(problem->plan.output) * 4);
    if (!buffer.ok()) return buffer.status();
    *b = std::move(*buffer);
  }
  problem_ = std::move(problem);
  for (size_t i = 0; i < problem_->inputs.size(); ++i) {
    if (auto s = Fill(problem_->inputs[i].get(), problem_->plan.inputs[i], seed + 7919 * i);
        !s.ok()) {
      return s;
    }
  }

  // The trusted reference, compiled here: obviously-correct code, never a candidate.
  compiler::CompileRequest request;
  request.source = std::string((*family)->source());
  request.source_name = absl::StrCat(prepare.family(), ".cu");
  request.options = (*family)->ReferenceDefines();
  request.arch = absl::StrCat("sm_", device_.cc_major(), device_.cc_minor());
  auto compiled = compiler::Compile(request);
  if (!compiled.ok()) return compiled.status();
  if (!compiled->ok) {
    return absl::InternalError(absl::StrCat("reference kernel does not compile:\n", compiled->log));
  }
  auto module = cuda::Module::Load(compiled->cubin);
  if (!module.ok()) return module.status();
  auto function = module->Function(std::string(kernels::KernelFamily::kReferenceName));
  if (!function.ok()) return function.status();
  if (auto s = CUTUNE_DRIVER_CALL(Api(), cuMemsetD32Async, problem_->reference.get(), 0xFFFFFFFFu,
                                  problem_->plan.output, stream_.get());
      !s.ok()) {
    return cuda::Annotate(s, "poisoning the reference output");
  }
  if (auto s = LaunchOn(*function, (*family)->ReferenceGeometry(shape), problem_->reference.get());
      !s.ok()) {
    return cuda::Annotate(s, "reference kernel");
  }
  return cuda::Annotate(CUTUNE_DRIVER_CALL(Api(), cuStreamSynchronize, stream_.get()),
                        "reference kernel");
}

absl::StatusOr<CUfunction> Executor::LoadCandidate(const wpb::Candidate& candidate) {
  auto it = modules_.find(candidate.key());
  if (it == modules_.end()) {
    if (candidate.cubin().empty()) {
      return absl::FailedPreconditionError("worker does not hold this candidate's cubin");
    }
    // Bounded: a sweep's modules are small, but a long-lived worker must not grow forever.
    if (modules_.size() >= 512) modules_.clear();
    auto module = cuda::Module::Load(candidate.cubin());
    if (!module.ok()) return module.status();
    it = modules_.emplace(candidate.key(), std::move(*module)).first;
  }
  return it->second.Function(candidate.kernel());
}

absl::StatusOr<wpb::Stats> Executor::Time(const std::function<absl::Status()>& launch,
                                          const wpb::TimingPolicy& policy, bool flush_l2,
                                          int launched) {
  const cuda::DriverApi& api = Api();
  for (int i = launched; i < policy.warmup(); ++i) {
    if (auto s = launch(); !s.ok()) return s;
  }
  const tuner::StoppingRule rule{policy.min_samples(), policy.max_samples(),
                                 policy.target_rel_spread(), policy.max_ms(),
                                 policy.abandon_above_us()};
  std::vector<double> samples;
  const auto began = std::chrono::steady_clock::now();
  while (true) {
    // Held start: the stream waits until the host stores `hold`, after the sample is queued; the
    // cleanup stores it however the queueing ends, so no failure leaves the stream waiting.
    uint32_t hold = 0;
    if (hold_) {
      hold = ++hold_value_;
      if (hold == 0) hold = ++hold_value_;  // 0 is the flag's first value: never a hold
      if (auto s = CUTUNE_DRIVER_CALL(api, cuStreamWaitValue32, stream_.get(), hold_->device(),
                                      hold, CU_STREAM_WAIT_VALUE_GEQ);
          !s.ok()) {
        return s;
      }
    }
    absl::Cleanup release = [&] {
      if (hold != 0) hold_->Store(hold);
    };
    if (flush_l2) {
      if (auto s = CUTUNE_DRIVER_CALL(api, cuMemsetD32Async, flush_buffer_.get(),
                                      static_cast<unsigned>(samples.size()),
                                      flush_buffer_.bytes() / 4, stream_.get());
          !s.ok()) {
        return cuda::Annotate(s, "L2 flush");
      }
    }
    if (auto s = CUTUNE_DRIVER_CALL(api, cuEventRecord, start_.get(), stream_.get()); !s.ok()) {
      return s;
    }
    if (auto s = launch(); !s.ok()) return s;
    if (auto s = CUTUNE_DRIVER_CALL(api, cuEventRecord, stop_.get(), stream_.get()); !s.ok()) {
      return s;
    }
    std::move(release).Invoke();
    if (auto s = CUTUNE_DRIVER_CALL(api, cuEventSynchronize, stop_.get()); !s.ok()) {
      return cuda::Annotate(s, "timed launch");
    }
    float ms = 0;
    if (auto s = CUTUNE_DRIVER_CALL(api, cuEventElapsedTime, &ms, start_.get(), stop_.get());
        !s.ok()) {
      return s;
    }
    samples.push_back(ms * 1000.0);
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    if (tuner::EnoughSamples(rule, samples, elapsed_ms)) {
      const TimingStats summary = tuner::Summarize(std::move(samples));
      wpb::Stats stats;
      stats.set_samples(summary.samples);
      stats.set_median_us(summary.median_us);
      stats.set_min_us(summary.min_us);
      stats.set_rel_spread(summary.rel_spread);
      return stats;
    }
  }
}

absl::StatusOr<wpb::RunResult> Executor::Failed(wpb::RunResult partial, const absl::Status& status,
                                                absl::string_view stage, cuda::CallSite site) {
  RunFailure failure = ClassifyRunFailure(std::move(partial), status, stage, site);
  if (failure.poisons_context) poisoned_ = true;
  return std::move(failure.result);
}

absl::StatusOr<wpb::RunResult> Executor::Run(const wpb::Run& run) {
  if (run.debug_crash()) std::abort();
  if (run.debug_hang()) {
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (problem_ == nullptr) return absl::FailedPreconditionError("no problem prepared");
  const cuda::DriverApi& api = Api();

  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  auto phase = Clock::now();
  auto function = LoadCandidate(run.candidate());
  const double load_ms = since(phase);
  if (!function.ok()) return Failed({}, function.status(), "load");
  wpb::RunResult result;
  result.set_load_ms(load_ms);
  phase = Clock::now();
  {
    // The driver's own account of the loaded code: authoritative whatever the compiler logged.
    // Every failure below keeps these figures in the result it returns.
    using Setter = void (wpb::RunResult::*)(int32_t);
    const std::pair<CUfunction_attribute, Setter> attributes[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &wpb::RunResult::set_registers},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &wpb::RunResult::set_static_shared_bytes},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &wpb::RunResult::set_local_bytes},
    };
    for (const auto& [attribute, set] : attributes) {
      int value = 0;
      if (auto s = CUTUNE_DRIVER_CALL(api, cuFuncGetAttribute, &value, attribute, *function);
          !s.ok()) {
        return Failed(std::move(result), s, "function attributes");
      }
      (result.*set)(value);
    }
  }
  LaunchGeometry geometry = FromProto(run.candidate().geometry());
  for (const kernels::FunctionAttribute& attribute : kernels::FunctionAttributes(geometry)) {
    if (auto s = CUTUNE_DRIVER_CALL(api, cuFuncSetAttribute, *function,
                                    static_cast<CUfunction_attribute>(attribute.driver_attribute),
                                    static_cast<int>(attribute.value));
        !s.ok()) {
      return Failed(std::move(result), s, "launch", cuda::CallSite::kCandidateLaunch);
    }
  }
  const CUdeviceptr out = problem_->output.get();
  // One launch on a poisoned output (an element the candidate fails to write stays NaN and fails
  // the check), compared with the reference when `compare`. Returns the failure that ends the
  // run, if any.
  auto checked_launch = [&](bool compare) -> std::optional<absl::StatusOr<wpb::RunResult>> {
    if (auto s = CUTUNE_DRIVER_CALL(api, cuMemsetD32Async, out, 0xFFFFFFFFu, problem_->plan.output,
                                    stream_.get());
        !s.ok()) {
      return Failed(result, s, "poisoning the output");
    }
    if (auto s = LaunchOn(*function, geometry, out); !s.ok()) {
      return Failed(result, s, "launch", cuda::CallSite::kCandidateLaunch);
    }
    if (auto s = CUTUNE_DRIVER_CALL(api, cuStreamSynchronize, stream_.get()); !s.ok()) {
      return Failed(result, s, "run");
    }
    if (!compare) return std::nullopt;
    auto comparison = CompareOutput();
    if (!comparison.ok()) return Failed(result, comparison.status(), "verify");
    const tuner::Verdict verdict = tuner::JudgeOutput(problem_->family->verification(), *comparison);
    result.set_max_abs_error(std::max(result.max_abs_error(), static_cast<double>(comparison->max_abs_error)));
    result.set_rel_error(std::max(result.rel_error(), verdict.rel_error));
    if (!verdict.correct) {
      result.set_outcome(wpb::OUTCOME_WRONG_ANSWER);
      result.set_detail(verdict.detail);
      return result;
    }
    return std::nullopt;
  };
  if (auto failure = checked_launch(run.verify())) return std::move(*failure);

  result.set_verify_ms(since(phase));
  phase = Clock::now();
  // The checked launch above was the candidate's first: it counts as a warm-up launch.
  auto stats = Time([&] { return LaunchOn(*function, geometry, out); }, run.timing(),
                    problem_->family->memory_bound() && run.timing().flush_l2(), /*launched=*/1);
  if (!stats.ok()) return Failed(std::move(result), stats.status(), "time");
  result.set_time_ms(since(phase));
  // Modules that keep state between launches (split-K's and stream-K's counters) must leave it
  // ready for the next launch: the last timed one is followed by one more, checked.
  if (run.verify() && run.verify_again()) {
    if (auto failure = checked_launch(/*compare=*/true)) {
      if (failure->ok() && (*failure)->outcome() == wpb::OUTCOME_WRONG_ANSWER) {
        (*failure)->set_detail(absl::StrCat("after the timed launches: ", (*failure)->detail()));
      }
      return std::move(*failure);
    }
  }
  result.set_outcome(wpb::OUTCOME_OK);
  *result.mutable_stats() = *stats;
  return result;
}

absl::StatusOr<tuner::OutputComparison> Executor::CompareOutput() {
  const cuda::DriverApi& api = Api();
  CUdeviceptr scratch = compare_scratch_.get();
  CUdeviceptr output = problem_->output.get(), ref = problem_->reference.get();
  long long count = problem_->plan.output;
  CUdeviceptr sums = scratch, max_bits = scratch + 16, nonfinite = scratch + 24;
  void* args[] = {&output, &ref, &count, &sums, &max_bits, &nonfinite};
  LaunchGeometry g = Linear(count);
  struct {
    double sums[2];
    uint32_t max_bits;
    uint32_t pad;
    unsigned long long nonfinite;
  } host{};
  // Zeroed first: the comparison accumulates into the scratch.
  absl::Status s = CUTUNE_DRIVER_CALL(api, cuMemsetD32Async, scratch, 0,
                                      compare_scratch_.bytes() / 4, stream_.get());
  if (s.ok()) {
    s = CUTUNE_DRIVER_CALL(api, cuLaunchKernel, compare_, g.grid[0], 1, 1, g.block[0], 1, 1, 0,
                           stream_.get(), args, nullptr);
  }
  if (s.ok()) s = CUTUNE_DRIVER_CALL(api, cuStreamSynchronize, stream_.get());
  if (s.ok()) s = CUTUNE_DRIVER_CALL(api, cuMemcpyDtoH, &host, scratch, sizeof(host));
  if (!s.ok()) return s;
  tuner::OutputComparison comparison;
  comparison.squared_error = host.sums[0];
  comparison.squared_reference = host.sums[1];
  std::memcpy(&comparison.max_abs_error, &host.max_bits, 4);
  comparison.nonfinite = host.nonfinite;
  return comparison;
}

absl::StatusOr<wpb::ReferenceResult> Executor::Reference(const wpb::Reference& reference) {
  auto result = MeasureReference(reference);
  if (!result.ok()) return MarkIfFatal(result.status());
  return result;
}

absl::StatusOr<wpb::ReferenceResult> Executor::MeasureReference(const wpb::Reference& reference) {
  if (problem_ == nullptr) return absl::FailedPreconditionError("no problem prepared");
  wpb::ReferenceResult result;
  const Shape& shape = problem_->shape;
  if (problem_->family->memory_bound()) {
    // The same bytes moved by a device-to-device copy: read once, written once.
    const size_t bytes = static_cast<size_t>(problem_->plan.output) * 4;
    CUdeviceptr src = problem_->inputs.front().get(), dst = problem_->output.get();
    auto stats = Time(
        [&] {
          return CUTUNE_DRIVER_CALL(Api(), cuMemcpyDtoDAsync, dst, src, bytes, stream_.get());
        },
        reference.timing(), reference.timing().flush_l2());
    if (!stats.ok()) return stats.status();
    result.set_name("device-to-device copy");
    *result.mutable_stats() = *stats;
    return result;
  }
  auto cublas = cuda::Cublas::Create(stream_.get());
  if (!cublas.ok()) return cublas.status();
  CUdeviceptr a = problem_->inputs.at(0).get(), b = problem_->inputs.at(1).get();
  CUdeviceptr c = problem_->output.get();
  int m = static_cast<int>(shape[0]), n = static_cast<int>(shape[1]), k = static_cast<int>(shape[2]);
  auto stats = Time([&] { return cublas->Sgemm(a, b, c, m, n, k); }, reference.timing(), false);
  if (!stats.ok()) return stats.status();
  result.set_name("cuBLAS SGEMM (no tensor cores)");
  *result.mutable_stats() = *stats;
  return result;
}

}  // namespace cutune::worker
