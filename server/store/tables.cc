// Tuning table export, validation, import and diff. See docs/tables.md for the format.
#include "server/store/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <map>
#include <new>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "server/core/strings.h"

namespace cutune::store {
namespace {

using Json = nlohmann::json;

// Six significant digits: more than timing noise resolves, few enough that re-measuring the
// same winner rarely changes the text. Rounding twice gives the same double, which makes
// export -> import -> export byte-identical.
double Round(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return std::strtod(buf, nullptr);
}

std::string FormatTime(int64_t ms) {
  int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         static_cast<int>(ms - secs * 1000));
}

std::optional<int64_t> ParseTime(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  char z = 0;
  if (text.size() != 24 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &z) != 8 ||
      z != 'Z') {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t ms = int64_t{timegm(&tm)} * 1000 + millis;
  // Only the canonical spelling is accepted (no 25:00, no Feb 30).
  if (FormatTime(ms) != text) return std::nullopt;
  return ms;
}

Json ShapeJson(const Shape& shape) { return Json(shape); }

Json ParamsJson(const Params& params) {
  Json out = Json::object();
  for (const auto& [name, value] : params) out[name] = value;
  return out;
}

Json ResourcesJson(const ResourceUsage& r) {
  return Json{{"registers", r.registers},
              {"static_shared_bytes", r.static_shared_bytes},
              {"stack_bytes", r.stack_bytes},
              {"spill_store_bytes", r.spill_store_bytes},
              {"spill_load_bytes", r.spill_load_bytes},
              {"constant_bytes", r.constant_bytes}};
}

// Fields shared by winners and rows.
void PutMeasurement(const Measurement& m, Json& out) {
  out["params"] = ParamsJson(m.params);
  out["detail"] = m.detail;
  out["resources"] = ResourcesJson(m.resources);
  out["samples"] = m.timing.samples;
  out["time_us"] = Round(m.timing.median_us);
  out["min_us"] = Round(m.timing.min_us);
  out["rel_spread"] = Round(m.timing.rel_spread);
  out["gbps"] = Round(m.gbps);
  out["tflops"] = Round(m.tflops);
  out["percent_of_reference"] = Round(m.percent_of_reference);
  out["compile_ms"] = Round(m.compile_ms);
}

void PutProvenance(const Provenance& p, Json& out) {
  out["source_hash"] = p.source_hash;
  out["space_version"] = p.space_version;
  out["driver_version"] = p.driver_version;
  out["nvrtc_version"] = p.nvrtc_version;
}

Json ReferenceJson(const Reference& r) {
  return Json{{"name", r.name}, {"time_us", Round(r.time_us)}};
}

auto ProblemOrder(const std::string& family, DType dtype, const Shape& shape) {
  return std::make_tuple(std::cref(family), DTypeName(dtype), std::cref(shape));
}

// --- validation -------------------------------------------------------------------------------

// At most `max` bytes of `text`, cut at a UTF-8 character boundary, "..." marking a cut.
std::string Cut(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(ToAbsl(text.substr(0, end)), "...");
}

// A key of the input as one step of a JSON pointer in a message: a 1 MB key must not make a
// 1 MB error (gRPC refuses trailers that large).
std::string Step(std::string_view key) { return Cut(key, 40); }

absl::Status Bad(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", path.empty() ? "/" : Cut(path, 400), ": ", Cut(what, 600)));
}

// What a value is, for "expected X, got Y". Never recursive (nlohmann's dump is, and a deep
// value would overflow the stack): containers are counted, scalars shown.
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

// The value of an integer that fits int64_t; nullopt for anything else (a float, a string, an
// unsigned number above INT64_MAX), so that no get<> can throw or wrap.
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
                         std::initializer_list<std::string_view> optional = {}) {
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

constexpr int64_t kIntMax = 2147483647;

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

absl::StatusOr<int64_t> GetTime(const Json& obj, const std::string& path, const char* key) {
  absl::StatusOr<std::string> text = GetString(obj, path, key, true);
  if (!text.ok()) return text.status();
  std::optional<int64_t> ms = ParseTime(*text);
  if (!ms) {
    return Bad(
        absl::StrCat(path, "/", key),
        absl::StrCat("expected a UTC time like 2025-01-31T12:00:00.000Z, got \"", *text, "\""));
  }
  return *ms;
}

absl::StatusOr<Shape> GetShape(const Json& obj, const std::string& path) {
  const Json& j = obj.at("shape");
  std::string p = path + "/shape";
  if (!j.is_array() || j.empty()) {
    return Bad(p, absl::StrCat("expected a non-empty array of positive integers", Got(j)));
  }
  Shape shape;
  for (size_t i = 0; i < j.size(); ++i) {
    std::optional<int64_t> d = Int64Of(j[i]);
    if (!d && j[i].is_number_integer()) {
      return Bad(absl::StrCat(p, "/", i), absl::StrCat("must be at most ", INT64_MAX, Got(j[i])));
    }
    if (!d || *d <= 0) {
      return Bad(absl::StrCat(p, "/", i), absl::StrCat("expected a positive integer", Got(j[i])));
    }
    shape.push_back(*d);
  }
  return shape;
}

absl::StatusOr<Params> GetParams(const Json& obj, const std::string& path) {
  const Json& j = obj.at("params");
  std::string p = path + "/params";
  if (!j.is_object()) return Bad(p, absl::StrCat("expected an object of integers", Got(j)));
  Params params;
  for (const auto& [name, value] : j.items()) {
    bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!name_ok) {
      return Bad(absl::StrCat(p, "/", Step(name)), "parameter names are [A-Za-z0-9_]+");
    }
    std::optional<int64_t> v = Int64Of(value);
    if (!v) {
      return Bad(absl::StrCat(p, "/", name),
                 absl::StrCat(value.is_number_integer() ? "must be at most 9223372036854775807"
                                                        : "expected an integer",
                              Got(value)));
    }
    params[name] = *v;
  }
  return params;
}

