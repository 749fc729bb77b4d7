// What a build of cutune is: its release (one home: CMake's project() version) and the level of
// the cutune.v1 API it serves and speaks. `cutune --version`, `cutuned --version` and the
// GetServerInfo RPC say both.
#pragma once

#include <string_view>

namespace cutune {

// CMake's PROJECT_VERSION, e.g. "0.1.0".
std::string_view Version();

// The level of cutune.v1 (proto/cutune/v1/cutune.proto). It grows by one with every RPC, field
// or value a client may rely on, so a client can tell whether a daemon has what it needs;
// docs/api.md ("API levels") lists what each level added. Level 0: daemons without
// GetServerInfo.
inline constexpr int kApiLevel = 2;

}  // namespace cutune
