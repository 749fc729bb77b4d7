// NVRTC wrapper: one RAII-owned program per compilation, cubin out, ptxas' report parsed.
#include "server/compiler/compiler.h"

#include <nvrtc.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/compiler/cubin_info.h"
#include "server/core/hash.h"
#include "server/core/strings.h"

namespace cutune::compiler {
namespace {

// Spelling checked against NVRTC 13.0 (as are "-Xptxas=-v" and "--ptxas-options=--verbose").
constexpr char kPtxasVerbose[] = "--ptxas-options=-v";
constexpr char kArchOption[] = "--gpu-architecture=";

absl::Status NvrtcError(nvrtcResult result, const char* call, const char* file, int line,
                        std::string_view detail) {
  std::string message =
      absl::StrCat(call, " failed with ", nvrtcGetErrorString(result), " (", file, ":", line, ")");
  if (!detail.empty()) absl::StrAppend(&message, ": ", ToAbsl(detail));
  switch (result) {
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return absl::InvalidArgumentError(message);
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

#define CUTUNE_NVRTC_RETURN_IF_ERROR(call)                                                \
  do {                                                                                    \
    if (nvrtcResult cutune_nvrtc_result = (call); cutune_nvrtc_result != NVRTC_SUCCESS) { \
      return NvrtcError(cutune_nvrtc_result, #call, __FILE__, __LINE__, {});              \
    }                                                                                     \
  } while (false)

// Owns one nvrtcProgram; the program is destroyed on every path out of Compile.
class Program {
 public:
  static absl::StatusOr<Program> Create(const std::string& source, const std::string& name) {
    Program program;
    CUTUNE_NVRTC_RETURN_IF_ERROR(
        nvrtcCreateProgram(&program.program_, source.c_str(), name.c_str(), 0, nullptr, nullptr));
    return program;
  }

  Program(Program&& other) noexcept : program_(std::exchange(other.program_, nullptr)) {}
  Program& operator=(Program&&) = delete;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    // Destroying a valid program cannot meaningfully fail; there is nothing to recover.
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }

  nvrtcProgram get() const { return program_; }

 private:
  Program() = default;
  nvrtcProgram program_ = nullptr;
};

absl::StatusOr<std::string> ProgramLog(nvrtcProgram program) {
  size_t size = 0;
  CUTUNE_NVRTC_RETURN_IF_ERROR(nvrtcGetProgramLogSize(program, &size));
  std::string log(size, '\0');
  if (size > 0) CUTUNE_NVRTC_RETURN_IF_ERROR(nvrtcGetProgramLog(program, log.data()));
  // The size includes the terminating NUL.
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

absl::StatusOr<std::string> ProgramCubin(nvrtcProgram program) {
  size_t size = 0;
  CUTUNE_NVRTC_RETURN_IF_ERROR(nvrtcGetCUBINSize(program, &size));
  std::string cubin(size, '\0');
  if (size > 0) CUTUNE_NVRTC_RETURN_IF_ERROR(nvrtcGetCUBIN(program, cubin.data()));
  return cubin;
}

const std::vector<int>& SupportedArchs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    std::vector<int> result;
    if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
      result.resize(count);
      if (nvrtcGetSupportedArchs(result.data()) != NVRTC_SUCCESS) result.clear();
    }
    return result;
  }();
  return archs;
}

void AppendPart(std::string& out, std::string_view part) {
  absl::StrAppend(&out, part.size(), ":");
  out.append(part);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// The first decimal number in `text` (0 when there is none).
int FirstNumber(std::string_view text) {
  size_t digit = text.find_first_of("0123456789");
  if (digit == std::string_view::npos) return 0;
  int value = 0;
  std::from_chars(text.data() + digit, text.data() + text.size(), value);
  return value;
}

bool Contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

// Applies one comma-separated ptxas figure list ("Used 24 registers, used 1 barriers, 1024 bytes
// smem, 372 bytes cmem[0]") to `usage`.
void ApplyFigures(std::string_view list, ResourceUsage& usage) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    int value = FirstNumber(item);
    if (Contains(item, "registers")) {
      usage.registers = value;
    } else if (Contains(item, "stack frame") || Contains(item, "cumulative stack size")) {
      usage.stack_bytes = std::max(usage.stack_bytes, value);
    } else if (Contains(item, "spill stores")) {
      usage.spill_store_bytes = value;
    } else if (Contains(item, "spill loads")) {
      usage.spill_load_bytes = value;
    } else if (Contains(item, "bytes smem")) {
      usage.static_shared_bytes = value;
    } else if (Contains(item, "bytes cmem[")) {
      usage.constant_bytes += value;
    }
  }
}

}  // namespace