absl::StatusOr<Provenance> GetProvenance(const Json& obj, const std::string& path) {
  Provenance p;
  absl::StatusOr<std::string> hash = GetString(obj, path, "source_hash", true);
  if (!hash.ok()) return hash.status();
  absl::StatusOr<int64_t> space = GetInt(obj, path, "space_version", 0, kIntMax);
  if (!space.ok()) return space.status();
  absl::StatusOr<int64_t> driver = GetInt(obj, path, "driver_version", 0, kIntMax);
  if (!driver.ok()) return driver.status();
  absl::StatusOr<std::string> nvrtc = GetString(obj, path, "nvrtc_version", false);
  if (!nvrtc.ok()) return nvrtc.status();
  p.source_hash = *hash;
  p.space_version = static_cast<int>(*space);
  p.driver_version = static_cast<int>(*driver);
  p.nvrtc_version = *nvrtc;
  return p;
}

absl::StatusOr<Reference> GetReference(const Json& obj, const std::string& path) {
  std::string p = path + "/reference";
  const Json& j = obj.at("reference");
  if (absl::Status s = CheckObject(j, p, {"name", "time_us"}); !s.ok()) return s;
  absl::StatusOr<std::string> name = GetString(j, p, "name", false);
  if (!name.ok()) return name.status();
  absl::StatusOr<double> us = GetNumber(j, p, "time_us", false);
  if (!us.ok()) return us.status();
  return Reference{*name, *us};
}

