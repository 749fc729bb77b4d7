#include "server/core/log.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/strings.h"

namespace cutune::log {
namespace {

constexpr std::string_view kLevelNames[] = {"debug", "info", "warning", "error"};
constexpr std::string_view kLevelWords[] = {"DEBUG", "INFO", "WARNING", "ERROR"};

std::string Key(std::string_view key) {
  if (key.empty()) return std::string(1, '_');
  std::string out(key);
  for (char& c : out) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == '-';
    if (!plain) c = '_';
  }
  return out;
}

bool NeedsQuotes(std::string_view value) {
  if (value.empty()) return true;
  for (unsigned char c : value) {
    if (c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\') return true;
  }
  return false;
}

// One ASCII byte of a quoted value: quote, backslash and the usual control characters by their
// escapes, other control bytes (they would break the line or the terminal) by `control` (a
// format of the byte), everything else as it is.
void AppendEscaped(std::string& out, unsigned char c, const absl::FormatSpec<int>& control) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      if (c < 0x20 || c == 0x7f) {
        absl::StrAppendFormat(&out, control, static_cast<int>(c));
      } else {
        out += static_cast<char>(c);
      }
  }
}

std::string TextValue(std::string_view value) {
  if (!NeedsQuotes(value)) return std::string(value);
  std::string out = "\"";
  for (unsigned char c : value) {
    AppendEscaped(out, c, "\\x%02x");
  }
  out += '"';
  return out;
}

// The length of the valid UTF-8 sequence starting at text[i], or 0 if it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t length = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2, min = 0x80, code = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3, min = 0x800, code = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4, min = 0x10000, code = c & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

std::string JsonValue(const Field::Value& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return JsonQuote(*text);
  if (const auto* integer = std::get_if<int64_t>(&value)) return absl::StrCat(*integer);
  if (const auto* real = std::get_if<double>(&value)) {
    return std::isfinite(*real) ? ShortestText(*real) : "null";
  }
  return std::get<bool>(value) ? "true" : "false";
}

std::string TextOf(const Field::Value& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return TextValue(*text);
  if (const auto* integer = std::get_if<int64_t>(&value)) return absl::StrCat(*integer);
  if (const auto* real = std::get_if<double>(&value)) return ShortestText(*real);
  return std::get<bool>(value) ? "true" : "false";
}

}  // namespace

std::string_view LevelName(Level level) { return kLevelNames[static_cast<int>(level)]; }

absl::StatusOr<Level> ParseLevel(std::string_view text) {
  for (int i = 0; i < 4; ++i) {
    if (text == kLevelNames[i]) return static_cast<Level>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown log level '", std::string(text),
                                                 "' (known: debug, info, warning, error)"));
}

absl::StatusOr<Format> ParseFormat(std::string_view text) {
  if (text == "text") return Format::kText;
  if (text == "json") return Format::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown log format '", std::string(text), "' (known: text, json)"));
}

std::string FormatTimestamp(std::chrono::system_clock::time_point time) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const auto seconds = static_cast<time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const int64_t millis = ms - static_cast<int64_t>(seconds) * 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                         utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

std::string JsonQuote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if (const size_t length = Utf8Length(text, i); length > 0) {
        out.append(text.substr(i, length));
        i += length;
      } else {
        out += "\\ufffd";
        ++i;
      }
      continue;
    }
    AppendEscaped(out, c, "\\u%04x");
    ++i;
  }
  out += '"';
  return out;
}

std::string FormatText(const Record& record) {
  std::string line =
      absl::StrCat(FormatTimestamp(record.time), " ",
                   ToAbsl(kLevelWords[static_cast<int>(record.level)]), " ", Key(record.event));
  for (const Field& field : record.fields) {
    absl::StrAppend(&line, " ", Key(field.key()), "=", TextOf(field.value()));
  }
  return line;
}

std::string FormatJson(const Record& record) {
  std::string line = absl::StrCat("{\"ts\":", JsonQuote(FormatTimestamp(record.time)),
                                  ",\"level\":", JsonQuote(LevelName(record.level)),
                                  ",\"event\":", JsonQuote(record.event));
  for (const Field& field : record.fields) {
    absl::StrAppend(&line, ",", JsonQuote(Key(field.key())), ":", JsonValue(field.value()));
  }
  line += '}';
  return line;
}

Logger::Logger(Format format, Level min_level, int fd)
    : format_(format), min_level_(min_level), fd_(fd) {}

void Logger::Log(Level level, std::string_view event, std::vector<Field> fields) {
  if (!Enabled(level)) return;
  Record record{std::chrono::system_clock::now(), level, std::string(event), std::move(fields)};
  std::string line = format_ == Format::kJson ? FormatJson(record) : FormatText(record);
  line += '\n';
  std::lock_guard lock(mu_);
  for (size_t written = 0; written < line.size();) {
    const ssize_t n = write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report a failing log: drop the line
    written += static_cast<size_t>(n);
  }
}

}  // namespace cutune::log
