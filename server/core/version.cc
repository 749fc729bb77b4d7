#include "server/core/version.h"

namespace cutune {

// CUTUNE_VERSION is defined for this file only (server/core/CMakeLists.txt), so that a new
// release number recompiles one file.
std::string_view Version() { return CUTUNE_VERSION; }

}  // namespace cutune