// Reads the fields PutMeasurement writes (plus "outcome" for rows).
absl::StatusOr<Measurement> GetMeasurement(const Json& obj, const std::string& path,
                                           bool has_outcome) {
  Measurement m;
  if (has_outcome) {
    absl::StatusOr<std::string> name = GetString(obj, path, "outcome", true);
    if (!name.ok()) return name.status();
    absl::StatusOr<Outcome> outcome = ParseOutcome(*name);
    if (!outcome.ok()) return Bad(path + "/outcome", ToStd(outcome.status().message()));
    m.outcome = *outcome;
  }
  absl::StatusOr<Params> params = GetParams(obj, path);
  if (!params.ok()) return params.status();
  m.params = *std::move(params);
  absl::StatusOr<std::string> detail = GetString(obj, path, "detail", false);
  if (!detail.ok()) return detail.status();
  m.detail = *std::move(detail);

  std::string rp = path + "/resources";
  const Json& r = obj.at("resources");
  if (absl::Status s = CheckObject(r, rp,
                                   {"registers", "static_shared_bytes", "stack_bytes",
                                    "spill_store_bytes", "spill_load_bytes", "constant_bytes"});
      !s.ok()) {
    return s;
  }
  std::pair<const char*, int*> ints[] = {{"registers", &m.resources.registers},
                                         {"static_shared_bytes", &m.resources.static_shared_bytes},
                                         {"stack_bytes", &m.resources.stack_bytes},
                                         {"spill_store_bytes", &m.resources.spill_store_bytes},
                                         {"spill_load_bytes", &m.resources.spill_load_bytes},
                                         {"constant_bytes", &m.resources.constant_bytes}};
  for (auto& [key, field] : ints) {
    absl::StatusOr<int64_t> v = GetInt(r, rp, key, 0, kIntMax);
    if (!v.ok()) return v.status();
    *field = static_cast<int>(*v);
  }
  bool ok = m.outcome == Outcome::kOk;
  absl::StatusOr<int64_t> samples = GetInt(obj, path, "samples", ok ? 1 : 0, kIntMax);
  if (!samples.ok()) return samples.status();
  m.timing.samples = static_cast<int>(*samples);
  std::pair<const char*, double*> numbers[] = {{"time_us", &m.timing.median_us},
                                               {"min_us", &m.timing.min_us},
                                               {"rel_spread", &m.timing.rel_spread},
                                               {"gbps", &m.gbps},
                                               {"tflops", &m.tflops},
                                               {"percent_of_reference", &m.percent_of_reference},
                                               {"compile_ms", &m.compile_ms}};
  for (auto& [key, field] : numbers) {
    bool positive = ok && std::string_view(key) == "time_us";
    absl::StatusOr<double> v = GetNumber(obj, path, key, positive);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  return m;
}

const std::initializer_list<std::string_view> kMeasurementFields = {
    "params",    "detail",     "resources", "samples", "time_us",
    "min_us",    "rel_spread", "gbps",      "tflops",  "percent_of_reference",
    "compile_ms"};

std::vector<std::string_view> Concat(std::initializer_list<std::string_view> a,
                                     std::initializer_list<std::string_view> b) {
  std::vector<std::string_view> out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

absl::Status CheckFields(const Json& j, const std::string& path,
                         const std::vector<std::string_view>& required) {
  if (!j.is_object()) return Bad(path, absl::StrCat("expected an object", Got(j)));
  for (std::string_view key : required) {
    if (!j.contains(std::string(key))) {
      return Bad(absl::StrCat(path, "/", std::string(key)), "missing required field");
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(required.begin(), required.end(), key) == required.end()) {
      return Bad(absl::StrCat(path, "/", Step(key)), "unknown field");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFamily(const std::string& family, const std::string& path,
                         const std::set<std::string>& known) {
  if (!known.empty() && !known.contains(family)) {
    return Bad(path + "/family", absl::StrCat("unknown kernel family \"", family,
                                              "\" (known: ", absl::StrJoin(known, ", "), ")"));
  }
  return absl::OkStatus();
}

// What a winner and a sweep entry are both about: family, dtype, shape and provenance.
struct ProblemFields {
  std::string family;
  DType dtype = DType::kF32;
  Shape shape;
  Provenance provenance;
};

absl::StatusOr<ProblemFields> GetProblemFields(const Json& e, const std::string& path,
                                               const std::set<std::string>& known_families) {
  ProblemFields out;
  absl::StatusOr<std::string> family = GetString(e, path, "family", true);
  if (!family.ok()) return family.status();
  if (absl::Status s = CheckFamily(*family, path, known_families); !s.ok()) return s;
  out.family = *family;
  absl::StatusOr<std::string> dtype_name = GetString(e, path, "dtype", true);
  if (!dtype_name.ok()) return dtype_name.status();
  absl::StatusOr<DType> dtype = ParseDType(*dtype_name);
  if (!dtype.ok() || DTypeName(*dtype) != *dtype_name) {
    return Bad(path + "/dtype", absl::StrCat("unsupported dtype \"", *dtype_name, "\" (f32)"));
  }
  out.dtype = *dtype;
  absl::StatusOr<Shape> shape = GetShape(e, path);
  if (!shape.ok()) return shape.status();
  out.shape = *std::move(shape);
  absl::StatusOr<Provenance> prov = GetProvenance(e, path);
  if (!prov.ok()) return prov.status();
  out.provenance = *std::move(prov);
  return out;
}

// A valid table nests 8 levels (root, devices, a device, sweeps, a sweep, rows, a row, its
// params); anything much deeper is not a table, and is refused before it is built.
constexpr int kMaxDepth = 64;

// Thrown from the parser callback to stop at the first container nested too deep.
struct TooDeep {
  std::string where;
};

// Parses JSON text, rejecting objects that repeat a key (nlohmann would keep the last one
// silently) and nesting deeper than kMaxDepth, and reporting syntax errors by line and column
// and other parser errors (a number out of range) by the JSON pointer of the value.
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

// --- layout -----------------------------------------------------------------------------------

// Compact JSON; replaces invalid UTF-8 (a compiler message in a stored row's detail) rather than
// throwing on it.
std::string Compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

bool HoldsContainer(const Json& j) {
  return std::any_of(j.begin(), j.end(), [](const Json& e) { return e.is_structured(); });
}

// The table layout (docs/tables.md): indented by two spaces like dump(2), but each element of
// `winners` and `rows` on one compact line, so that a changed winner is a one-line diff, and a
// container without containers inside (a shape, a reference) on its member's line. Recursion is
// bounded by the table's own structure: this only prints what ExportTable built.
void Layout(const Json& j, int indent, bool one_line_elements, std::string& out) {
  if (!j.is_structured() || j.empty() || (!one_line_elements && !HoldsContainer(j))) {
    out += Compact(j);
    return;
  }
  const std::string pad(indent + 2, ' ');
  out += j.is_array() ? "[\n" : "{\n";
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it != j.begin()) out += ",\n";
    out += pad;
    if (j.is_object()) absl::StrAppend(&out, Compact(Json(it.key())), ": ");
    if (one_line_elements) {
      out += Compact(*it);
    } else {
      Layout(*it, indent + 2, j.is_object() && (it.key() == "winners" || it.key() == "rows"), out);
    }
  }
  absl::StrAppend(&out, "\n", std::string(indent, ' '), j.is_array() ? "]" : "}");
}

std::string SizeText(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes % kMiB == 0) return absl::StrCat(bytes / kMiB, " MiB");
  if (bytes >= kMiB) return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / kMiB);
  return absl::StrCat(bytes, " bytes");
}

}  // namespace

