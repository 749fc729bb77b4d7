// What the kernel families share: device limit tables, pruning, the registry and helpers.
#include "kernels/family.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "kernels/embedded.h"
#include "server/core/hash.h"
#include "server/core/strings.h"

namespace cutune::kernels {
namespace {

struct ArchLimits {
  int cc_major;
  int cc_minor;
  int shared_optin_kb;
  int shared_per_sm_kb;
  int threads_per_sm;
  int blocks_per_sm;
  int sm_count;  // of the architecture's reference data-centre part; real devices report theirs
};

// CUDA C Programming Guide, "Technical Specifications per Compute Capability".
// Columns: cc, opt-in shared KB per block, shared KB per SM, resident threads and blocks per SM,
// SMs of the reference part.
constexpr ArchLimits kArchLimits[] = {
    {7, 0, 96, 96, 2048, 32, 80},      // V100
    {7, 5, 64, 64, 1024, 16, 40},      // T4
    {8, 0, 163, 164, 2048, 32, 108},   // A100
    {8, 6, 99, 100, 1536, 16, 84},     // A40 / RTX 30xx
    {8, 7, 163, 164, 1536, 16, 16},    // Orin
    {8, 9, 99, 100, 1536, 24, 142},    // L40S / RTX 40xx
    {9, 0, 227, 228, 2048, 32, 132},   // H100 / H200 SXM
    {10, 0, 227, 228, 2048, 32, 148},  // B200
    {12, 0, 99, 100, 1536, 32, 170},   // RTX 50xx
};

// Registers are allocated per warp in units of 256 (8 per thread).
int64_t AllocatedRegisters(int registers, int64_t threads) {
  const int64_t per_thread = CeilDiv(registers, 8) * 8;
  const int64_t warps = CeilDiv(threads, 32);
  return per_thread * warps * 32;
}

}  // namespace

absl::StatusOr<DeviceLimits> DeviceLimits::ForArch(std::string_view arch) {
  absl::string_view digits = ToAbsl(arch);
  int cc = 0;
  if (!absl::ConsumePrefix(&digits, "sm_") || digits.size() < 2 ||
      !absl::SimpleAtoi(digits, &cc)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad architecture '", std::string(arch), "': expected sm_XY, e.g. sm_90"));
  }
  return ForComputeCapability(cc / 10, cc % 10);
}

absl::StatusOr<DeviceLimits> DeviceLimits::ForComputeCapability(int cc_major, int cc_minor) {
  for (const ArchLimits& entry : kArchLimits) {
    if (entry.cc_major != cc_major || entry.cc_minor != cc_minor) continue;
    DeviceLimits limits;
    limits.cc_major = entry.cc_major;
    limits.cc_minor = entry.cc_minor;
    limits.max_threads_per_block = 1024;
    limits.max_shared_per_block = 48 * 1024;
    limits.max_shared_per_block_optin = entry.shared_optin_kb * 1024;
    limits.max_registers_per_block = 64 * 1024;
    limits.max_registers_per_thread = 255;
    limits.max_shared_per_sm = entry.shared_per_sm_kb * 1024;
    limits.max_threads_per_sm = entry.threads_per_sm;
    limits.max_blocks_per_sm = entry.blocks_per_sm;
    limits.sm_count = entry.sm_count;
    return limits;
  }
  std::vector<std::string> known;
  for (const ArchLimits& entry : kArchLimits) {
    known.push_back(absl::StrCat("sm_", entry.cc_major, entry.cc_minor));
  }
  return absl::NotFoundError(absl::StrCat("no device limits known for sm_", cc_major, cc_minor,
                                          " (known: ", absl::StrJoin(known, ", "), ")"));
}

std::string DeviceLimits::Arch() const { return absl::StrCat("sm_", cc_major, cc_minor); }

const std::string& KernelFamily::source_hash() const {
  std::call_once(source_hash_once_, [this] { source_hash_ = Sha256Hex(source()); });
  return source_hash_;
}

std::string ArgumentCType(const KernelArgument& argument, std::string_view dtype) {
  // dtype is validated before any contract is built; f32 is the only one today.
  const std::string element = dtype == "f32" ? "float" : std::string(dtype);
  switch (argument.role) {
    case KernelArgument::Role::kInput:
      return "const " + element + "*";
    case KernelArgument::Role::kOutput:
      return element + "*";
    case KernelArgument::Role::kDimension:
      return "int";
  }
  return "";
}

std::vector<FunctionAttribute> FunctionAttributes(const LaunchGeometry& geometry) {
  std::vector<FunctionAttribute> out;
  if (geometry.dynamic_shared_bytes > kDefaultDynamicSharedLimit) {
    out.push_back({kMaxDynamicSharedAttribute, kMaxDynamicSharedAttributeValue,
                   geometry.dynamic_shared_bytes});
  }
  return out;
}

BufferPlan KernelFamily::Buffers(const Shape& shape) const {
  BufferPlan plan;
  for (const KernelArgument& argument : Arguments()) {
    if (argument.role == KernelArgument::Role::kDimension) continue;
    int64_t elements = 1;
    for (int dim : argument.extent) elements *= shape.at(dim);
    if (argument.role == KernelArgument::Role::kInput) {
      plan.inputs.push_back(elements);
    } else {
      plan.output = elements;
    }
  }
  return plan;
}

absl::Status KernelFamily::ValidateParams(const Params& params) const {
  return default_space().Admit(params, /*strict=*/true);
}

std::vector<std::string> KernelFamily::ReferenceDefines() const {
  return {std::string(kReferenceDefine)};
}

std::optional<std::string> KernelFamily::PruneForDevice(const Params& params,
                                                        const DeviceLimits& limits) const {
  const int64_t threads = ThreadsPerBlock(params);
  if (threads > limits.max_threads_per_block) {
    return absl::StrCat(threads, " threads per block exceed the device limit of ",
                        limits.max_threads_per_block, " on ", limits.Arch());
  }
  const int64_t shared = SharedBytes(params);
  if (shared > limits.max_shared_per_block_optin) {
    return absl::StrCat(shared, " bytes of shared memory per block exceed the opt-in limit of ",
                        limits.max_shared_per_block_optin, " on ", limits.Arch());
  }
  return std::nullopt;
}

std::optional<std::string> KernelFamily::PruneCompiled(const Params& params,
                                                       const ResourceUsage& usage,
                                                       const DeviceLimits& limits) const {
  if (usage.registers > limits.max_registers_per_thread) {
    return absl::StrCat(usage.registers, " registers per thread exceed the limit of ",
                        limits.max_registers_per_thread, " on ", limits.Arch());
  }
  const int64_t threads = ThreadsPerBlock(params);
  const int64_t registers = AllocatedRegisters(usage.registers, threads);
  if (registers > limits.max_registers_per_block) {
    return absl::StrCat(usage.registers, " registers x ", threads, " threads (", registers,
                        " allocated) exceed the limit of ", limits.max_registers_per_block,
                        " registers per block on ", limits.Arch());
  }
  // The family's figure includes its static arrays; ptxas' figure is authoritative for them.
  const int64_t shared = std::max<int64_t>(SharedBytes(params), usage.static_shared_bytes);
  if (shared > limits.max_shared_per_block_optin) {
    return absl::StrCat(shared, " bytes of shared memory per block exceed the opt-in limit of ",
                        limits.max_shared_per_block_optin, " on ", limits.Arch());
  }
  return std::nullopt;
}

int64_t Get(const Params& params, std::string_view name) {
  auto found = params.find(name);
  return found == params.end() ? 0 : found->second;
}

std::vector<std::string> DefinesFromParams(const Params& params) {
  std::vector<std::string> defines;
  defines.reserve(params.size());
  for (const auto& [name, value] : params) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    defines.push_back(absl::StrCat("-DCT_", upper, "=", value));
  }
  return defines;
}

