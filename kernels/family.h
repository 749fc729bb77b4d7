// A kernel family: one CUDA source template (kernels/*.cu), the search space over its
// parameters, the launch geometry each candidate needs, the work it does (for roofline figures)
// and how its answer is checked. Everything the two families share lives here and in space.h;
// a family itself is data plus this small interface.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/space.h"
#include "server/core/types.h"

namespace cutune::kernels {

// The limits a device puts on a candidate (from cuDeviceGetAttribute, or a known architecture's
// table when no GPU is present).
struct DeviceLimits {
  int cc_major = 9;
  int cc_minor = 0;
  int max_threads_per_block = 1024;
  int max_shared_per_block = 48 * 1024;         // without opt-in
  int max_shared_per_block_optin = 227 * 1024;  // with cuFuncSetAttribute
  int max_registers_per_block = 64 * 1024;
  int max_registers_per_thread = 255;
  int max_shared_per_sm = 228 * 1024;
  int max_registers_per_sm = 64 * 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int sm_count = 132;

  // Limits of an architecture by name ("sm_80", "sm_90"); error for unknown ones.
  static absl::StatusOr<DeviceLimits> ForArch(std::string_view arch);
  // The same by compute capability (9, 0); NOT_FOUND for unknown ones.
  static absl::StatusOr<DeviceLimits> ForComputeCapability(int cc_major, int cc_minor);
  std::string Arch() const;  // "sm_90"
};

// How a candidate's output is judged against the reference.
struct Verification {
  bool exact = true;        // transpose: bit-exact
  double max_rel_error = 0; // matmul: ||out - ref||_2 / ||ref||_2 must not exceed this
};

// The launch contract, which clients receive as data (ListFamilies, GetBestConfig).
//
// One argument of the entry point, in order: every family takes its input pointers, then its
// output pointer, then each shape dimension as an int.
struct KernelArgument {
  enum class Role { kInput, kOutput, kDimension };
  std::string name;  // as in the kernel's source: "A", "M"
  Role role = Role::kInput;
  // A pointer: its dense row-major buffer's extents as indices into dims(), outermost first
  // (matmul's A is {M, K}: M*K elements, row stride K). A dimension: the one index it carries.
  std::vector<int> extent;
};
// The C type an argument is passed as, for a problem's dtype: "const float*", "float*", "int".
std::string ArgumentCType(const KernelArgument& argument, std::string_view dtype);
// Every pointer argument must be aligned to this many bytes (the kernels load float4s).
inline constexpr int kPointerAlignment = 16;

// Whether launches of one loaded module may run at the same time.
enum class Concurrency {
  kAny,
  // Launches share state in the module's own memory (split-K's turn counters): launches of
  // one module must not overlap, so a client loads one module per stream.
  kOneModulePerStream,
};

// A function attribute to set before the first launch, by its CUfunction_attribute name and
// value in the CUDA driver API.
struct FunctionAttribute {
  std::string name;
  int driver_attribute = 0;
  int64_t value = 0;
};
// Dynamic shared memory beyond this needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
inline constexpr uint32_t kDefaultDynamicSharedLimit = 48 * 1024;
inline constexpr char kMaxDynamicSharedAttribute[] =
    "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES";
inline constexpr int kMaxDynamicSharedAttributeValue = 8;  // its CUfunction_attribute value
// The attributes a launch with `geometry` needs (none within the default limits).
std::vector<FunctionAttribute> FunctionAttributes(const LaunchGeometry& geometry);

// Buffers of one problem, in elements (from the family's pointer arguments).
struct BufferPlan {
  std::vector<int64_t> inputs;
  int64_t output = 0;
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;

  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual std::vector<std::string> dims() const = 0;  // {"rows","cols"} / {"M","N","K"}

  // The .cu text every candidate is compiled from (parameters arrive as -D defines).
  virtual std::string_view source() const = 0;
  // SHA-256 of source(), computed once: it is on every lookup's path.
  const std::string& source_hash() const;
  // Bumped whenever the default space's meaning changes.
  virtual int space_version() const = 0;

  virtual const Space& default_space() const = 0;
  // The seed's kernel: the baseline and the last rung of the lookup ladder.
  virtual Params baseline() const = 0;
  // Where a quick sweep starts when the store knows too little of the device (no table of its
  // model or architecture): configurations that cover the family's shapes on the GPUs it was
  // tuned on, best first (store/quick_start.h). Each is a candidate of the default space.
  virtual std::vector<Params> starters() const { return {}; }

  // Entry points (extern "C"): the candidate kernel and the trusted reference kernel.
  static constexpr std::string_view kKernelName = "cutune_kernel";
  static constexpr std::string_view kReferenceName = "cutune_reference";

