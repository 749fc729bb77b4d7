// cutune-predict-bench: how good the PREDICTED rung's answers are, from tuning tables (no GPU).
//   cutune-predict-bench --table GRID.json... [--measured ALL_ROWS.json...
//                        --unseen tables/grid/unseen.txt] [--device MODEL]
// 1. Imports GRID.json into a fresh store (as cutuned --tables would) and prints, per device
//    model and family, the leave-one-shape-out evaluation the store's prediction model was
//    calibrated with: per tuned shape, its own winner's time over the time of the member picked
//    without it (model) and of the nearest other tuned shape's winner (nearest), as median,
//    10th percentile and worst.
// 2. With --measured and --unseen: for each FAMILY SHAPE of the unseen list, the answer a table
//    server with GRID.json gives the asking GPU (--device, default the H200; a model the table
//    does not hold, such as an H100, is answered from its architecture), its time measured at
//    that shape in ALL_ROWS.json (tables with rows that also measured it there, on that GPU),
//    and the shape's own tuned best there.
// 3. The lookup latency through Store::Lookup (median and p99 over many asks).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "kernels/family.h"
#include "server/core/files.h"
#include "server/service/tuner_service.h"
#include "server/store/store.h"
#include "server/store/tables.h"

namespace cutune {
namespace {

std::string Percent(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * v);
  return b;
}

// Median, 10th percentile and worst of ratios (1.0 = as good as the shape's own winner), over
// the shapes where they were measured (0: not measured).
std::string Summary(std::vector<double> r) {
  r.erase(std::remove(r.begin(), r.end(), 0.0), r.end());
  if (r.empty()) return "none";
  std::sort(r.begin(), r.end());
  return "median " + Percent(r[r.size() / 2]) + ", p10 " + Percent(r[r.size() / 10]) +
         ", worst " + Percent(r.front()) + " (" + std::to_string(r.size()) + " shapes)";
}

// Ratios around 1 (predicted over measured): median, 10th and 90th percentiles, extremes, and
// the share within 25%.
std::string Spread(std::vector<double> r) {
  if (r.empty()) return "none";
  std::sort(r.begin(), r.end());
  const auto within = std::count_if(r.begin(), r.end(), [](double v) { return v >= 0.8 && v <= 1.25; });
  double log_error = 0;
  for (double v : r) log_error += std::fabs(std::log(v));
  char b[200];
  std::snprintf(b, sizeof b,
                "median %.3f, p10 %.3f, p90 %.3f, min %.3f, max %.3f; %.0f%% within 25%%, "
                "mean |ln| %.3f",
                r[r.size() / 2], r[r.size() / 10], r[r.size() * 9 / 10], r.front(), r.back(),
                100.0 * static_cast<double>(within) / static_cast<double>(r.size()),
                log_error / static_cast<double>(r.size()));
  return b;
}

// A fresh store at DB holding the tables of PATHS, imported in order (keep-faster).
absl::StatusOr<std::unique_ptr<store::Store>> Load(const std::vector<std::string>& paths,
                                                   const std::string& db) {
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  auto opened = store::Store::Open(db, service::StoreRules());
  if (!opened.ok()) return opened.status();
  std::set<std::string> families;
  for (const auto* f : kernels::AllFamilies()) families.insert(std::string(f->name()));
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    auto stats = store::ImportTable(**opened, text.str(),
                                    {.known_families = families,
                                     .policy = store::MergePolicy::kKeepFaster,
                                     .validator = service::FamilyRules()});
    if (!stats.ok()) {
      return absl::Status(stats.status().code(),
                          path + ": " + std::string(stats.status().message()));
    }
  }
  return opened;
}

