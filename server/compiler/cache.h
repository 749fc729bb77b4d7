// Content-addressed on-disk cache of compile results (cubin, log, resource report), and the
// compiler that consults it. Failed compilations are cached too, so a known-bad candidate is not
// compiled again. Entries are written atomically and checksummed: a torn or corrupt entry reads
// as a miss.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/compiler/compiler.h"

namespace cutune::compiler {

// $CUTUNE_CACHE_DIR, else $XDG_CACHE_HOME/cutune/nvrtc, else $HOME/.cache/cutune/nvrtc. Empty or
// relative values are ignored (as the XDG spec asks); FAILED_PRECONDITION when none applies.
absl::StatusOr<std::filesystem::path> DefaultCacheDirectory();

enum class CacheLookup { kHit, kMiss, kCorrupt };

class CompileCache {
 public:
  // Creates `directory` if needed; fails when it cannot be created.
  static absl::StatusOr<CompileCache> Open(std::filesystem::path directory);

  const std::filesystem::path& directory() const { return directory_; }
  // Where the entry for `key` (a ContentKey) lives; it may not exist.
  std::filesystem::path EntryPath(std::string_view key) const;

  // Fills `result` on kHit (from_cache set, compile_ms 0). Safe to call from many threads and
  // processes at once.
  CacheLookup Load(std::string_view key, CompileResult& result) const;
  // Writes `result` under `result.key`: temp file + rename, so readers never see half an entry.
  absl::Status Store(const CompileResult& result) const;

 private:
  explicit CompileCache(std::filesystem::path directory) : directory_(std::move(directory)) {}
  std::filesystem::path directory_;
};

// Compiles through an optional cache. Thread-safe.
class CachingCompiler {
 public:
  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;          // includes corrupt entries
    int64_t corrupt = 0;         // entries found unreadable and recompiled
    int64_t store_failures = 0;  // results compiled but not written (the result is still returned)
  };

  explicit CachingCompiler(std::optional<CompileCache> cache = std::nullopt)
      : cache_(std::move(cache)) {}

  absl::StatusOr<CompileResult> Compile(const CompileRequest& request);

  const CompileCache* cache() const { return cache_ ? &*cache_ : nullptr; }
  Stats stats() const;

 private:
  std::optional<CompileCache> cache_;
  std::atomic<int64_t> hits_ = 0;
  std::atomic<int64_t> misses_ = 0;
  std::atomic<int64_t> corrupt_ = 0;
  std::atomic<int64_t> store_failures_ = 0;
};

}  // namespace cutune::compiler
