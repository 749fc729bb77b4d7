// Tuning table export: the store's winners (and, when asked, finished sweeps with their rows)
// as a deterministic table in the layout of docs/tables.md.
#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/store/row_json.h"
#include "server/store/table_json.h"
#include "server/store/tables.h"

namespace cutune::store {
namespace {

using internal::Compact;
using internal::FormatTime;
using internal::Json;
using internal::ParamsJson;
using internal::PutMeasurement;
using internal::PutProvenance;
using internal::ReferenceJson;
using internal::ResourcesJson;
using internal::Round;
using internal::SizeText;

Json ShapeJson(const Shape& shape) { return Json(shape); }

auto ProblemOrder(const std::string& family, DType dtype, const Shape& shape) {
  return std::make_tuple(std::cref(family), DTypeName(dtype), std::cref(shape));
}

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
      Layout(*it, indent + 2,
             j.is_object() && (it.key() == "winners" || it.key() == "rows" ||
                               it.key() == "members" || it.key() == "matrix" ||
                               it.key() == "judged"),
             out);
    }
  }
  absl::StrAppend(&out, "\n", std::string(indent, ' '), j.is_array() ? "]" : "}");
}

}  // namespace

absl::StatusOr<std::string> ExportTable(Store& store, const ExportOptions& options) {
  // The portfolios and matrices below come from the models: trained on every finished sweep.
  if (absl::Status s = store.RetrainModels(); !s.ok()) return s;
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

  const ModelMap models = store.PredictionModels();  // ordered by (model, family, dtype)
  const std::vector<ModelComparison> comparisons = store.ModelComparisons();
  // The lowest version that holds what is exported (tables.h).
  int version = kOldestTableVersion;
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
      if (!w.provenance.timing.empty()) version = std::max(version, kTableVersionTiming);
      if (!w.ties.empty()) {
        Json ties = Json::array();
        for (const Params& tie : w.ties) ties.push_back(ParamsJson(tie));
        e["ties"] = std::move(ties);
        version = std::max(version, kTableVersionTies);
      }
      winners_json.push_back(std::move(e));
    }
    // Models that only appear as GPUs seen, with nothing tuned, are still listed: the table
    // says "this model, nothing tuned" rather than leaving the reader to guess.
    dev["winners"] = std::move(winners_json);
    // Portfolios with a matrix (Model::HasMatrix): the members and their measured time at every
    // tuned shape (0: not measured), shapes in table order, so that a table without rows still
    // trains the PREDICTED rung.
    Json portfolios = Json::array();
    for (const auto& [key, model] : models) {
      if (key.device_model != d.name || !model || !model->HasMatrix()) continue;
      const predict::Portfolio& p = model->portfolio();
      Json members = Json::array();
      for (const Params& m : p.members) members.push_back(ParamsJson(m));
      std::vector<size_t> order(p.shapes.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ProblemOrder(key.family, key.dtype, p.shapes[a]) <
               ProblemOrder(key.family, key.dtype, p.shapes[b]);
      });
      Json matrix = Json::array();
      for (size_t i : order) {
        Json times = Json::array();
        for (double t : p.time_us[i]) times.push_back(Round(t));
        matrix.push_back(Json{{"shape", ShapeJson(p.shapes[i])},
                              {"best_us", Round(p.best_us[i])},
                              {"times_us", std::move(times)}});
      }
      Json portfolio{{"family", key.family},
                     {"dtype", std::string(DTypeName(key.dtype))},
                     {"members", std::move(members)},
                     {"matrix", std::move(matrix)}};
      version = std::max(version, kTableVersionPortfolios);
      // The source it was measured with, so that an importer keeps it apart from another's.
      if (!model->source_hash().empty()) {
        portfolio["source_hash"] = model->source_hash();
        version = std::max(version, kTableVersionPortfolioSource);
      }
      // The members' ptxas reports, where one is known that none of the winners above carries
      // (a member that won no tuned shape: predict::MemberResources), so that the importer's
      // model prices every member as this one does.
      const std::vector<ResourceUsage>& reports = model->member_resources();
      bool needed = false;
      for (size_t m = 0; m < p.members.size() && !needed; ++m) {
        needed = reports[m].registers > 0 &&
                 std::none_of(winners->begin(), winners->end(), [&](const Winner& w) {
                   return w.device.name == d.name && w.family == key.family &&
                          w.dtype == key.dtype && w.measurement.params == p.members[m] &&
                          w.measurement.resources.registers > 0;
                 });
      }
      if (needed) {
        Json resources = Json::array();
        for (const ResourceUsage& r : reports) resources.push_back(ResourcesJson(r));
        portfolio["resources"] = std::move(resources);
        version = std::max(version, kTableVersionMemberResources);
      }
      // The device's measurements of its architecture's models' picks at its tuned shapes,
      // where a pick is no member (the matrix holds the members'): what decides whether this
      // model gives way to another (ChooseDeferrals), so that a table server decides as this
      // store does. Per shape and configuration the fastest, in table order.
      std::map<std::pair<Shape, Params>, double> judged;
      for (const ModelComparison& c : comparisons) {
        if (c.own != key) continue;
        for (size_t i = 0; i < c.judged.shapes.size(); ++i) {
          const Params& pick = c.judged.params[i];
          if (std::find(p.members.begin(), p.members.end(), pick) != p.members.end()) continue;
          auto [it, fresh] = judged.try_emplace({c.judged.shapes[i], pick}, c.judged.time_us[i]);
          if (!fresh) it->second = std::min(it->second, c.judged.time_us[i]);
        }
      }
      if (!judged.empty()) {
        std::vector<std::pair<std::pair<Shape, Params>, double>> cells(judged.begin(),
                                                                        judged.end());
        std::stable_sort(cells.begin(), cells.end(), [&](const auto& a, const auto& b) {
          return ProblemOrder(key.family, key.dtype, a.first.first) <
                 ProblemOrder(key.family, key.dtype, b.first.first);
        });
        Json judged_json = Json::array();
        for (const auto& [cell, t] : cells) {
          judged_json.push_back(Json{{"shape", ShapeJson(cell.first)},
                                     {"params", ParamsJson(cell.second)},
                                     {"time_us", Round(t)}});
        }
        portfolio["judged"] = std::move(judged_json);
        version = std::max(version, kTableVersionJudged);
      }
      portfolios.push_back(std::move(portfolio));
    }
    if (!portfolios.empty()) dev["portfolios"] = std::move(portfolios);
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
        if (!s.info.provenance.timing.empty()) version = std::max(version, kTableVersionTiming);
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
             {"version", version},
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

}  // namespace cutune::store
