// cutune::client — from a tuned answer to a kernel launch in one call.
//
//   cutune::client::Client tuner;                    // $CUTUNE_SERVER or 127.0.0.1:50051
//   cutune::client::Kernel& mm = tuner.kernel({"matmul", {M, N, K}});
//   mm.Launch(stream, a, b, c);                             // C = A * B, row-major f32
//
// The client asks a cutuned (or a table server) for the best configuration of a problem on the
// current CUDA context's device model, loads its cubin in that context (or compiles its source
// with NVRTC), sets the function attributes its launch contract names, and launches it with the
// contract's geometry. Answers are cached in the process (a repeated request costs no RPC) and
// kernels per (context, problem); a table file answers when the daemon cannot be reached.
//
// This header needs only the C++ standard library: the CUDA types are the driver API's own
// (cudaStream_t and CUstream are the same type), and the library loads libcuda.so.1 at run time,
// so a program linked with it starts on hosts without a GPU and gets an Error when it asks for a
// kernel. Errors are exceptions of type cutune::client::Error. Client and Kernel are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

// The CUDA driver API's handle types, as <cuda.h> declares them.
typedef struct CUstream_st* CUstream;  // NOLINT: the driver's own spelling
typedef struct CUctx_st* CUcontext;    // NOLINT
typedef struct CUfunc_st* CUfunction;  // NOLINT

#if defined(__GNUC__)
#define CUTUNE_API __attribute__((visibility("default")))
#else
#define CUTUNE_API
#endif

namespace cutune::client {

enum class ErrorCode {
  kInvalidArgument,     // a bad problem, bad launch arguments
  kNotFound,            // unknown family, device model or table file
  kUnavailable,         // the daemon cannot be reached and no table file answers
  kStale,               // fresh_only, and the answer's provenance differs from this host's
  kNoGpu,               // no CUDA driver or no device on this host
  kCudaError,           // a driver call failed (module load, launch)
  kPermissionDenied,    // the daemon refused the token
  kFailedPrecondition,  // anything else the daemon refused
  kInternal,
};

class CUTUNE_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// What to tune for: a family on one shape and element type.
struct Problem {
  std::string family;          // "matmul" | "transpose"
  std::vector<int64_t> shape;  // matmul: M, N, K; transpose: rows, cols
  std::string dtype = "f32";
};

// One argument of the kernel's entry point (the launch contract, GetBestConfigResponse.launch).
struct KernelArgument {
  std::string name;                 // "A"
  std::string role;                 // "input" | "output" | "dimension"
  std::string type;                 // "const float*", "float*", "int"
  std::string element_type;         // pointers: "f32"
  std::vector<std::string> extent;  // pointers: row-major extents ("M", "K"); a dimension: its name
};

struct FunctionAttribute {
  std::string name;  // "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"
  int driver_attribute = 0;
  int64_t value = 0;
};

// The daemon's answer for a problem, as plain data.
struct Answer {
  Problem problem;
  std::string rung;  // "exact", "predicted", "nearest_shape", "same_architecture", "family_default"
  std::string device_model;
  std::vector<int64_t> tuned_shape;
  std::map<std::string, int64_t> params;
  std::vector<std::string> compile_options;  // every NVRTC option, the architecture included
  std::string kernel;                        // entry point
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  std::vector<KernelArgument> arguments;
  std::vector<FunctionAttribute> function_attributes;
  bool one_module_per_stream = false;  // split-K, stream-K: launches of one module must not overlap
  uint32_t pointer_alignment = 16;
  // Figures measured at tuned_shape (the asked shape only when measured_at_asked_shape).
  double time_us = 0;
  bool measured_at_asked_shape = false;
  // Rung "predicted", and "same_architecture" when device_model's prediction model chose it
  // (figures for device_model); 0 otherwise.
  double predicted_time_us = 0;
  double expected_slowdown = 0;  // >= 1 where set
  std::vector<std::string> stale;
  std::string source_hash;
  bool from_table = false;  // answered by the offline table file, not a daemon
};

struct ClientOptions {
  std::string server{};  // empty: $CUTUNE_SERVER, else 127.0.0.1:50051 ("unix:PATH" too)
  std::string token{};   // empty: $CUTUNE_TOKEN
  bool tls = false;    // TLS (implied by any tls_* file)
  std::string tls_ca{};
  std::string tls_cert{};
  std::string tls_key{};
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // per request
  // A tuning table file (tables/*.json, `cutune table export`), or a directory of them (every
  // *.json, as `cutuned --tables` imports them): answers when the daemon is unreachable, or
  // always when `offline` is set.
  std::string table{};
  bool offline = false;
  // Refuse answers whose provenance (driver, NVRTC, kernel source) differs from this host's.
  bool fresh_only = false;
  // The device model to ask for; empty: the current context's device ("NVIDIA H200").
  std::string device_model{};
  // Check every launch's pointers with the driver: device memory of the kernel's context, and
  // an allocation large enough for the argument's extent. Off by default: it costs a driver
  // call per pointer. Count, null, constness, element type and alignment are always checked.
  bool check_pointers = false;
};

class CUTUNE_API Kernel {
 public:
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Launches on `stream` (0: the legacy default stream) with the contract's device pointers in
  // order: inputs, then the output (matmul: A, B, C; transpose: in, out). The shape's dimensions
  // are passed by the library. Throws Error(kInvalidArgument) on a wrong count, a null or
  // misaligned pointer, a const output or another element type than the problem's.
  template <typename... T>
  void Launch(CUstream stream, T*... pointers) {
    static_assert(sizeof...(T) > 0, "pass the kernel's device pointers");
    const void* p[] = {static_cast<const void*>(pointers)...};
    const PointerInfo info[] = {PointerInfo{ElementType<T>(), std::is_const_v<T>}...};
    LaunchPointers(stream, p, info, sizeof...(T));
  }

  const Answer& answer() const;
  CUcontext context() const;
  // The loaded function that Launch(stream, ...) launches on `stream` (its attributes set), for
  // launches the library does not make (graph nodes, cuLaunchKernelEx). For a one-module-per-
  // stream answer each stream has its own.
  CUfunction function(CUstream stream = nullptr);

  struct PointerInfo {
    const char* element_type;  // "f32", or nullptr when unknown
    bool is_const;
  };
  // The same launch with the pointers as an array (bindings to other languages).
  void LaunchPointers(CUstream stream, const void* const* pointers, const PointerInfo* info,
                      size_t count);

  struct State;

 private:
  friend class Client;
  explicit Kernel(std::unique_ptr<State> state);

  template <typename T>
  static constexpr const char* ElementType() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) {
      return "f32";
    } else {
      return nullptr;
    }
  }

  std::unique_ptr<State> state_;
};

class CUTUNE_API Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The best configuration for `problem` on the device model (options.device_model, else the
  // current context's device). Cached: asking again costs no RPC.
  Answer Get(const Problem& problem);
  // The answer's kernel, loaded in the current CUDA context (the primary context of device 0,
  // made current, when the thread has none). Cached per (context, problem); the reference stays
  // valid for the Client's lifetime.
  Kernel& kernel(const Problem& problem);

  // Drops every cached answer and kernel (the next request asks the daemon again).
  void Clear();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cutune::client
