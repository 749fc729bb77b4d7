// JSON for tuning tables, below the format: strict parsing (no repeated keys, bounded depth,
// errors located by JSON pointer or line and column), the typed field getters every table field
// goes through, and the INVALID_ARGUMENT messages they give ("table /devices/0/model: ...").
// None of these throws. Internal to server/store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace cutune::store::internal {

using Json = nlohmann::json;

inline constexpr int64_t kIntMax = 2147483647;

// At most `max` bytes of `text`, cut at a UTF-8 character boundary, "..." marking a cut.
std::string Cut(std::string_view text, size_t max);
// A key of the input as one step of a JSON pointer in a message: a 1 MB key must not make a
// 1 MB error (gRPC refuses trailers that large).
std::string Step(std::string_view key);
// INVALID_ARGUMENT "table <path>: <what>".
absl::Status Bad(std::string_view path, std::string_view what);
// What a value is, for "expected X, got Y" (", got ..."). Never recursive: containers are
// counted, scalars shown.
std::string Got(const Json& j);
// "12 bytes", "1.5 MiB", "64 MiB".
std::string SizeText(size_t bytes);

// The value of an integer that fits int64_t; nullopt for anything else (a float, a string, an
// unsigned number above INT64_MAX), so that no get<> can throw or wrap.
std::optional<int64_t> Int64Of(const Json& j);

// `j` is an object with every required key, and no key that is neither required nor optional.
absl::Status CheckObject(const Json& j, const std::string& path,
                         std::initializer_list<std::string_view> required,
                         std::initializer_list<std::string_view> optional = {});
absl::Status CheckFields(const Json& j, const std::string& path,
                         const std::vector<std::string_view>& required,
                         const std::vector<std::string_view>& optional = {});
std::vector<std::string_view> Concat(std::initializer_list<std::string_view> a,
                                     std::initializer_list<std::string_view> b);

// Typed members of `obj` (which must have `key`); errors name path/key.
absl::StatusOr<std::string> GetString(const Json& obj, const std::string& path, const char* key,
                                      bool non_empty);
absl::StatusOr<int64_t> GetInt(const Json& obj, const std::string& path, const char* key,
                               int64_t min, int64_t max);
// Finite and >= 0 (> 0 with `positive`).
absl::StatusOr<double> GetNumber(const Json& obj, const std::string& path, const char* key,
                                 bool positive);

// A valid table nests 8 levels (root, devices, a device, sweeps, a sweep, rows, a row, its
// params); anything much deeper is not a table, and is refused before it is built.
inline constexpr int kMaxDepth = 64;

// Parses JSON text, rejecting objects that repeat a key (nlohmann would keep the last one
// silently) and nesting deeper than kMaxDepth, and reporting syntax errors by line and column
// and other parser errors (a number out of range) by the JSON pointer of the value.
absl::StatusOr<Json> ParseJson(std::string_view text);

// Compact JSON; replaces invalid UTF-8 (a compiler message in a stored row's detail) rather than
// throwing on it.
std::string Compact(const Json& j);

}  // namespace cutune::store::internal
