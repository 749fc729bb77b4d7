// Resources read from a cubin itself (its ELF .nv.info attributes), for when NVRTC's log carries
// no ptxas report: some NVRTC builds return an empty log even with --ptxas-options=-v (seen on
// the H200 host). Registers and the stack frame per entry point; spills are only in the log.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/core/types.h"

namespace cutune::compiler {

// Registers (EIATTR_REGCOUNT) and stack frame bytes (EIATTR_FRAME_SIZE) per function symbol.
// INVALID_ARGUMENT when `cubin` is not a 64-bit little-endian ELF image.
absl::StatusOr<std::map<std::string, ResourceUsage>> ReadCubinResources(std::string_view cubin);

}  // namespace cutune::compiler
