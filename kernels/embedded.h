// The CUDA sources, embedded at build time from kernels/*.cu (see embed.cmake).
#pragma once

#include <string_view>

namespace cutune::kernels::embedded {

extern const std::string_view kTransposeSource;
extern const std::string_view kMatmulSource;
extern const std::string_view kSupportSource;

}  // namespace cutune::kernels::embedded