std::string NvrtcVersion() {
  int major = 0;
  int minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

absl::Status ValidateArch(std::string_view arch) {
  std::string_view digits = arch;
  bool well_formed = digits.substr(0, 3) == "sm_";
  digits.remove_prefix(std::min<size_t>(3, digits.size()));
  // Arch-specific ("sm_90a") and family ("sm_100f") targets compile to the same numbered arch.
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  int number = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  well_formed = well_formed && !digits.empty() && error == std::errc() &&
                end == digits.data() + digits.size();
  if (!well_formed) {
    return absl::InvalidArgumentError(
        absl::StrCat("arch '", ToAbsl(arch), "' is not of the form sm_XY"));
  }
  const std::vector<int>& supported = SupportedArchs();
  if (std::find(supported.begin(), supported.end(), number) == supported.end()) {
    std::string list;
    for (int a : supported) absl::StrAppend(&list, list.empty() ? "" : " ", "sm_", a);
    return absl::InvalidArgumentError(absl::StrCat("arch '", ToAbsl(arch),
                                                   "' is not supported by NVRTC ", NvrtcVersion(),
                                                   " (supported: ", list, ")"));
  }
  return absl::OkStatus();
}

std::string ContentKey(const CompileRequest& request) {
  std::string material;
  AppendPart(material, "cutune.nvrtc.v1");
  AppendPart(material, NvrtcVersion());
  AppendPart(material, request.arch);
  AppendPart(material, request.source_name);
  AppendPart(material, request.source);
  AppendPart(material, absl::StrCat(request.options.size()));
  for (const std::string& option : request.options) AppendPart(material, option);
  return Sha256Hex(material);
}

absl::StatusOr<CompileResult> Compile(const CompileRequest& request) {
  if (absl::Status status = ValidateArch(request.arch); !status.ok()) return status;
  // NVRTC reads the source up to its first NUL; the key would cover bytes never compiled.
  if (request.source.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("kernel source contains a NUL byte");
  }
  std::vector<const char*> options;
  for (const std::string& option : request.options) {
    if (option.starts_with("-arch") || option.starts_with("--gpu-architecture")) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '", option, "' sets the arch; use CompileRequest::arch"));
    }
    options.push_back(option.c_str());
  }
  const std::string arch_option = kArchOption + request.arch;
  options.push_back(arch_option.c_str());
  options.push_back(kPtxasVerbose);

  absl::StatusOr<Program> program = Program::Create(request.source, request.source_name);
  if (!program.ok()) return program.status();

  CompileResult result;
  result.key = ContentKey(request);
  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult compiled =
      nvrtcCompileProgram(program->get(), static_cast<int>(options.size()), options.data());
  absl::StatusOr<std::string> log = ProgramLog(program->get());
  if (!log.ok()) return log.status();
  result.log = *std::move(log);
  if (compiled == NVRTC_ERROR_COMPILATION) {
    result.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  if (compiled != NVRTC_SUCCESS) {
    return NvrtcError(compiled, "nvrtcCompileProgram", __FILE__, __LINE__, Trim(result.log));
  }
  absl::StatusOr<std::string> cubin = ProgramCubin(program->get());
  if (!cubin.ok()) return cubin.status();
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (cubin->empty()) {
    return absl::InternalError(absl::StrCat("NVRTC produced no cubin for ", request.arch));
  }
  result.ok = true;
  result.cubin = *std::move(cubin);
  result.resources = ParsePtxasReport(result.log);
  if (result.resources.empty()) {
    // No ptxas report in the log (some NVRTC builds): registers and stack from the cubin itself.
    auto from_cubin = ReadCubinResources(result.cubin);
    if (from_cubin.ok()) result.resources = *std::move(from_cubin);
  }
  return result;
}

std::map<std::string, ResourceUsage> ParsePtxasReport(std::string_view log) {
  constexpr std::string_view kEntry = "Compiling entry function '";
  constexpr std::string_view kProperties = "Function properties for ";
  std::vector<std::string> entries;
  // Every function ptxas reports on, entry or not, keyed by name; entries are picked at the end.
  std::map<std::string, ResourceUsage> functions;
  ResourceUsage module_wide;
  std::string current;
  while (!log.empty()) {
    size_t newline = log.find('\n');
    std::string_view line = log.substr(0, newline);
    log = newline == std::string_view::npos ? std::string_view() : log.substr(newline + 1);
    if (!line.starts_with("ptxas")) continue;
    if (size_t at = line.find(kEntry); at != std::string_view::npos) {
      std::string_view name = line.substr(at + kEntry.size());
      current = std::string(name.substr(0, name.find('\'')));
      entries.push_back(current);
      functions[current];
    } else if (size_t at2 = line.find(kProperties); at2 != std::string_view::npos) {
      current = std::string(Trim(line.substr(at2 + kProperties.size())));
      functions[current];
    } else if (Contains(line, "bytes gmem")) {
      ApplyFigures(line.substr(line.find(':') + 1), module_wide);
    } else if (Contains(line, "bytes stack frame") ||
               (Contains(line, "Used ") && Contains(line, " registers"))) {
      if (current.empty()) continue;
      // "ptxas         .     0 bytes stack frame, ..." has no colon; "ptxas info    : Used" has.
      size_t colon = line.find(':');
      size_t start = colon == std::string_view::npos ? line.find('.') + 1 : colon + 1;
      ApplyFigures(line.substr(start), functions[current]);
    }
  }
  std::map<std::string, ResourceUsage> report;
  for (const std::string& name : entries) {
    ResourceUsage usage = functions[name];
    usage.constant_bytes += module_wide.constant_bytes;
    report[name] = usage;
  }
  return report;
}

}  // namespace cutune::compiler
