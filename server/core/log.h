// The daemon's structured log: one line per event, an event name and typed key/value fields,
// written as logfmt-style text or as one JSON object per line. Debian 12's abseil (20220623) has
// no absl/log, hence this small logger. Formatting is pure (FormatText, FormatJson) and tested on
// its own; Logger adds the level filter and writes each line with one write(2) under a mutex, so
// lines from different threads never interleave.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace cutune::log {

enum class Level { kDebug, kInfo, kWarning, kError };
enum class Format { kText, kJson };

std::string_view LevelName(Level level);  // "debug", "info", "warning", "error"
// INVALID_ARGUMENT naming the text and the accepted values.
absl::StatusOr<Level> ParseLevel(std::string_view text);
absl::StatusOr<Format> ParseFormat(std::string_view text);  // "text" | "json"

// One key/value pair. Keys are the program's own names (snake_case); values keep their type, so
// JSON gets numbers and booleans and text needs no guessing.
class Field {
 public:
  using Value = std::variant<std::string, int64_t, double, bool>;

  Field(std::string_view key, std::string_view value) : key_(key), value_(std::string(value)) {}
  Field(std::string_view key, const std::string& value) : key_(key), value_(value) {}
  Field(std::string_view key, const char* value) : key_(key), value_(std::string(value)) {}
  Field(std::string_view key, bool value) : key_(key), value_(value) {}
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Field(std::string_view key, T value)
      : key_(key), value_(static_cast<int64_t>(value)) {}
  template <typename T>
  requires std::is_floating_point_v<T> Field(std::string_view key, T value)
      : key_(key), value_(static_cast<double>(value)) {}

  std::string_view key() const { return key_; }
  const Value& value() const { return value_; }

 private:
  std::string key_;
  Value value_;
};

struct Record {
  std::chrono::system_clock::time_point time;
  Level level = Level::kInfo;
  std::string event;
  std::vector<Field> fields;
};

// "2026-12-01T17:55:12.123Z" (UTC, milliseconds).
std::string FormatTimestamp(std::chrono::system_clock::time_point time);

// `2026-12-01T17:55:12.123Z INFO job.finished job=job-000001-3f2a family=matmul best_us=12.5`:
// a value is quoted when it is empty or holds a space, '=', '"', '\' or a byte outside printable
// ASCII; inside quotes '"' and '\' are backslash-escaped, \n \r \t spelled so and other control
// bytes as \xNN (a line never breaks). Keys are reduced to [A-Za-z0-9_.-] ('_' for the rest).
// No trailing newline.
std::string FormatText(const Record& record);

// `{"ts":"...","level":"info","event":"job.finished","job":"...","best_us":12.5}`: numbers and
// booleans as JSON values (a non-finite number as null), strings escaped per RFC 8259 with
// invalid UTF-8 replaced by U+FFFD, so every line parses. No trailing newline.
std::string FormatJson(const Record& record);

// A JSON string literal (with the quotes) for any bytes: the escaping FormatJson uses.
std::string JsonQuote(std::string_view text);

class Logger {
 public:
  // Writes to `fd` (default stderr), which it does not own.
  explicit Logger(Format format = Format::kText, Level min_level = Level::kInfo, int fd = 2);

  bool Enabled(Level level) const { return level >= min_level_; }
  Format format() const { return format_; }

  void Log(Level level, std::string_view event, std::vector<Field> fields);
  void Debug(std::string_view event, std::vector<Field> fields = {}) {
    if (Enabled(Level::kDebug)) Log(Level::kDebug, event, std::move(fields));
  }
  void Info(std::string_view event, std::vector<Field> fields = {}) {
    Log(Level::kInfo, event, std::move(fields));
  }
  void Warning(std::string_view event, std::vector<Field> fields = {}) {
    Log(Level::kWarning, event, std::move(fields));
  }
  void Error(std::string_view event, std::vector<Field> fields = {}) {
    Log(Level::kError, event, std::move(fields));
  }

 private:
  const Format format_;
  const Level min_level_;
  const int fd_;
  std::mutex mu_;  // one line at a time, even when write(2) writes only part of one
};

}  // namespace cutune::log
