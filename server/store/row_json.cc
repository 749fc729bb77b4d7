// The row codec, table side: measurements, parameters, provenance, references and times <-> JSON.
#include "server/store/row_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/core/strings.h"

namespace cutune::store::internal {

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

const std::initializer_list<std::string_view> kMeasurementFields = {
    "params",    "detail",     "resources", "samples", "time_us",
    "min_us",    "rel_spread", "gbps",      "tflops",  "percent_of_reference",
    "compile_ms"};

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
  if (!p.timing.empty()) out["timing"] = p.timing;
}

Json ReferenceJson(const Reference& r) {
  return Json{{"name", r.name}, {"time_us", Round(r.time_us)}};
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

absl::StatusOr<Params> ParamsFromJson(const Json& j, const std::string& p) {
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
  if (obj.contains("timing")) {
    absl::StatusOr<std::string> timing = GetString(obj, path, "timing", true);
    if (!timing.ok()) return timing.status();
    if (*timing != kTimingHeld && *timing != kTimingIdle) {
      return Bad(path + "/timing", absl::StrCat("expected \"", ToAbsl(kTimingHeld), "\" or \"",
                                                ToAbsl(kTimingIdle), "\", got \"", *timing, "\""));
    }
    p.timing = *std::move(timing);
  }
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

absl::StatusOr<ResourceUsage> GetResources(const Json& r, const std::string& path) {
  if (absl::Status s = CheckObject(r, path,
                                   {"registers", "static_shared_bytes", "stack_bytes",
                                    "spill_store_bytes", "spill_load_bytes", "constant_bytes"});
      !s.ok()) {
    return s;
  }
  ResourceUsage out;
  std::pair<const char*, int*> ints[] = {{"registers", &out.registers},
                                         {"static_shared_bytes", &out.static_shared_bytes},
                                         {"stack_bytes", &out.stack_bytes},
                                         {"spill_store_bytes", &out.spill_store_bytes},
                                         {"spill_load_bytes", &out.spill_load_bytes},
                                         {"constant_bytes", &out.constant_bytes}};
  for (auto& [key, field] : ints) {
    absl::StatusOr<int64_t> v = GetInt(r, path, key, 0, kIntMax);
    if (!v.ok()) return v.status();
    *field = static_cast<int>(*v);
  }
  return out;
}

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
  absl::StatusOr<Params> params = ParamsFromJson(obj.at("params"), path + "/params");
  if (!params.ok()) return params.status();
  m.params = *std::move(params);
  absl::StatusOr<std::string> detail = GetString(obj, path, "detail", false);
  if (!detail.ok()) return detail.status();
  m.detail = *std::move(detail);

  absl::StatusOr<ResourceUsage> resources = GetResources(obj.at("resources"), path + "/resources");
  if (!resources.ok()) return resources.status();
  m.resources = *resources;
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

namespace {

absl::Status CheckFamily(const std::string& family, const std::string& path,
                         const std::set<std::string>& known) {
  if (!known.empty() && !known.contains(family)) {
    return Bad(path + "/family", absl::StrCat("unknown kernel family \"", family,
                                              "\" (known: ", absl::StrJoin(known, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

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

}  // namespace cutune::store::internal
