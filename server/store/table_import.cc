// Tuning table import: parsing and validating a whole table into an ImportBatch, then handing
// it to Store::ApplyImport (store_import.cc), which applies it in one transaction.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <new>
#include <set>
#include <system_error>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/core/ties.h"
#include "server/store/row_json.h"
#include "server/store/table_json.h"
#include "server/store/tables.h"

namespace cutune::store {
namespace {

using internal::Bad;
using internal::CheckFields;
using internal::CheckObject;
using internal::Concat;
using internal::Cut;
using internal::GetInt;
using internal::GetMeasurement;
using internal::GetNumber;
using internal::GetProblemFields;
using internal::GetReference;
using internal::GetResources;
using internal::GetShape;
using internal::GetString;
using internal::GetTime;
using internal::Got;
using internal::Int64Of;
using internal::Json;
using internal::kIntMax;
using internal::kMeasurementFields;
using internal::ParamsFromJson;
using internal::ParseJson;
using internal::ProblemFields;
using internal::SizeText;

// A field at `path` that tables carry from version `needed` on, in a table of `version`.
absl::Status NeedsVersion(const std::string& path, int64_t needed, int64_t version) {
  if (version >= needed) return absl::OkStatus();
  return Bad(
      path, absl::StrCat("needs table version ", needed, " (this table is version ", version, ")"));
}

// A "timing" (Provenance::timing) is read from table version kTableVersionTiming on.
absl::Status CheckTimingVersion(const Provenance& provenance, const std::string& path,
                                int64_t version) {
  if (provenance.timing.empty()) return absl::OkStatus();
  return NeedsVersion(path + "/timing", kTableVersionTiming, version);
}

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

// Of two rows of one configuration: an ok row over a rejected one, else the faster.
bool BetterRow(const Measurement& a, const Measurement& b) {
  const bool a_ok = a.outcome == Outcome::kOk, b_ok = b.outcome == Outcome::kOk;
  if (a_ok != b_ok) return a_ok;
  return a_ok && a.timing.median_us < b.timing.median_us;
}

// A winner's "ties": distinct non-empty configurations other than the winner's own, each in the
// family's space when there is a validator; returned in CanonicalBefore order, whatever the
// order in the file.
absl::StatusOr<std::vector<Params>> GetTies(const Json& j, const std::string& path,
                                            const std::string& family, const Params& winner_written,
                                            const EntryValidator& validator) {
  if (!j.is_array()) {
    return Bad(path, absl::StrCat("expected an array of parameter objects", Got(j)));
  }
  const Params winner = validator.Canonical(family, winner_written);
  std::vector<Params> ties;
  std::map<Params, std::string> paths;  // as written
  std::set<Params> kept;                // canonical
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string tp = absl::StrCat(path, "/", i);
    absl::StatusOr<Params> params = ParamsFromJson(j[i], tp);
    if (!params.ok()) return params.status();
    if (params->empty()) return Bad(tp, "expected a non-empty object of integers");
    if (*params == winner_written) return Bad(tp, "is the winner's own configuration");
    if (auto [it, inserted] = paths.emplace(*params, tp); !inserted) {
      return Bad(tp, absl::StrCat("configuration ", FormatParams(*params),
                                  " is listed twice (first at ", it->second, ")"));
    }
    // Written in another spelling than the winner or another tie (before a parameter was
    // added), it may be that one: then it is not listed again.
    *params = validator.Canonical(family, *std::move(params));
    if (*params == winner || !kept.insert(*params).second) continue;
    if (validator.params) {
      if (absl::Status s = validator.params(family, *params); !s.ok()) {
        return Bad(tp, ToStd(s.message()));
      }
    }
    ties.push_back(*std::move(params));
  }
  std::sort(ties.begin(), ties.end(), CanonicalBefore);
  return ties;
}

// A device's "portfolios" (docs/tables.md): per family and dtype, the members, optionally their
// ptxas reports (version 4), a matrix row per tuned shape with each member's time (0: not
// measured), optionally the device's times of other configurations there (version 5) and the
// kernel source all were measured with (version 6). Every member and shape must pass the
// validator; each measured cell becomes a MatrixCell carrying its member's report and the
// source: the portfolio's, else `winner_sources`' one source for the family (the device's
// winners in this table; a table exported before version 6 trained its portfolio on them), else
// none ('').
absl::Status GetPortfolios(const Json& j, const std::string& path, const std::string& model,
                           int version, const std::set<std::string>& known_families,
                           const EntryValidator& validator,
                           const std::map<std::string, std::set<std::string>>& winner_sources,
                           std::vector<MatrixCell>& cells) {
  if (!j.is_array()) return Bad(path, absl::StrCat("expected an array", Got(j)));
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string pp = absl::StrCat(path, "/", i);
    const Json& e = j[i];
    if (absl::Status s = CheckObject(e, pp, {"family", "dtype", "members", "matrix"},
                                     {"resources", "judged", "source_hash"});
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> family = GetString(e, pp, "family", true);
    if (!family.ok()) return family.status();
    if (!known_families.empty() && !known_families.count(*family)) {
      return Bad(pp + "/family", absl::StrCat("unknown kernel family ", Quoted(*family)));
    }
    absl::StatusOr<std::string> dtype_text = GetString(e, pp, "dtype", true);
    if (!dtype_text.ok()) return dtype_text.status();
    absl::StatusOr<DType> dtype = ParseDType(*dtype_text);
    if (!dtype.ok()) return Bad(pp + "/dtype", ToStd(dtype.status().message()));
    if (!seen.insert({*family, *dtype_text}).second) {
      return Bad(pp, absl::StrCat("a second portfolio for ", *family, " ", *dtype_text));
    }
    std::string source;
    if (e.contains("source_hash")) {
      if (absl::Status s = NeedsVersion(pp + "/source_hash", kTableVersionPortfolioSource, version);
          !s.ok()) {
        return s;
      }
      absl::StatusOr<std::string> hash = GetString(e, pp, "source_hash", true);
      if (!hash.ok()) return hash.status();
      source = *std::move(hash);
    } else if (auto found = winner_sources.find(*family);
               found != winner_sources.end() && found->second.size() == 1) {
      source = *found->second.begin();
    }
    const Json& members_json = e["members"];
    if (!members_json.is_array()) {
      return Bad(pp + "/members", absl::StrCat("expected an array", Got(members_json)));
    }
    std::vector<Params> members;
    for (size_t m = 0; m < members_json.size(); ++m) {
      const std::string mp = absl::StrCat(pp, "/members/", m);
      absl::StatusOr<Params> params = ParamsFromJson(members_json[m], mp);
      if (!params.ok()) return params.status();
      *params = validator.Canonical(*family, *std::move(params));
      if (validator.params) {
        if (absl::Status s = validator.params(*family, *params); !s.ok()) {
          return Bad(mp, ToStd(s.message()));
        }
      }
      members.push_back(*std::move(params));
    }
    // The members' reports, one per member (all zeros: not known).
    std::map<Params, ResourceUsage> reports;
    if (e.contains("resources")) {
      const std::string rsp = pp + "/resources";
      if (absl::Status s = NeedsVersion(rsp, kTableVersionMemberResources, version); !s.ok()) {
        return s;
      }
      const Json& rs = e["resources"];
      if (!rs.is_array() || rs.size() != members.size()) {
        return Bad(rsp, absl::StrCat("expected an array of ", members.size(),
                                     " reports, one per member", Got(rs)));
      }
      for (size_t m = 0; m < rs.size(); ++m) {
        absl::StatusOr<ResourceUsage> r = GetResources(rs[m], absl::StrCat(rsp, "/", m));
        if (!r.ok()) return r.status();
        if (r->registers > 0) reports[members[m]] = *r;
      }
    }
    // Two spellings of one member (one written before a parameter was added) are one member:
    // its cell at a shape is the faster of the two.
    std::map<std::pair<Shape, Params>, double> fastest;
    const Json& matrix = e["matrix"];
    if (!matrix.is_array()) return Bad(pp + "/matrix", absl::StrCat("expected an array", Got(matrix)));
    for (size_t r = 0; r < matrix.size(); ++r) {
      const std::string rp = absl::StrCat(pp, "/matrix/", r);
      const Json& row = matrix[r];
      if (absl::Status s = CheckObject(row, rp, {"shape", "best_us", "times_us"}); !s.ok()) return s;
      absl::StatusOr<Shape> shape = GetShape(row, rp);
      if (!shape.ok()) return shape.status();
      if (validator.problem) {
        if (absl::Status s = validator.problem(*family, *shape); !s.ok()) {
          return Bad(rp + "/shape", ToStd(s.message()));
        }
      }
      if (absl::StatusOr<double> best = GetNumber(row, rp, "best_us", true); !best.ok()) {
        return best.status();
      }
      const Json& times = row["times_us"];
      if (!times.is_array() || times.size() != members.size()) {
        return Bad(rp + "/times_us", absl::StrCat("expected an array of ", members.size(),
                                                   " times, one per member", Got(times)));
      }
      for (size_t m = 0; m < times.size(); ++m) {
        const std::string tp = absl::StrCat(rp, "/times_us/", m);
        if (!times[m].is_number() || !std::isfinite(times[m].get<double>()) ||
            times[m].get<double>() < 0) {
          return Bad(tp, absl::StrCat("expected a finite time >= 0 (0: not measured)",
                                      Got(times[m])));
        }
        const double t = times[m].get<double>();
        if (t <= 0) continue;
        auto [it, inserted] = fastest.try_emplace({*shape, members[m]}, t);
        if (!inserted) it->second = std::min(it->second, t);
      }
    }
    // The device's times of other configurations at its tuned shapes (version 5): cells like
    // the members', without a report.
    if (e.contains("judged")) {
      const std::string jp = pp + "/judged";
      if (absl::Status s = NeedsVersion(jp, kTableVersionJudged, version); !s.ok()) return s;
      const Json& judged = e["judged"];
      if (!judged.is_array()) return Bad(jp, absl::StrCat("expected an array", Got(judged)));
      for (size_t c = 0; c < judged.size(); ++c) {
        const std::string cp = absl::StrCat(jp, "/", c);
        const Json& cell = judged[c];
        if (absl::Status s = CheckObject(cell, cp, {"shape", "params", "time_us"}); !s.ok()) {
          return s;
        }
        absl::StatusOr<Shape> shape = GetShape(cell, cp);
        if (!shape.ok()) return shape.status();
        if (validator.problem) {
          if (absl::Status s = validator.problem(*family, *shape); !s.ok()) {
            return Bad(cp + "/shape", ToStd(s.message()));
          }
        }
        absl::StatusOr<Params> params = ParamsFromJson(cell["params"], cp + "/params");
        if (!params.ok()) return params.status();
        *params = validator.Canonical(*family, *std::move(params));
        if (validator.params) {
          if (absl::Status s = validator.params(*family, *params); !s.ok()) {
            return Bad(cp + "/params", ToStd(s.message()));
          }
        }
        const Json& time = cell["time_us"];
        if (!time.is_number() || !std::isfinite(time.get<double>()) || time.get<double>() <= 0) {
          return Bad(cp + "/time_us", absl::StrCat("expected a finite time > 0", Got(time)));
        }
        auto [it, inserted] = fastest.try_emplace({*shape, *std::move(params)}, time.get<double>());
        if (!inserted) it->second = std::min(it->second, time.get<double>());
      }
    }
    for (const auto& [key, t] : fastest) {
      const auto report = reports.find(key.second);
      cells.push_back({model, *family, *dtype, key.first, key.second, t,
                       report == reports.end() ? ResourceUsage{} : report->second, source});
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
  const std::optional<int64_t> version =
      root.contains("version") ? Int64Of(root["version"]) : std::nullopt;
  if (!version || *version < kOldestTableVersion || *version > kTableVersion) {
    return Bad("/version", absl::StrCat("unsupported table version (this cutune reads versions ",
                                        kOldestTableVersion, " to ", kTableVersion, ")",
                                        root.contains("version") ? Got(root["version"]) : ""));
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
            {"sweeps", "portfolios"});
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
                                                      "driver_version", "nvrtc_version"}),
                          {"ties", "timing"});
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
      if (absl::Status s = CheckTimingVersion(w.provenance, wp, *version); !s.ok()) return s;
      absl::StatusOr<Measurement> m = GetMeasurement(e, wp, /*has_outcome=*/false);
      if (!m.ok()) return m.status();
      const Params written = m->params;
      m->params = validator.Canonical(w.family, std::move(m->params));
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
      if (e.contains("ties")) {
        if (absl::Status s = NeedsVersion(wp + "/ties", kTableVersionTies, *version); !s.ok()) {
          return s;
        }
        absl::StatusOr<std::vector<Params>> ties =
            GetTies(e["ties"], wp + "/ties", w.family, written, validator);
        if (!ties.ok()) return ties.status();
        w.ties = *std::move(ties);
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

    if (dev.contains("portfolios")) {
      if (absl::Status s = NeedsVersion(dp + "/portfolios", kTableVersionPortfolios, *version);
          !s.ok()) {
        return s;
      }
      std::map<std::string, std::set<std::string>> winner_sources;
      for (const Winner& w : batch.winners) {
        if (w.device.name == model.name) winner_sources[w.family].insert(w.provenance.source_hash);
      }
      if (absl::Status s =
              GetPortfolios(dev["portfolios"], dp + "/portfolios", model.name, *version,
                            known_families, validator, winner_sources, batch.cells);
          !s.ok()) {
        return s;
      }
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
                           "driver_version", "nvrtc_version"},
                          {"timing"});
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
      if (absl::Status s = CheckTimingVersion(info.provenance, sp, *version); !s.ok()) return s;
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
      std::map<std::string, std::string> row_paths;  // as written
      std::map<Params, size_t> row_of;               // canonical -> index in sweep.rows
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
        if (auto [it, inserted] = row_paths.emplace(FormatParams(m->params), rp); !inserted) {
          return Bad(rp + "/params",
                     absl::StrCat("candidate ", it->first,
                                  " appears twice in this sweep (first at ", it->second, ")"));
        }
        m->params = validator.Canonical(info.family, std::move(m->params));
        if (validator.params) {
          if (absl::Status s = validator.params(info.family, m->params); !s.ok()) {
            return Bad(rp + "/params", ToStd(s.message()));
          }
        }
        // Two spellings of one configuration (one written before a parameter was added): the
        // better row stands for it.
        if (auto [it, inserted] = row_of.try_emplace(m->params, sweep.rows.size()); !inserted) {
          StoredRow& kept = sweep.rows[it->second];
          if (BetterRow(*m, kept.measurement)) kept = {0, *std::move(m), *at};
          continue;
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

std::vector<std::string> TableFilesIn(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<ImportStats> ImportTable(Store& store, std::string_view json_text,
                                        const ImportOptions& options) {
  absl::StatusOr<ImportBatch> batch =
      ParseTable(json_text, options.known_families, options.validator);
  if (!batch.ok()) return batch.status();
  return store.ApplyImport(*batch, options.policy);
}

}  // namespace cutune::store
