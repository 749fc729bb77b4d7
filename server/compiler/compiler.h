// NVRTC run-time compilation of kernel sources into cubins for one architecture, with the
// resource report ptxas prints (registers, shared memory, stack, spills). A failed compilation is
// a normal result that carries the log; only NVRTC misuse or internal failures are errors.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/types.h"

namespace cutune::compiler {

struct CompileRequest {
  std::string source{};
  std::string source_name = "kernel.cu";  // shown in the log
  std::vector<std::string> options{};     // one option per element, never split on spaces
  std::string arch = "sm_90";             // "sm_80", "sm_90", ...
};

struct CompileResult {
  bool ok = false;    // false: the source did not compile (see log)
  std::string log;    // NVRTC's log, always captured (ptxas' verbose report included)
  std::string cubin;  // binary image for `arch` when ok
  // Resources per kernel entry point, parsed from ptxas' verbose output.
  std::map<std::string, ResourceUsage> resources;
  double compile_ms = 0;  // time NVRTC took (0 when served from the cache)
  bool from_cache = false;
  std::string key;  // content address: hash of source, options, arch, NVRTC version
};

// "13.0": the NVRTC this process uses; part of every cache key and of stored provenance.
std::string NvrtcVersion();

// INVALID_ARGUMENT unless `arch` is "sm_XY" with a compute capability NVRTC supports.
absl::Status ValidateArch(std::string_view arch);

// The content address of a request: SHA-256 (hex) over the source, its name (it appears in the
// log), every option, the arch and the NVRTC version, each part length-prefixed.
std::string ContentKey(const CompileRequest& request);

// Compiles without any cache. The arch comes from `request.arch` only (an arch option in
// `request.options` is INVALID_ARGUMENT); ptxas' verbose report is always requested.
absl::StatusOr<CompileResult> Compile(const CompileRequest& request);

// Parses ptxas -v lines ("Compiling entry function 'x' for 'sm_90'", "Function properties for
// x: N bytes stack frame, N bytes spill stores, N bytes spill loads", "Used N registers, used N
// barriers, N bytes smem, N bytes cmem[0]") into a report per entry point. Non-entry functions
// are left out; module-wide constant banks ("0 bytes gmem, 64 bytes cmem[3]") count for every
// entry point, and stack_bytes includes callees ("cumulative stack size") when ptxas reports it
// (it does not under -rdc=true, where callees are compiled apart from the entry).
std::map<std::string, ResourceUsage> ParsePtxasReport(std::string_view log);

}  // namespace cutune::compiler