absl::StatusOr<std::string> ExportTable(Store& store, const ExportOptions& options) {
  absl::StatusOr<std::vector<DeviceModel>> devices = store.ListDeviceModels();
  if (!devices.ok()) return devices.status();
  absl::StatusOr<std::vector<Winner>> winners = store.ListWinners(options.device_model);
  if (!winners.ok()) return winners.status();
  std::vector<SweepWithRows> sweeps;
  if (options.include_rows) {
    absl::StatusOr<std::vector<SweepWithRows>> listed =
        store.ListFinishedSweeps(options.device_model);
    if (!listed.ok()) return listed.status();
    sweeps = *std::move(listed);
  }
  if (!options.device_model.empty() &&
      std::none_of(devices->begin(), devices->end(),
                   [&](const DeviceModel& d) { return d.name == options.device_model; })) {
    return absl::NotFoundError(absl::StrCat("no device model ", Quoted(options.device_model)));
  }
  std::sort(winners->begin(), winners->end(), [](const Winner& a, const Winner& b) {
    return std::tuple_cat(ProblemOrder(a.family, a.dtype, a.shape),
                          std::tie(a.provenance.source_hash)) <
           std::tuple_cat(ProblemOrder(b.family, b.dtype, b.shape),
                          std::tie(b.provenance.source_hash));
  });
  std::sort(sweeps.begin(), sweeps.end(), [](const SweepWithRows& a, const SweepWithRows& b) {
    const SweepInfo& x = a.info;
    const SweepInfo& y = b.info;
    return std::tuple_cat(
               ProblemOrder(x.family, x.dtype, x.shape),
               std::tie(x.started_at_ms, x.provenance.source_hash, x.provenance.space_version)) <
           std::tuple_cat(
               ProblemOrder(y.family, y.dtype, y.shape),
               std::tie(y.started_at_ms, y.provenance.source_hash, y.provenance.space_version));
  });

  Json devices_json = Json::array();
  for (const DeviceModel& d : *devices) {  // already ordered by name
    if (!options.device_model.empty() && d.name != options.device_model) continue;
    Json dev{{"model", d.name},
             {"cc_major", d.cc_major},
             {"cc_minor", d.cc_minor},
             {"sm_count", d.sm_count},
             {"total_memory_bytes", d.total_memory_bytes}};
    Json winners_json = Json::array();
    for (const Winner& w : *winners) {
      if (w.device.name != d.name) continue;
      Json e{{"family", w.family},
             {"dtype", std::string(DTypeName(w.dtype))},
             {"shape", ShapeJson(w.shape)},
             {"reference", ReferenceJson(w.reference)},
             {"measured_at", FormatTime(w.measured_at_ms)}};
      PutMeasurement(w.measurement, e);
      PutProvenance(w.provenance, e);
      winners_json.push_back(std::move(e));
    }
    // Models that only appear as GPUs seen, with nothing tuned, are still listed: the table
    // says "this model, nothing tuned" rather than leaving the reader to guess.
    dev["winners"] = std::move(winners_json);
    if (options.include_rows) {
      Json sweeps_json = Json::array();
      for (const SweepWithRows& s : sweeps) {
        if (s.info.device_model != d.name) continue;
        Json e{{"family", s.info.family},
               {"dtype", std::string(DTypeName(s.info.dtype))},
               {"shape", ShapeJson(s.info.shape)},
               {"status", std::string(SweepStatusName(s.info.status))},
               {"started_at", FormatTime(s.info.started_at_ms)},
               {"finished_at", FormatTime(s.info.finished_at_ms.value_or(0))},
               {"reference", ReferenceJson(s.info.reference)},
               {"request", s.info.request_json}};
        PutProvenance(s.info.provenance, e);
        Json rows = Json::array();
        for (const StoredRow& r : s.rows) {
          Json row{{"outcome", std::string(OutcomeName(r.measurement.outcome))},
                   {"measured_at", FormatTime(r.measured_at_ms)}};
          PutMeasurement(r.measurement, row);
          rows.push_back(std::move(row));
        }
        e["rows"] = std::move(rows);
        sweeps_json.push_back(std::move(e));
      }
      dev["sweeps"] = std::move(sweeps_json);
    }
    devices_json.push_back(std::move(dev));
  }
  Json table{{"format", std::string(kTableFormat)},
             {"version", kTableVersion},
             {"devices", std::move(devices_json)}};
  std::string out;
  Layout(table, 0, false, out);
  out += "\n";
  if (out.size() > options.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the table is ", SizeText(out.size()), ", more than the ", SizeText(options.max_bytes),
        " a table may have; export one device model or without rows"));
  }
  return out;
}