absl::Status ValidateDims(const Shape& shape, const std::vector<std::string>& dims,
                          const std::vector<std::pair<int, int>>& matrices) {
  if (shape.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", dims.size(), " dimensions (",
                                                   absl::StrJoin(dims, ", "), "), got ",
                                                   shape.size()));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (shape[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", dims[i], " must be positive, got ", shape[i]));
    }
    if (shape[i] > kMaxDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", dims[i], "=", shape[i], " exceeds the limit of 2^30"));
    }
  }
  for (const auto& [a, b] : matrices) {
    if (shape[a] * shape[b] > kMaxMatrixElements) {
      return absl::InvalidArgumentError(
          absl::StrCat("matrix ", dims[a], "x", dims[b], " = ", shape[a], "x", shape[b],
                       " has more than 2^31 elements"));
    }
  }
  return absl::OkStatus();
}

const KernelFamily* FindFamily(std::string_view name) {
  for (const KernelFamily* family : AllFamilies()) {
    if (family->name() == name) return family;
  }
  return nullptr;
}

std::vector<const KernelFamily*> AllFamilies() { return {&TransposeFamily(), &MatmulFamily()}; }

std::vector<Params> ParamsList(std::initializer_list<std::string_view> written) {
  std::vector<Params> list;
  for (std::string_view text : written) {
    absl::StatusOr<Params> params = ParseParams(text);
    if (!params.ok()) {
      std::fprintf(stderr, "kernels: bad configuration '%.*s': %s\n", static_cast<int>(text.size()),
                   text.data(), std::string(params.status().message()).c_str());
      std::abort();
    }
    list.push_back(*std::move(params));
  }
  return list;
}

