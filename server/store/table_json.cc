// Strict JSON reading for tables: the parser with its duplicate-key and depth checks, and the
// typed getters and messages.
#include "server/store/table_json.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/strings.h"

namespace cutune::store::internal {

std::string Cut(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(ToAbsl(text.substr(0, end)), "...");
}

std::string Step(std::string_view key) { return Cut(key, 40); }

absl::Status Bad(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", path.empty() ? "/" : Cut(path, 400), ": ", Cut(what, 600)));
}

std::string Got(const Json& j) {
  std::string text;
  if (j.is_array()) {
    text = absl::StrCat("an array of ", j.size(), j.size() == 1 ? " element" : " elements");
  } else if (j.is_object()) {
    text = absl::StrCat("an object with ", j.size(), j.size() == 1 ? " key" : " keys");
  } else {
    text = Cut(j.dump(-1, ' ', false, Json::error_handler_t::replace), 37);
  }
  return absl::StrCat(", got ", text);
}

std::optional<int64_t> Int64Of(const Json& j) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

absl::Status CheckObject(const Json& j, const std::string& path,
                         std::initializer_list<std::string_view> required,
                         std::initializer_list<std::string_view> optional) {
  if (!j.is_object()) return Bad(path, absl::StrCat("expected an object", Got(j)));
  for (std::string_view key : required) {
    if (!j.contains(std::string(key))) {
      return Bad(absl::StrCat(path, "/", std::string(key)), "missing required field");
    }
  }
  for (const auto& [key, value] : j.items()) {
    bool known = std::find(required.begin(), required.end(), key) != required.end() ||
                 std::find(optional.begin(), optional.end(), key) != optional.end();
    if (!known) return Bad(absl::StrCat(path, "/", Step(key)), "unknown field");
  }
  return absl::OkStatus();
}

absl::Status CheckFields(const Json& j, const std::string& path,
                         const std::vector<std::string_view>& required,
                         const std::vector<std::string_view>& optional) {
  if (!j.is_object()) return Bad(path, absl::StrCat("expected an object", Got(j)));
  for (std::string_view key : required) {
    if (!j.contains(std::string(key))) {
      return Bad(absl::StrCat(path, "/", std::string(key)), "missing required field");
    }
  }
  for (const auto& [key, value] : j.items()) {
    bool known = std::find(required.begin(), required.end(), key) != required.end() ||
                 std::find(optional.begin(), optional.end(), key) != optional.end();
    if (!known) return Bad(absl::StrCat(path, "/", Step(key)), "unknown field");
  }
  return absl::OkStatus();
}

std::vector<std::string_view> Concat(std::initializer_list<std::string_view> a,
                                     std::initializer_list<std::string_view> b) {
  std::vector<std::string_view> out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

absl::StatusOr<std::string> GetString(const Json& obj, const std::string& path, const char* key,
                                      bool non_empty) {
  const Json& j = obj.at(key);
  std::string p = absl::StrCat(path, "/", key);
  if (!j.is_string()) return Bad(p, absl::StrCat("expected a string", Got(j)));
  if (non_empty && j.get_ref<const std::string&>().empty()) return Bad(p, "must not be empty");
  return j.get<std::string>();
}

absl::StatusOr<int64_t> GetInt(const Json& obj, const std::string& path, const char* key,
                               int64_t min, int64_t max) {
  const Json& j = obj.at(key);
  std::string p = absl::StrCat(path, "/", key);
  if (!j.is_number_integer()) return Bad(p, absl::StrCat("expected an integer", Got(j)));
  std::optional<int64_t> v = Int64Of(j);
  if (!v) return Bad(p, absl::StrCat("must be at most ", max, Got(j)));
  if (*v < min || *v > max) {
    return Bad(p, absl::StrCat("must be in [", min, ", ", max, "]", Got(j)));
  }
  return *v;
}

absl::StatusOr<double> GetNumber(const Json& obj, const std::string& path, const char* key,
                                 bool positive) {
  const Json& j = obj.at(key);
  std::string p = absl::StrCat(path, "/", key);
  if (!j.is_number()) return Bad(p, absl::StrCat("expected a number", Got(j)));
  double v = j.get<double>();
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
    return Bad(p,
               absl::StrCat(positive ? "expected a number > 0" : "expected a number >= 0", Got(j)));
  }
  return v;
}

namespace {

// Thrown from the parser callback to stop at the first container nested too deep.
struct TooDeep {
  std::string where;
};

}  // namespace

absl::StatusOr<Json> ParseJson(std::string_view text) {
  struct Frame {
    bool array = false;
    int64_t next_index = 0;
    std::set<std::string> keys;
    std::string key;
  };
  std::vector<Frame> stack;
  std::vector<std::string> path;
  std::string duplicate;
  auto parents = [&] {
    std::string out;
    for (const std::string& step : path) absl::StrAppend(&out, "/", step);
    return out;
  };
  // The pointer of the value being read: its parents, then its key or index.
  auto where = [&] {
    std::string out = parents();
    if (!stack.empty()) {
      const Frame& parent = stack.back();
      absl::StrAppend(&out, "/", parent.array ? absl::StrCat(parent.next_index) : parent.key);
    }
    return out;
  };
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        // `depth` counts the containers around this one.
        if (depth >= kMaxDepth) throw TooDeep{where()};
        if (!stack.empty()) {
          Frame& parent = stack.back();
          path.push_back(parent.array ? absl::StrCat(parent.next_index++) : parent.key);
        }
        stack.push_back({event == Json::parse_event_t::array_start, 0, {}, {}});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        stack.pop_back();
        if (!stack.empty()) path.pop_back();
        break;
      case Json::parse_event_t::key: {
        std::string key = parsed.get<std::string>();
        std::string step = Step(key);
        if (!stack.back().keys.insert(std::move(key)).second && duplicate.empty()) {
          duplicate = absl::StrCat(parents(), "/", step);
        }
        stack.back().key = std::move(step);
        break;
      }
      case Json::parse_event_t::value:
        if (!stack.empty() && stack.back().array) ++stack.back().next_index;
        break;
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), callback);
  } catch (const TooDeep& e) {
    return Bad(e.where, absl::StrCat("nested more than ", kMaxDepth,
                                     " levels deep (a table needs 8)"));
  } catch (const Json::parse_error& e) {
    size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return absl::InvalidArgumentError(absl::StrCat("table is not valid JSON at line ", line,
                                                   ", column ", end - line_start + 1, ": ",
                                                   Cut(e.what(), 300)));
  } catch (const Json::exception& e) {
    // Not a syntax error but a value the parser cannot hold (out_of_range 406: 1e400).
    return Bad(where(), Cut(e.what(), 300));
  }
  if (!duplicate.empty()) return Bad(duplicate, "key appears twice in one object");
  return j;
}

std::string Compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string SizeText(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes % kMiB == 0) return absl::StrCat(bytes / kMiB, " MiB");
  if (bytes >= kMiB) return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / kMiB);
  return absl::StrCat(bytes, " bytes");
}

}  // namespace cutune::store::internal