namespace {

// The validator's verdict on an entry at `path`: its problem, then (unless null) its parameters.
absl::Status CheckEntry(const EntryValidator& validator, const std::string& family,
                        const Shape& shape, const Params* params, const std::string& path) {
  if (validator.problem) {
    if (absl::Status s = validator.problem(family, shape); !s.ok()) {
      return Bad(path + "/shape", ToStd(s.message()));
    }
  }
  if (params != nullptr && validator.params) {
    if (absl::Status s = validator.params(family, *params); !s.ok()) {
      return Bad(path + "/params", ToStd(s.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ImportBatch> ParseTableJson(std::string_view json_text,
                                           const std::set<std::string>& known_families,
                                           const EntryValidator& validator) {
  absl::StatusOr<Json> parsed = ParseJson(json_text);
  if (!parsed.ok()) return parsed.status();
  const Json& root = *parsed;
  if (!root.is_object()) return Bad("", absl::StrCat("expected an object", Got(root)));
  // Format and version first, so a file of another kind or version gets that answer rather
  // than a complaint about some field.
  if (!root.contains("format") || root["format"] != std::string(kTableFormat)) {
    return Bad("/format", absl::StrCat("expected \"", ToAbsl(kTableFormat), "\"",
                                       root.contains("format") ? Got(root["format"]) : ""));
  }
  if (!root.contains("version") || Int64Of(root["version"]) != kTableVersion) {
    return Bad("/version",
               absl::StrCat("unsupported table version (this cutune reads version ", kTableVersion,
                            ")", root.contains("version") ? Got(root["version"]) : ""));
  }
  if (absl::Status s = CheckObject(root, "", {"format", "version", "devices"}); !s.ok()) return s;
  const Json& devices = root["devices"];
  if (!devices.is_array()) return Bad("/devices", absl::StrCat("expected an array", Got(devices)));

  ImportBatch batch;
  std::map<std::string, std::string> device_paths;
  std::map<std::tuple<std::string, std::string, std::string, Shape, std::string>, std::string>
      winner_paths;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::string dp = absl::StrCat("/devices/", d);
    const Json& dev = devices[d];
    if (absl::Status s = CheckObject(
            dev, dp, {"model", "cc_major", "cc_minor", "sm_count", "total_memory_bytes", "winners"},
            {"sweeps"});
        !s.ok()) {
      return s;
    }
    DeviceModel model;
    absl::StatusOr<std::string> name = GetString(dev, dp, "model", true);
    if (!name.ok()) return name.status();
    model.name = *name;
    absl::StatusOr<int64_t> cc_major = GetInt(dev, dp, "cc_major", 1, 99);
    if (!cc_major.ok()) return cc_major.status();
    absl::StatusOr<int64_t> cc_minor = GetInt(dev, dp, "cc_minor", 0, 99);
    if (!cc_minor.ok()) return cc_minor.status();
    absl::StatusOr<int64_t> sms = GetInt(dev, dp, "sm_count", 0, kIntMax);
    if (!sms.ok()) return sms.status();
    absl::StatusOr<int64_t> memory = GetInt(dev, dp, "total_memory_bytes", 0, INT64_MAX);
    if (!memory.ok()) return memory.status();
    model.cc_major = static_cast<int>(*cc_major);
    model.cc_minor = static_cast<int>(*cc_minor);
    model.sm_count = static_cast<int>(*sms);
    model.total_memory_bytes = *memory;
    if (auto [it, inserted] = device_paths.emplace(model.name, dp); !inserted) {
      return Bad(dp + "/model", absl::StrCat("device model \"", model.name,
                                             "\" is listed twice (first at ", it->second, ")"));
    }
    batch.devices.push_back(model);

    const Json& winners = dev["winners"];
    if (!winners.is_array()) {
      return Bad(dp + "/winners", absl::StrCat("expected an array", Got(winners)));
    }
    for (size_t i = 0; i < winners.size(); ++i) {
      std::string wp = absl::StrCat(dp, "/winners/", i);
      const Json& e = winners[i];
      if (absl::Status s =
              CheckFields(e, wp,
                          Concat(kMeasurementFields, {"family", "dtype", "shape", "reference",
                                                      "measured_at", "source_hash", "space_version",
                                                      "driver_version", "nvrtc_version"}));
          !s.ok()) {
        return s;
      }
      Winner w;
      w.device = model;
      absl::StatusOr<ProblemFields> problem = GetProblemFields(e, wp, known_families);
      if (!problem.ok()) return problem.status();
      w.family = std::move(problem->family);
      w.dtype = problem->dtype;
      w.shape = std::move(problem->shape);
      w.provenance = std::move(problem->provenance);
      absl::StatusOr<Measurement> m = GetMeasurement(e, wp, /*has_outcome=*/false);
      if (!m.ok()) return m.status();
      w.measurement = *std::move(m);
      absl::StatusOr<Reference> ref = GetReference(e, wp);
      if (!ref.ok()) return ref.status();
      w.reference = *std::move(ref);
      absl::StatusOr<int64_t> at = GetTime(e, wp, "measured_at");
      if (!at.ok()) return at.status();
      w.measured_at_ms = *at;
      if (absl::Status s = CheckEntry(validator, w.family, w.shape, &w.measurement.params, wp);
          !s.ok()) {
        return s;
      }
      auto key = std::make_tuple(model.name, w.family, w.provenance.source_hash, w.shape,
                                 std::string(DTypeName(w.dtype)));
      if (auto [it, inserted] = winner_paths.emplace(key, wp); !inserted) {
        return Bad(wp, absl::StrCat("duplicate winner for ", w.family, " ", FormatShape(w.shape),
                                    " ", ToAbsl(DTypeName(w.dtype)), " source ",
                                    w.provenance.source_hash, " (first at ", it->second, ")"));
      }
      batch.winners.push_back(std::move(w));
      batch.winner_origins.push_back(wp);
    }

    if (!dev.contains("sweeps")) continue;
    const Json& sweeps = dev["sweeps"];
    if (!sweeps.is_array())
      return Bad(dp + "/sweeps", absl::StrCat("expected an array", Got(sweeps)));
    std::map<std::tuple<std::string, std::string, int, Shape, std::string, int64_t>, std::string>
        sweep_paths;
    for (size_t i = 0; i < sweeps.size(); ++i) {
      std::string sp = absl::StrCat(dp, "/sweeps/", i);
      const Json& e = sweeps[i];
      if (absl::Status s =
              CheckObject(e, sp,
                          {"family", "dtype", "shape", "status", "started_at", "finished_at",
                           "reference", "request", "rows", "source_hash", "space_version",
                           "driver_version", "nvrtc_version"});
          !s.ok()) {
        return s;
      }
      SweepWithRows sweep;
      SweepInfo& info = sweep.info;
      info.device_model = model.name;
      absl::StatusOr<ProblemFields> problem = GetProblemFields(e, sp, known_families);
      if (!problem.ok()) return problem.status();
      info.family = std::move(problem->family);
      info.dtype = problem->dtype;
      info.shape = std::move(problem->shape);
      info.provenance = std::move(problem->provenance);
      if (absl::Status s = CheckEntry(validator, info.family, info.shape, nullptr, sp); !s.ok()) {
        return s;
      }
      absl::StatusOr<std::string> status_name = GetString(e, sp, "status", true);
      if (!status_name.ok()) return status_name.status();
      absl::StatusOr<SweepStatus> status = ParseSweepStatus(*status_name);
      if (!status.ok() || *status == SweepStatus::kRunning) {
        return Bad(sp + "/status", absl::StrCat("expected succeeded, failed or cancelled, got \"",
                                                *status_name, "\""));
      }
      info.status = *status;
      absl::StatusOr<int64_t> started = GetTime(e, sp, "started_at");
      if (!started.ok()) return started.status();
      absl::StatusOr<int64_t> finished = GetTime(e, sp, "finished_at");
      if (!finished.ok()) return finished.status();
      if (*finished < *started) return Bad(sp + "/finished_at", "earlier than started_at");
      info.started_at_ms = *started;
      info.finished_at_ms = *finished;
      absl::StatusOr<Reference> ref = GetReference(e, sp);
      if (!ref.ok()) return ref.status();
      info.reference = *std::move(ref);
      absl::StatusOr<std::string> request = GetString(e, sp, "request", false);
      if (!request.ok()) return request.status();
      info.request_json = *std::move(request);
      auto key =
          std::make_tuple(info.family, info.provenance.source_hash, info.provenance.space_version,
                          info.shape, std::string(DTypeName(info.dtype)), info.started_at_ms);
      if (auto [it, inserted] = sweep_paths.emplace(key, sp); !inserted) {
        return Bad(sp, absl::StrCat("duplicate sweep (same problem, kernel and start time as ",
                                    it->second, ")"));
      }
      const Json& rows = e["rows"];
      if (!rows.is_array()) return Bad(sp + "/rows", absl::StrCat("expected an array", Got(rows)));
      std::map<std::string, std::string> row_paths;
      for (size_t r = 0; r < rows.size(); ++r) {
        std::string rp = absl::StrCat(sp, "/rows/", r);
        if (absl::Status s =
                CheckFields(rows[r], rp, Concat(kMeasurementFields, {"outcome", "measured_at"}));
            !s.ok()) {
          return s;
        }
        absl::StatusOr<Measurement> m = GetMeasurement(rows[r], rp, /*has_outcome=*/true);
        if (!m.ok()) return m.status();
        absl::StatusOr<int64_t> at = GetTime(rows[r], rp, "measured_at");
        if (!at.ok()) return at.status();
        if (validator.params) {
          if (absl::Status s = validator.params(info.family, m->params); !s.ok()) {
            return Bad(rp + "/params", ToStd(s.message()));
          }
        }
        if (auto [it, inserted] = row_paths.emplace(FormatParams(m->params), rp); !inserted) {
          return Bad(rp + "/params",
                     absl::StrCat("candidate ", it->first,
                                  " appears twice in this sweep (first at ", it->second, ")"));
        }
        sweep.rows.push_back({0, *std::move(m), *at});
      }
      batch.sweeps.push_back(std::move(sweep));
      batch.sweep_origins.push_back(sp);
    }
  }
  return batch;
}

}  // namespace

absl::StatusOr<ImportBatch> ParseTable(std::string_view json_text,
                                       const std::set<std::string>& known_families,
                                       const EntryValidator& validator) {
  if (json_text.size() > kMaxTableBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the table is ", SizeText(json_text.size()), ", more than the ",
                     SizeText(kMaxTableBytes), " a table may have"));
  }
  // The checks above are meant to leave no nlohmann call that throws; this is the guarantee.
  try {
    return ParseTableJson(json_text, known_families, validator);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("table cannot be read: ", Cut(e.what(), 300)));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("table is too large to hold in memory");
  }
}

absl::StatusOr<ImportStats> ImportTable(Store& store, std::string_view json_text,
                                        const ImportOptions& options) {
  absl::StatusOr<ImportBatch> batch =
      ParseTable(json_text, options.known_families, options.validator);
  if (!batch.ok()) return batch.status();
  return store.ApplyImport(*batch, options.policy);
}

std::string_view TableChangeName(TableDiffEntry::Change change) {
  switch (change) {
    case TableDiffEntry::Change::kSame:
      return "same";
    case TableDiffEntry::Change::kWinnerChanged:
      return "winner_changed";
    case TableDiffEntry::Change::kOnlyInA:
      return "only_in_a";
    case TableDiffEntry::Change::kOnlyInB:
      return "only_in_b";
  }
  return "?";
}

absl::StatusOr<TableDiff> DiffTables(std::string_view json_a, std::string_view json_b) {
  absl::StatusOr<ImportBatch> a = ParseTable(json_a, {});
  if (!a.ok()) return absl::Status(a.status().code(), absl::StrCat("A: ", a.status().message()));
  absl::StatusOr<ImportBatch> b = ParseTable(json_b, {});
  if (!b.ok()) return absl::Status(b.status().code(), absl::StrCat("B: ", b.status().message()));

  using Key = std::tuple<std::string, std::string, std::string, Shape>;
  // Per key, the newest winner (then the fastest) over all source hashes.
  auto index = [](const ImportBatch& batch) {
    std::map<Key, const Winner*> out;
    for (const Winner& w : batch.winners) {
      Key key{w.device.name, w.family, std::string(DTypeName(w.dtype)), w.shape};
      const Winner*& slot = out[key];
      if (slot == nullptr || w.measured_at_ms > slot->measured_at_ms ||
          (w.measured_at_ms == slot->measured_at_ms &&
           w.measurement.timing.median_us < slot->measurement.timing.median_us)) {
        slot = &w;
      }
    }
    return out;
  };
  std::map<Key, const Winner*> in_a = index(*a);
  std::map<Key, const Winner*> in_b = index(*b);
  std::set<Key> keys;
  for (const auto& [key, w] : in_a) keys.insert(key);
  for (const auto& [key, w] : in_b) keys.insert(key);

  TableDiff diff;
  for (const Key& key : keys) {
    TableDiffEntry e;
    const Winner* wa = in_a.contains(key) ? in_a[key] : nullptr;
    const Winner* wb = in_b.contains(key) ? in_b[key] : nullptr;
    const Winner* any = wa != nullptr ? wa : wb;
    e.device_model = any->device.name;
    e.family = any->family;
    e.dtype = any->dtype;
    e.shape = any->shape;
    if (wa != nullptr) {
      e.params_a = wa->measurement.params;
      e.time_a_us = wa->measurement.timing.median_us;
    }
    if (wb != nullptr) {
      e.params_b = wb->measurement.params;
      e.time_b_us = wb->measurement.timing.median_us;
    }
    if (wa == nullptr) {
      e.change = TableDiffEntry::Change::kOnlyInB;
    } else if (wb == nullptr) {
      e.change = TableDiffEntry::Change::kOnlyInA;
    } else {
      e.change = wa->measurement.params == wb->measurement.params
                     ? TableDiffEntry::Change::kSame
                     : TableDiffEntry::Change::kWinnerChanged;
      e.time_change_percent = (e.time_b_us - e.time_a_us) / e.time_a_us * 100.0;
      e.source_hash_changed = wa->provenance.source_hash != wb->provenance.source_hash;
    }
    diff.entries.push_back(std::move(e));
  }
  return diff;
}

std::vector<const TableDiffEntry*> TableDiff::Regressions(double threshold_percent) const {
  std::vector<const TableDiffEntry*> out;
  for (const TableDiffEntry& e : entries) {
    if (e.params_a && e.params_b && e.time_change_percent > threshold_percent) out.push_back(&e);
  }
  return out;
}

std::string TableDiff::ToText() const {
  int same = 0, changed = 0, only_a = 0, only_b = 0;
  for (const TableDiffEntry& e : entries) {
    switch (e.change) {
      case TableDiffEntry::Change::kSame:
        ++same;
        break;
      case TableDiffEntry::Change::kWinnerChanged:
        ++changed;
        break;
      case TableDiffEntry::Change::kOnlyInA:
        ++only_a;
        break;
      case TableDiffEntry::Change::kOnlyInB:
        ++only_b;
        break;
    }
  }
  std::string out =
      absl::StrCat(entries.size(), " keys: ", same, " same winner, ", changed, " winner changed, ",
                   only_a, " only in A, ", only_b, " only in B\n");
  auto params = [](const std::optional<Params>& p) { return p ? FormatParams(*p) : "-"; };
  for (const TableDiffEntry& e : entries) {
    absl::StrAppend(&out, e.device_model, " | ", e.family, " ", ToAbsl(DTypeName(e.dtype)), " ",
                    FormatShape(e.shape), " | ", ToAbsl(TableChangeName(e.change)), " | ");
    switch (e.change) {
      case TableDiffEntry::Change::kOnlyInA:
        absl::StrAppend(&out, params(e.params_a), " ", absl::StrFormat("%.4g us", e.time_a_us));
        break;
      case TableDiffEntry::Change::kOnlyInB:
        absl::StrAppend(&out, params(e.params_b), " ", absl::StrFormat("%.4g us", e.time_b_us));
        break;
      default:
        absl::StrAppend(&out, params(e.params_a),
                        e.change == TableDiffEntry::Change::kSame
                            ? ""
                            : absl::StrCat(" -> ", params(e.params_b)),
                        absl::StrFormat(" | %.4g -> %.4g us (%+.2f%%)", e.time_a_us, e.time_b_us,
                                        e.time_change_percent),
                        e.source_hash_changed ? " | source changed" : "");
    }
    out += "\n";
  }
  return out;
}

std::string TableDiff::ToJson() const {
  Json entries_json = Json::array();
  for (const TableDiffEntry& e : entries) {
    Json j{{"device_model", e.device_model},
           {"family", e.family},
           {"dtype", std::string(DTypeName(e.dtype))},
           {"shape", e.shape},
           {"change", std::string(TableChangeName(e.change))}};
    if (e.params_a) {
      j["a"] = Json{{"params", ParamsJson(*e.params_a)}, {"time_us", Round(e.time_a_us)}};
    }
    if (e.params_b) {
      j["b"] = Json{{"params", ParamsJson(*e.params_b)}, {"time_us", Round(e.time_b_us)}};
    }
    if (e.params_a && e.params_b) {
      j["time_change_percent"] = Round(e.time_change_percent);
      j["source_hash_changed"] = e.source_hash_changed;
    }
    entries_json.push_back(std::move(j));
  }
  return Json{{"format", "cutune-table-diff"}, {"version", 1}, {"entries", entries_json}}.dump(
             2, ' ', false, Json::error_handler_t::replace) +
         "\n";
}

}  // namespace cutune::store