absl::StatusOr<const KernelFamily*> GetFamily(std::string_view name) {
  if (const KernelFamily* family = FindFamily(name)) return family;
  std::vector<std::string> names;
  for (const KernelFamily* family : AllFamilies()) names.emplace_back(family->name());
  return absl::NotFoundError(absl::StrCat("unknown kernel family ", Quoted(name),
                                          " (known: ", absl::StrJoin(names, ", "), ")"));
}

namespace {

// INVALID_ARGUMENT, not GetFamily's NOT_FOUND: here the entry naming the family is what is wrong.
absl::StatusOr<const KernelFamily*> KnownFamily(std::string_view family) {
  absl::StatusOr<const KernelFamily*> found = GetFamily(family);
  if (!found.ok()) return absl::InvalidArgumentError(found.status().message());
  return found;
}

}  // namespace

absl::Status ValidateProblem(std::string_view family, const Shape& shape) {
  absl::StatusOr<const KernelFamily*> found = KnownFamily(family);
  if (!found.ok()) return found.status();
  return (*found)->ValidateShape(shape);
}

absl::Status ValidateParams(std::string_view family, const Params& params) {
  absl::StatusOr<const KernelFamily*> found = KnownFamily(family);
  if (!found.ok()) return found.status();
  return (*found)->ValidateParams(params);
}

Params CanonicalParams(std::string_view family, Params params) {
  absl::StatusOr<const KernelFamily*> found = KnownFamily(family);
  if (!found.ok()) return params;
  return (*found)->default_space().Complete(std::move(params));
}

absl::Status ValidateEntry(std::string_view family, const Shape& shape, const Params& params) {
  if (absl::Status s = ValidateProblem(family, shape); !s.ok()) return s;
  return ValidateParams(family, params);
}

std::string_view SupportSource() { return embedded::kSupportSource; }

double TileCoverage(const KernelFamily& family, const Params& params, const Shape& shape) {
  const std::vector<int64_t> tile = family.OutputTile(params);
  double coverage = 1;
  for (size_t d = 0; d < tile.size() && d < shape.size(); ++d) {
    if (tile[d] <= 0) continue;
    coverage *= static_cast<double>(shape[d]) / static_cast<double>(CeilDiv(shape[d], tile[d]) * tile[d]);
  }
  return coverage;
}

int ResidentBlocks(const LaunchGeometry& geometry, const ResourceUsage& usage,
                   const DeviceLimits& limits) {
  const int64_t threads = std::max<int64_t>(static_cast<int64_t>(geometry.ThreadsPerBlock()), 1);
  int64_t blocks = std::min<int64_t>(limits.max_blocks_per_sm, limits.max_threads_per_sm / threads);
  if (usage.registers > 0) {
    blocks = std::min(blocks,
                      limits.max_registers_per_sm / AllocatedRegisters(usage.registers, threads));
  }
  const int64_t reserved = limits.cc_major >= 8 ? 1024 : 0;
  const int64_t shared = std::max<int64_t>(geometry.dynamic_shared_bytes, usage.static_shared_bytes) +
                         reserved;
  if (shared > 0) blocks = std::min(blocks, limits.max_shared_per_sm / shared);
  return static_cast<int>(std::max<int64_t>(blocks, 1));
}

namespace {

// LaunchEfficiency of a launch already laid out.
double EfficiencyOf(const KernelFamily& family, const Params& params, const Shape& shape,
                    const LaunchGeometry& g, int sm_count) {
  const double blocks = static_cast<double>(g.grid[0]) * static_cast<double>(g.grid[1]) *
                        static_cast<double>(g.grid[2]);
  const double slots = static_cast<double>(std::max(1, sm_count));
  const double waves = std::ceil(blocks / slots);
  const double busy = waves > 0 ? blocks / (waves * slots) : 1.0;
  return TileCoverage(family, params, shape) * busy;
}

}  // namespace

LaunchFigures FitLaunch(const KernelFamily& family, const Params& params, const Shape& shape,
                        const ResourceUsage& usage, const DeviceLimits* limits, int sm_count) {
  const LaunchGeometry geometry = family.Geometry(params, shape, sm_count);
  LaunchFigures out;
  out.efficiency = EfficiencyOf(family, params, shape, geometry, sm_count);
  const int resident = limits != nullptr ? ResidentBlocks(geometry, usage, *limits) : 1;
  out.cost_terms = family.CostTerms(params, shape, geometry, sm_count, resident);
  return out;
}

double LaunchEfficiency(const KernelFamily& family, const Params& params, const Shape& shape,
                        int sm_count) {
  return EfficiencyOf(family, params, shape, family.Geometry(params, shape, sm_count), sm_count);
}

}  // namespace cutune::kernels