  // NVRTC options that instantiate the source for one candidate: a -D define per parameter, plus
  // any compiler option a parameter stands for (matmul's ptxo=1: --ptxas-options=-O1).
  virtual std::vector<std::string> Defines(const Params& params) const = 0;
  // Defines a candidate also takes from the shape it runs at: a module of another shape's class
  // computes the same results, only slower (matmul's rows that are not 16-byte aligned). Empty
  // (the default, and for an empty shape: a shape-free compile, such as filling the cache).
  virtual std::vector<std::string> ShapeDefines(const Params& /*params*/,
                                                const Shape& /*shape*/) const {
    return {};
  }
  // -D options for a module that holds the reference kernel (the candidate's source compiled
  // with -DCUTUNE_REFERENCE; candidate cubins never carry the reference).
  std::vector<std::string> ReferenceDefines() const;
  static constexpr std::string_view kReferenceDefine = "-DCUTUNE_REFERENCE";

  // Threads per block and shared memory (static + dynamic, bytes) one candidate needs; both
  // independent of the shape.
  virtual int64_t ThreadsPerBlock(const Params& params) const = 0;
  virtual int64_t SharedBytes(const Params& params) const = 0;

  // INVALID_ARGUMENT naming the problem (rank, non-positive or too-large dimension).
  virtual absl::Status ValidateShape(const Shape& shape) const = 0;
  // INVALID_ARGUMENT unless `params` is a candidate of the default space: every parameter
  // present, known and among its values, and every constraint kept. Geometry, ThreadsPerBlock
  // and SharedBytes may only be asked about parameters that pass.
  absl::Status ValidateParams(const Params& params) const;

  // The launch of one candidate on a GPU with `sm_count` SMs (at least 1 is assumed): only
  // persistent grids (matmul's stream-K) depend on it.
  virtual LaunchGeometry Geometry(const Params& params, const Shape& shape, int sm_count) const = 0;
  // The output tile's extent along each shape dimension, in shape order; 0 for a dimension the
  // launch does not tile (matmul's K). Empty: a family without output tiles. TileCoverage is
  // computed from it.
  virtual std::vector<int64_t> OutputTile(const Params& /*params*/) const { return {}; }
  // Geometry of the reference kernel.
  virtual LaunchGeometry ReferenceGeometry(const Shape& shape) const = 0;

  // The quantities a candidate's time at `shape` grows with, given its launch there
  // (`geometry`, from Geometry) on a GPU of `sm_count` SMs that keeps `resident` of its blocks on
  // each SM at once (ResidentBlocks): the prediction model fits each portfolio member's measured
  // times as a non-negative sum of them plus a launch latency. Empty (the default): the family
  // has no cost model, and the model compares members by their measured slowdowns at
  // neighbouring shapes alone. Only asked about parameters that pass ValidateParams and valid
  // shapes.
  virtual std::vector<double> CostTerms(const Params& /*params*/, const Shape& /*shape*/,
                                        const LaunchGeometry& /*geometry*/, int /*sm_count*/,
                                        int /*resident*/) const {
    return {};
  }

  // Static pruning against a device, before compiling: returns the reason when the candidate
  // cannot run there (threads per block, shared memory). Registers are checked after compiling
  // with PruneCompiled.
  std::optional<std::string> PruneForDevice(const Params& params, const DeviceLimits& limits) const;
  // After compiling: registers x threads over the block limit, shared memory over the limit.
  std::optional<std::string> PruneCompiled(const Params& params, const ResourceUsage& usage,
                                           const DeviceLimits& limits) const;

  // Work for roofline figures: the fewest bytes that must move through device memory, and the
  // floating-point operations (0 for data movement).
  virtual double BytesMoved(const Shape& shape) const = 0;
  virtual double Flops(const Shape& shape) const = 0;
  // Memory-bound families flush L2 between timing samples.
  virtual bool memory_bound() const = 0;

  // The entry point's arguments, in order (the same for every candidate).
  virtual std::vector<KernelArgument> Arguments() const = 0;
  // Whether launches of one module of this configuration may overlap.
  virtual Concurrency LaunchConcurrency(const Params& /*params*/) const { return Concurrency::kAny; }
  // Elements of each pointer argument for `shape` (the shape must be valid).
  BufferPlan Buffers(const Shape& shape) const;
  virtual Verification verification() const = 0;

