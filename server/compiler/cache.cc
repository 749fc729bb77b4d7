// On-disk compile cache. An entry file is "cutune-nvrtc-cache 1\n", the SHA-256 (hex) of the
// body, "\n", and the body: a CBOR map {key, ok, log, cubin (binary), resources}.
#include "server/compiler/cache.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/core/hash.h"
#include "server/core/strings.h"

namespace cutune::compiler {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kMagic = "cutune-nvrtc-cache 1\n";
constexpr size_t kHexDigestSize = 64;

bool IsContentKey(std::string_view key) {
  return key.size() == kHexDigestSize &&
         key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::optional<fs::path> AbsoluteFromEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  fs::path path(value);
  if (!path.is_absolute()) return std::nullopt;
  return path;
}

std::string Serialize(const CompileResult& result) {
  json resources = json::object();
  for (const auto& [name, usage] : result.resources) {
    resources[name] = {{"registers", usage.registers},
                       {"static_shared_bytes", usage.static_shared_bytes},
                       {"stack_bytes", usage.stack_bytes},
                       {"spill_store_bytes", usage.spill_store_bytes},
                       {"spill_load_bytes", usage.spill_load_bytes},
                       {"constant_bytes", usage.constant_bytes}};
  }
  json record = {
      {"key", result.key},
      {"ok", result.ok},
      {"log", result.log},
      {"cubin", json::binary(std::vector<uint8_t>(result.cubin.begin(), result.cubin.end()))},
      {"resources", std::move(resources)},
  };
  std::vector<uint8_t> cbor = json::to_cbor(record);
  std::string body(cbor.begin(), cbor.end());
  return absl::StrCat(ToAbsl(kMagic), Sha256Hex(body), "\n", body);
}

// nullopt when the bytes are not a whole, intact entry for `key`.
std::optional<CompileResult> Deserialize(std::string_view bytes, std::string_view key) {
  if (!bytes.starts_with(kMagic)) return std::nullopt;
  bytes.remove_prefix(kMagic.size());
  if (bytes.size() < kHexDigestSize + 1 || bytes[kHexDigestSize] != '\n') return std::nullopt;
  std::string_view digest = bytes.substr(0, kHexDigestSize);
  std::string_view body = bytes.substr(kHexDigestSize + 1);
  if (Sha256Hex(body) != digest) return std::nullopt;
  try {
    json record = json::from_cbor(body.begin(), body.end());
    CompileResult result;
    result.key = record.at("key").get<std::string>();
    if (result.key != key) return std::nullopt;
    result.ok = record.at("ok").get<bool>();
    result.log = record.at("log").get<std::string>();
    const json::binary_t& cubin = record.at("cubin").get_binary();
    result.cubin.assign(cubin.begin(), cubin.end());
    for (const auto& [name, usage] : record.at("resources").items()) {
      ResourceUsage& out = result.resources[name];
      out.registers = usage.at("registers").get<int>();
      out.static_shared_bytes = usage.at("static_shared_bytes").get<int>();
      out.stack_bytes = usage.at("stack_bytes").get<int>();
      out.spill_store_bytes = usage.at("spill_store_bytes").get<int>();
      out.spill_load_bytes = usage.at("spill_load_bytes").get<int>();
      out.constant_bytes = usage.at("constant_bytes").get<int>();
    }
    if (result.ok == result.cubin.empty()) return std::nullopt;
    return result;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// Unique among the threads and processes that may write the same entry at once.
fs::path TempPathFor(const fs::path& entry) {
  static std::atomic<uint64_t> counter = 0;
  return fs::path(absl::StrCat(entry.string(), ".tmp.", getpid(), ".",
                               std::hash<std::thread::id>()(std::this_thread::get_id()), ".",
                               counter.fetch_add(1)));
}

}  // namespace

absl::StatusOr<fs::path> DefaultCacheDirectory() {
  if (auto dir = AbsoluteFromEnv("CUTUNE_CACHE_DIR")) return *dir;
  if (auto xdg = AbsoluteFromEnv("XDG_CACHE_HOME")) return *xdg / "cutune" / "nvrtc";
  if (auto home = AbsoluteFromEnv("HOME")) return *home / ".cache" / "cutune" / "nvrtc";
  return absl::FailedPreconditionError(
      "no cache directory: set CUTUNE_CACHE_DIR, XDG_CACHE_HOME or HOME to an absolute path");
}

absl::StatusOr<CompileCache> CompileCache::Open(fs::path directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create cache directory ", directory.string(), ": ", error.message()));
  }
  return CompileCache(std::move(directory));
}

fs::path CompileCache::EntryPath(std::string_view key) const {
  // Two-character fan-out keeps directories small for sweeps of many thousands of candidates.
  std::string name(key);
  return directory_ / name.substr(0, 2) / (name + ".cubin");
}

CacheLookup CompileCache::Load(std::string_view key, CompileResult& result) const {
  if (!IsContentKey(key)) return CacheLookup::kMiss;
  std::ifstream in(EntryPath(key), std::ios::binary);
  if (!in) return CacheLookup::kMiss;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return CacheLookup::kCorrupt;
  std::optional<CompileResult> entry = Deserialize(bytes, key);
  if (!entry) return CacheLookup::kCorrupt;
  result = *std::move(entry);
  result.from_cache = true;
  result.compile_ms = 0;
  return CacheLookup::kHit;
}

absl::Status CompileCache::Store(const CompileResult& result) const {
  if (!IsContentKey(result.key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache key '", result.key, "' is not a SHA-256 hex digest"));
  }
  const fs::path entry = EntryPath(result.key);
  std::error_code error;
  fs::create_directories(entry.parent_path(), error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", entry.parent_path().string(), ": ", error.message()));
  }
  const fs::path temp = TempPathFor(entry);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    const std::string bytes = Serialize(result);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temp, error);
      return absl::InternalError(absl::StrCat("cannot write cache entry ", temp.string()));
    }
  }
  // No fsync: after a power loss an entry may read as empty or garbage, which the checksum turns
  // into a miss, so durability is not worth a sync per candidate.
  fs::rename(temp, entry, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return absl::InternalError(absl::StrCat("cannot rename ", temp.string(), " to ", entry.string(),
                                            ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompileResult> CachingCompiler::Compile(const CompileRequest& request) {
  if (!cache_) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return compiler::Compile(request);
  }
  const std::string key = ContentKey(request);
  CompileResult cached;
  switch (cache_->Load(key, cached)) {
    case CacheLookup::kHit:
      hits_.fetch_add(1, std::memory_order_relaxed);
      return cached;
    case CacheLookup::kCorrupt:
      corrupt_.fetch_add(1, std::memory_order_relaxed);
      break;
    case CacheLookup::kMiss:
      break;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<CompileResult> result = compiler::Compile(request);
  // Only results (successful or failed compilations) are cached, never errors: those say the
  // request or NVRTC is broken, not the source.
  if (result.ok() && !cache_->Store(*result).ok()) {
    store_failures_.fetch_add(1, std::memory_order_relaxed);
  }
  return result;
}

CachingCompiler::Stats CachingCompiler::stats() const {
  return Stats{hits_.load(), misses_.load(), corrupt_.load(), store_failures_.load()};
}

}  // namespace cutune::compiler