int Run(const std::vector<std::string>& tables, const std::vector<std::string>& measured,
        const std::string& unseen, const std::string& device, const std::string& csv_path) {
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) {
      std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
      return 1;
    }
    csv << "family,shape,model_ratio,nearest_ratio,best_member_ratio,predicted_slowdown,"
           "actual_slowdown,time_ratio\n";
  }
  auto grid = Load(tables, "/tmp/cutune-predict-bench-grid.db");
  const std::string table = absl::StrJoin(tables, ", ");
  if (!grid.ok()) {
    std::fprintf(stderr, "%s\n", std::string(grid.status().message()).c_str());
    return 1;
  }
  std::printf("== leave-one-shape-out on %s ==\n", table.c_str());
  for (const auto& [key, model] : (*grid)->PredictionModels()) {
    const predict::Evaluation& e = model->evaluation();
    std::printf("%s %s %s: %zu tuned shapes, %zu members, matrix %.0f%% measured, calibration "
                "%.3f\n  model:   %s\n  nearest: %s\n",
                key.device_model.c_str(), key.family.c_str(),
                std::string(DTypeName(key.dtype)).c_str(), model->portfolio().shapes.size(),
                model->portfolio().members.size(), 100 * model->portfolio().Coverage(),
                model->calibration(), Summary(e.model_ratio).c_str(),
                Summary(e.nearest_ratio).c_str());
    // How well the portfolio covers the grid: each shape's winner over its fastest member.
    std::vector<double> cover;
    const predict::Portfolio& p = model->portfolio();
    for (size_t s = 0; s < p.shapes.size(); ++s) {
      double fastest = 0;
      for (double t : p.time_us[s]) {
        if (t > 0 && (fastest == 0 || t < fastest)) fastest = t;
      }
      cover.push_back(fastest > 0 ? p.best_us[s] / fastest : 0);
    }
    std::printf("  portfolio's best member: %s\n", Summary(cover).c_str());
    std::printf("  predicted time over measured, held out: %s\n", Spread(e.time_ratio).c_str());
    std::vector<std::pair<double, size_t>> off;  // the farthest from 1 either way
    for (size_t i = 0; i < e.time_ratio.size(); ++i) {
      off.push_back({-std::fabs(std::log(e.time_ratio[i])), i});
    }
    std::sort(off.begin(), off.end());
    std::printf("  farthest time predictions:");
    for (size_t i = 0; i < std::min<size_t>(6, off.size()); ++i) {
      std::printf(" %s %.3f;", FormatShape(e.shapes[off[i].second]).c_str(),
                  e.time_ratio[off[i].second]);
    }
    std::printf("\n");
    std::printf("  held out, the best member of the portfolio built without it: %s\n",
                Summary(e.oracle_ratio).c_str());
    for (size_t i = 0; csv.is_open() && i < e.shapes.size(); ++i) {
      csv << key.family << ',' << FormatShape(e.shapes[i]) << ',' << e.model_ratio[i] << ','
          << e.nearest_ratio[i] << ',' << e.oracle_ratio[i] << ','
          << e.predicted_slowdown[i] * model->calibration() << ',' << e.actual_slowdown[i] << ','
          << e.time_ratio[i] << '\n';
    }
    std::vector<std::pair<double, size_t>> worst;
    for (size_t i = 0; i < e.shapes.size(); ++i) worst.push_back({e.model_ratio[i], i});
    std::sort(worst.begin(), worst.end());
    std::printf("  worst shapes:");
    for (size_t i = 0; i < std::min<size_t>(8, worst.size()); ++i) {
      const size_t s = worst[i].second;
      std::printf(" %s %s (predicted %.2fx, actual %.2fx, best member %s);",
                  FormatShape(e.shapes[s]).c_str(), Percent(worst[i].first).c_str(),
                  e.predicted_slowdown[s] * model->calibration(), e.actual_slowdown[s],
                  Percent(e.oracle_ratio[s]).c_str());
    }
    std::printf("\n");
  }

  std::vector<store::LookupQuery> asked;
  if (!unseen.empty()) {
    // Without --measured: the answers and the lookup cost, no tuned time to compare with.
    absl::StatusOr<std::unique_ptr<store::Store>> all = absl::NotFoundError("no --measured");
    if (!measured.empty()) all = Load(measured, "/tmp/cutune-predict-bench-all.db");
    if (!measured.empty() && !all.ok()) {
      std::fprintf(stderr, "%s\n", std::string(all.status().message()).c_str());
      return 1;
    }
    std::printf("\n== unseen shapes: the table server's answer to %s, timed at the shape ==\n",
                device.c_str());
    std::printf("%-10s %-16s %-14s %9s %11s %11s %11s %8s\n", "family", "shape", "rung",
                "expected", "predicted", "answer us", "tuned us", "ratio");
    std::ifstream in(unseen);
    std::string line;
    std::map<std::string, std::vector<double>> ratios;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string family, shape_text;
      fields >> family >> shape_text;
      auto shape = ParseShape(shape_text);
      const kernels::KernelFamily* f = kernels::FindFamily(family);
      if (!shape.ok() || f == nullptr) continue;
      store::LookupQuery q;
      q.device_model = device;
      q.cc_major = 9;
      q.family = family;
      q.shape = *shape;
      q.family_default = f->baseline();
      asked.push_back(q);
      const store::LookupResult answer = (*grid)->Lookup(q);
      if (!all.ok()) {
        std::printf("%-10s %-16s %-14s %8.3fx %9.2f us\n", family.c_str(), shape_text.c_str(),
                    std::string(store::LookupRungName(answer.rung)).c_str(),
                    answer.expected_slowdown, answer.predicted_time_us);
        continue;
      }
      store::RowQuery rows;
      rows.device_model = q.device_model;
      rows.family = family;
      rows.shape = *shape;
      auto listed = (*all)->ListRows(rows);
      if (!listed.ok()) continue;
      double best = 0, got = 0;
      for (const store::StoredRow& r : *listed) {
        if (r.measurement.outcome != Outcome::kOk) continue;
        const double t = r.measurement.timing.median_us;
        if (best == 0 || t < best) best = t;
        if (r.measurement.params == answer.winner.params && (got == 0 || t < got)) got = t;
      }
      const double ratio = got > 0 ? best / got : 0;
      ratios[family].push_back(ratio);
      std::printf("%-10s %-16s %-14s %8.3fx %9.2f us %11.2f %11.2f %8s\n", family.c_str(),
                  shape_text.c_str(), std::string(store::LookupRungName(answer.rung)).c_str(),
                  answer.expected_slowdown, answer.predicted_time_us, got, best,
                  got > 0 ? Percent(ratio).c_str() : "unmeasured");
    }
    for (const auto& [family, r] : ratios) std::printf("%s: %s\n", family.c_str(), Summary(r).c_str());
  }

  // Lookup latency, 2000 lookups cycling through the unseen list; then the same shapes asked by
  // a GPU of the architecture that the tables do not hold (an H100), which the SAME_ARCHITECTURE
  // rung answers with the H200 model's prediction.
  auto time_lookups = [&](const std::vector<store::LookupQuery>& queries, const char* what) {
    std::vector<double> us;
    for (int round = 0; round < 2000; ++round) {
      const auto began = std::chrono::steady_clock::now();
      store::LookupResult r = (*grid)->Lookup(queries[round % queries.size()]);
      const auto took = std::chrono::steady_clock::now() - began;
      if (r.winner.params.empty()) return false;
      us.push_back(std::chrono::duration<double, std::micro>(took).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("lookup (Store::Lookup, %s): median %.1f us, p99 %.1f us over %zu lookups\n",
                what, us[us.size() / 2], us[us.size() * 99 / 100], us.size());
    return true;
  };
  if (!asked.empty()) {
    std::printf("\n");
    if (!time_lookups(asked, "PREDICTED/EXACT mix of the unseen list")) return 1;
    std::vector<store::LookupQuery> other = asked;
    for (store::LookupQuery& q : other) q.device_model = "NVIDIA H100 80GB HBM3";
    if (!time_lookups(other, "the same asked by an H100: SAME_ARCHITECTURE")) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cutune

int main(int argc, char** argv) {
  CLI::App app("cutune-predict-bench: leave-one-shape-out and unseen-shape evaluation of the "
               "PREDICTED rung from tuning tables");
  std::string unseen, device = "NVIDIA H200";
  std::vector<std::string> table;
  std::vector<std::string> measured;
  app.add_option("--table", table,
                 "The grid table (with portfolios or rows); several are imported together, as "
                 "cutuned --tables would")
      ->required();
  app.add_option("--measured", measured,
                 "Tables with rows that measured the unseen shapes on --device (without: answers "
                 "only)");
  app.add_option("--device", device,
                 "The GPU model asking for the unseen shapes, whose rows --measured holds (an "
                 "sm_90 model the table does not hold is answered from its architecture)")
      ->capture_default_str();
  app.add_option("--unseen", unseen, "FAMILY SHAPE per line (tables/grid/unseen.txt)");
  std::string csv;
  app.add_option("--csv", csv,
                 "Also write every held-out shape's figures here (CSV, one row per shape: the "
                 "model's ratio, the nearest rule's, the best member's, the slowdowns)");
  CLI11_PARSE(app, argc, argv);
  return cutune::Run(table, measured, unseen, device, csv);
}