 private:
  mutable std::once_flag source_hash_once_;
  mutable std::string source_hash_;
};

// The registry of families the server knows. Clients name families; they never send code.
const KernelFamily* FindFamily(std::string_view name);
std::vector<const KernelFamily*> AllFamilies();

// Configurations written as FormatParams writes them (a family's starters, parsed once). A
// malformed one is a programming error: it aborts naming the text, on the list's first use (the
// families' tests make that use).
std::vector<Params> ParamsList(std::initializer_list<std::string_view> written);
absl::StatusOr<const KernelFamily*> GetFamily(std::string_view name);  // NOT_FOUND with the list

// The admission check for a configuration that comes from outside a sweep of the default space
// (an imported table, a stored winner): ValidateProblem, then ValidateParams; INVALID_ARGUMENT
// saying why. The store asks the two halves separately, to say which member of a table is wrong.
absl::Status ValidateEntry(std::string_view family, const Shape& shape, const Params& params);
// A known family and a shape it accepts (KernelFamily::ValidateShape).
absl::Status ValidateProblem(std::string_view family, const Shape& shape);
// A known family and parameters its KernelFamily::ValidateParams accepts.
absl::Status ValidateParams(std::string_view family, const Params& params);
// A configuration in its family's one spelling: parameters added to the space since it was
// recorded get their `absent` values (Space::Complete), so {..} and {.., sk=0} are one
// configuration wherever they meet (table import, a sweep's given candidates). Unknown families
// are returned as they are.
Params CanonicalParams(std::string_view family, Params params);

// The share of the launched output tiles' area that covers the output, in (0, 1] (1: a family
// without output tiles).
double TileCoverage(const KernelFamily& family, const Params& params, const Shape& shape);
// How well a configuration's launch fits a shape, in (0, 1]: TileCoverage times the share of the
// last wave's SMs kept busy (blocks from Geometry, one block per SM per wave assumed). The
// prediction model corrects a member's measured slowdown at a neighbouring shape with it.
double LaunchEfficiency(const KernelFamily& family, const Params& params, const Shape& shape,
                        int sm_count);
// How many blocks of a launch one SM holds at once (the occupancy calculator's figure): the
// least of what its threads, allocated registers and shared memory (the larger of the launch's
// and ptxas' static figure, plus the 1 KB the driver reserves per block from cc 8.0) leave room
// for, and the resident-block limit; at least 1. `usage.registers` 0 (unknown) leaves registers
// out.
int ResidentBlocks(const LaunchGeometry& geometry, const ResourceUsage& usage,
                   const DeviceLimits& limits);

// What the prediction model asks of a configuration at a shape, from one Geometry: its
// LaunchEfficiency and its CostTerms, with the blocks an SM holds from `limits` (nullptr: an
// unknown architecture, where a block is counted as alone on its SM).
struct LaunchFigures {
  double efficiency = 1;
  std::vector<double> cost_terms;
};
LaunchFigures FitLaunch(const KernelFamily& family, const Params& params, const Shape& shape,
                        const ResourceUsage& usage, const DeviceLimits* limits, int sm_count);

// The built-in families (also reachable through the registry).
const KernelFamily& TransposeFamily();
const KernelFamily& MatmulFamily();

// Helpers the families share.
// The value of `name` in `params`; 0 when absent (Space::Check reports missing ones).
int64_t Get(const Params& params, std::string_view name);
// "-DCT_<NAME>=<value>" for every parameter, upper-casing the name.
std::vector<std::string> DefinesFromParams(const Params& params);
// Rank and dims (positive, at most kMaxDim), and each listed pair of dims (a matrix) holding at
// most kMaxMatrixElements elements. The kernels index rows with 64-bit offsets but do 32-bit
// arithmetic on a dimension plus a tile (e.g. col + 4 <= cols), hence the headroom below 2^31.
inline constexpr int64_t kMaxDim = int64_t{1} << 30;
inline constexpr int64_t kMaxMatrixElements = int64_t{1} << 31;
absl::Status ValidateDims(const Shape& shape, const std::vector<std::string>& dims,
                          const std::vector<std::pair<int, int>>& matrices);
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Support kernels every worker needs (random fill, poison check, compare): extern "C"
// cutune_fill(float* p, long long n, unsigned long long seed): uniform values in [-1, 1) from a
// counter-based hash of (seed, index); cutune_compare(const float* out, const float* ref,
// long long n, double* sums, unsigned int* max_abs_bits, unsigned long long* nonfinite):
// sums[0] += sum (out-ref)^2 and sums[1] += sum ref^2 over finite outputs, max_abs_bits =
// atomicMax of the float bits of |out-ref| (a non-finite output counts as 0x7f800000 or more),
// nonfinite += count of non-finite outputs. Launch both with kSupportBlock threads per block
// and any grid (grid-stride loops); the compare buffers must be zeroed before.
std::string_view SupportSource();
inline constexpr std::string_view kFillName = "cutune_fill";
inline constexpr std::string_view kCompareName = "cutune_compare";
inline constexpr int kSupportBlock = 256;

}  // namespace cutune::kernels
