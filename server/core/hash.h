// Content hashes: SHA-256 (OpenSSL) as lowercase hex. Used for kernel source hashes and the
// compile cache's keys, so two hosts agree on them.
#pragma once

#include <string>
#include <string_view>

namespace cutune {

std::string Sha256Hex(std::string_view data);

}  // namespace cutune
