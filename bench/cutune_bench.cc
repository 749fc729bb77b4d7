// cutune-bench: the measured targets in one run on a GPU host. Sweeps the default spaces through
// the same tuner, compile pool and worker process the daemon uses, and prints each figure next
// to its target: tuned transpose vs device copy, tuned matmul vs cuBLAS SGEMM (no tensor cores),
// and sweep wall times with a cold and a warm compile cache.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "server/compiler/cache.h"
#include "server/compiler/pool.h"
#include "server/service/offline_table.h"
#include "server/store/quick_start.h"
#include "server/tuner/sweep.h"
#include "server/worker/supervisor.h"

namespace {

using namespace cutune;

struct Row {
  std::string what;
  std::string value;
  std::string target;
  std::string verdict;  // "pass", "MISS", or "" (information)
};

std::vector<Row> rows;
nlohmann::ordered_json record;

void Add(std::string what, std::string value, std::string target = "", std::optional<bool> pass = {}) {
  rows.push_back({std::move(what), std::move(value), std::move(target),
                  pass ? (*pass ? "pass" : "MISS") : ""});
}

std::vector<Params> Top(const tuner::SweepResult& r, size_t n) {
  std::vector<const Measurement*> ok;
  for (const Measurement& m : r.rows) {
    if (m.outcome == Outcome::kOk) ok.push_back(&m);
  }
  std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) {
    return a->timing.median_us < b->timing.median_us;
  });
  std::vector<Params> out;
  for (size_t i = 0; i < ok.size() && i < n; ++i) out.push_back(ok[i]->params);
  return out;
}

nlohmann::ordered_json Summary(const tuner::SweepResult& r) {
  nlohmann::ordered_json j;
  std::map<std::string, int> counts;
  for (const Measurement& m : r.rows) ++counts[std::string(OutcomeName(m.outcome))];
  j["candidates"] = r.rows.size();
  j["outcomes"] = counts;
  j["wall_s"] = r.time.wall;
  j["compile_s"] = r.time.compile;
  j["compile_wait_s"] = r.time.compile_wait;
  j["prepare_s"] = r.time.prepare;
  j["reference_s"] = r.time.reference;
  j["gpu_s"] = r.time.gpu;
  j["load_s"] = r.time.load;
  j["verify_s"] = r.time.verify;
  j["timing_s"] = r.time.timing;
  j["remeasure_s"] = r.time.remeasure;
  j["cache_hits"] = r.cache_hits;
  j["reference"] = r.reference_name;
  j["reference_us"] = r.reference_us;
  if (r.winner) {
    const Measurement& w = r.rows[*r.winner];
    j["winner"] = FormatParams(w.params);
    j["winner_us"] = w.timing.median_us;
    j["winner_gbps"] = w.gbps;
    j["winner_tflops"] = w.tflops;
    j["winner_percent_of_reference"] = w.percent_of_reference;
    j["winner_registers"] = w.resources.registers;
    j["winner_spill_bytes"] = w.resources.spill_store_bytes + w.resources.spill_load_bytes;
  }
  return j;
}

void PrintSweep(const std::string& label, const tuner::SweepResult& r) {
  std::map<std::string, int> counts;
  for (const Measurement& m : r.rows) ++counts[std::string(OutcomeName(m.outcome))];
  std::string outcomes;
  for (const auto& [k, v] : counts) outcomes += absl::StrFormat("%s %d  ", k, v);
  std::cerr << absl::StrFormat(
      "[%s] %zu candidates in %.2f s (%.1f/s): %s\n"
      "    time: compile %.2f s (summed over threads), GPU idle waiting for compiles %.2f s, "
      "prepare %.2f s, reference %.2f s, candidates on GPU %.2f s (load %.2f, verify %.2f, "
      "time %.2f, the rest worker round trips), finalists %.2f s; %lld cache hits\n",
      label, r.rows.size(), r.time.wall, r.rows.size() / std::max(r.time.wall, 1e-9), outcomes,
      r.time.compile, r.time.compile_wait, r.time.prepare, r.time.reference, r.time.gpu,
      r.time.load, r.time.verify, r.time.timing, r.time.remeasure,
      static_cast<long long>(r.cache_hits));
  if (r.winner) {
    const Measurement& w = r.rows[*r.winner];
    std::cerr << absl::StrFormat(
        "    winner %s: %.1f us, %.0f GB/s, %.2f TFLOP/s, %.1f%% of %s (%.1f us); %d regs, %d "
        "spill bytes\n",
        FormatParams(w.params), w.timing.median_us, w.gbps, w.tflops, w.percent_of_reference,
        r.reference_name, r.reference_us, w.resources.registers,
        w.resources.spill_store_bytes + w.resources.spill_load_bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cutune-bench: the measured targets of cutune in one GPU run"};
  std::string json_out, cache_dir, table = "tables/nvidia-h200.json";
  bool skip_matmul = false, skip_transpose = false, awkward_only = false;
  int device = 0;
  app.add_option("--json", json_out, "Also write every figure to this JSON file");
  app.add_option("--cache-dir", cache_dir,
                 "Compile cache (default: a fresh empty directory, so the first sweep is cold)");
  app.add_option("--device", device, "GPU ordinal");
  app.add_flag("--skip-matmul", skip_matmul, "Transpose figures only");
  app.add_flag("--skip-transpose", skip_transpose, "Matmul figures only (with the awkward set)");
  app.add_flag("--awkward-only", awkward_only, "Only the awkward matmul set");
  std::vector<std::string> only;
  app.add_option("--only", only,
                 "Only these shapes of the awkward set (MxNxK, repeatable; default: all 14)");
  app.add_option("--table", table,
                 "Table the awkward shapes' quick sweeps start from, as a daemon holding it does");
  CLI11_PARSE(app, argc, argv);

  if (cache_dir.empty()) {
    cache_dir = absl::StrFormat("/tmp/cutune-bench-cache-%d", getpid());
    std::filesystem::remove_all(cache_dir);
  }
  auto cache = compiler::CompileCache::Open(cache_dir);
  if (!cache.ok()) {
    std::cerr << "cutune-bench: " << cache.status() << "\n";
    return 1;
  }
  compiler::CachingCompiler compiler(std::move(*cache));
  compiler::CompilePool pool(compiler);
  worker::WorkerProcess worker({.executable = "", .ordinal = device});
  auto info = worker.Start();
  if (!info.ok()) {
    std::cerr << "cutune-bench: " << info.status() << "\n";
    return 3;
  }
  std::cerr << "cutune-bench: " << info->name() << " (sm_" << info->cc_major() << info->cc_minor()
            << ", " << info->sm_count() << " SMs), driver " << info->driver_version() << ", NVRTC "
            << info->nvrtc_version() << ", " << pool.threads() << " compile threads\n";
  record["device"] = info->name();
  record["driver"] = info->driver_version();
  record["nvrtc"] = info->nvrtc_version();
  record["compile_threads"] = pool.threads();
  tuner::Sweeper sweeper(pool, worker);

  auto sweep = [&](const std::string& label, const kernels::KernelFamily& family, Shape shape,
                   std::vector<Params> candidates,
                   std::string strategy = "brute_force") -> std::optional<tuner::SweepResult> {
    tuner::SweepOptions options;
    options.family = &family;
    options.shape = std::move(shape);
    options.candidates = std::move(candidates);
    options.strategy = std::move(strategy);
    auto result = sweeper.Run(options, nullptr);
    if (!result.ok()) {
      std::cerr << "[" << label << "] failed: " << result.status() << "\n";
      Add(label, "failed: " + std::string(result.status().message()));
      return std::nullopt;
    }
    PrintSweep(label, *result);
    record["sweeps"][label] = Summary(*result);
    return std::move(*result);
  };
  auto best_percent = [](const tuner::SweepResult& r) {
    return r.winner ? r.rows[*r.winner].percent_of_reference : 0.0;
  };

  const kernels::KernelFamily& transpose = kernels::TransposeFamily();
  const kernels::KernelFamily& matmul = kernels::MatmulFamily();

  auto t8k = awkward_only || skip_transpose
                 ? std::nullopt
                          : sweep("transpose 8192x8192 (cold cache)", transpose, {8192, 8192}, {});
  if (t8k) {
    Add("transpose 8192^2 sweep: candidates", std::to_string(t8k->rows.size()), ">= 400",
        t8k->rows.size() >= 400);
    Add("transpose 8192^2 sweep: wall (cold compile cache)",
        absl::StrFormat("%.2f s (%.0f cand/s)", t8k->time.wall, t8k->rows.size() / t8k->time.wall),
        "<= 10 s", t8k->time.wall <= 10);
    Add("transpose 8192^2 best vs copy", absl::StrFormat("%.1f%%", best_percent(*t8k)), ">= 92%",
        best_percent(*t8k) >= 92);
    auto again = sweep("transpose 8192x8192 (warm cache)", transpose, {8192, 8192}, {});
    if (again) {
      Add("transpose 8192^2 sweep: wall (warm compile cache)",
          absl::StrFormat("%.2f s, %lld/%zu from cache", again->time.wall,
                          static_cast<long long>(again->cache_hits), again->rows.size()),
          "served from cache", again->cache_hits > 0);
    }
    auto t16k = sweep("transpose 16384x16384 (top 24 of 8192^2)", transpose, {16384, 16384},
                      Top(*t8k, 24));
    if (t16k) {
      Add("transpose 16384^2 best vs copy", absl::StrFormat("%.1f%%", best_percent(*t16k)),
          ">= 95%", best_percent(*t16k) >= 95);
    }
  }
  // Rows or columns that are not a multiple of 4: every row starts off a 16-byte boundary, so
  // vector accesses need the per-row peeling (issue 16's target: >= 93% of copy each).
  for (Shape shape : {Shape{8191, 4097}, Shape{4097, 8191}, Shape{3001, 20001}, Shape{12287, 3071}}) {
    if (awkward_only || skip_transpose) break;
    const std::string name = "transpose " + FormatShape(shape);
    auto odd = sweep(name, transpose, shape, {});
    if (odd) {
      Add(name + " best vs copy", absl::StrFormat("%.1f%%", best_percent(*odd)), ">= 93%",
          best_percent(*odd) >= 93);
    }
  }
  if (!skip_matmul && !awkward_only) {
    auto m4k = sweep("matmul 4096x4096x4096", matmul, {4096, 4096, 4096}, {});
    if (m4k) {
      Add("matmul 4096^3 sweep: candidates", std::to_string(m4k->rows.size()), ">= 500",
          m4k->rows.size() >= 500);
      Add("matmul 4096^3 sweep: wall", absl::StrFormat("%.1f s", m4k->time.wall), "<= 120 s",
          m4k->time.wall <= 120);
      const double tflops = m4k->winner ? m4k->rows[*m4k->winner].tflops : 0;
      Add("matmul 4096^3 best vs cuBLAS",
          absl::StrFormat("%.1f%% (%.1f TFLOP/s)", best_percent(*m4k), tflops), ">= 95%",
          best_percent(*m4k) >= 95);
      // 8192^3 is where 4096^3's best stay best (a full sweep there would take minutes); the odd
      // and skinny shapes pick different kernels, so they get a full sweep of their own.
      for (Shape shape : {Shape{8192, 8192, 8192}, Shape{4097, 1023, 777}, Shape{8192, 64, 8192}}) {
        const bool full = shape[0] * shape[1] * shape[2] < int64_t{1} << 35;
        std::string label = "matmul " + FormatShape(shape) + (full ? "" : " (top 24 of 4096^3)");
        auto r = sweep(label, matmul, shape, full ? std::vector<Params>{} : Top(*m4k, 24));
        if (r) {
          Add("matmul " + FormatShape(shape) + " best vs cuBLAS",
              absl::StrFormat("%.1f%% (%.1f TFLOP/s)", best_percent(*r),
                              r->winner ? r->rows[*r->winner].tflops : 0.0),
              shape[0] == 8192 && shape[1] == 8192 ? ">= 95%" : "report",
              shape[0] == 8192 && shape[1] == 8192 ? std::optional<bool>(best_percent(*r) >= 95)
                                                   : std::nullopt);
        }
      }
    }
  }

  // The awkward set (issue 16): skinny M or N with large partners, K >= 8 max(M, N), small K,
  // odd and prime sizes; the best of the whole space (a full sweep: what the kernels can do),
  // then quick from the shipped portfolio (what ANSWER_NOW_AND_TUNE finds in seconds), against
  // cuBLAS SGEMM. Targets for the full sweeps: median >= 95%, worst >= 90%.
  if (!skip_matmul) {
    // The quick rows start where a daemon holding only `table` starts ANSWER_NOW_AND_TUNE's
    // sweep on this GPU (store/quick_start.h): its own portfolio, else that of a device of the
    // same architecture in the table, then the family's starters; without the table, where a
    // daemon holding none starts it (the starters, then the baseline).
    auto offline = service::OfflineTable::Open(table);
    if (!offline.ok()) std::cerr << "cutune-bench: " << offline.status() << "\n";
    const store::DeviceModel self{info->name(), info->cc_major(), info->cc_minor(),
                                  info->sm_count(), info->total_memory_bytes()};
    auto start_of = [&](const Shape& shape) {
      absl::StatusOr<std::vector<Params>> start =
          offline.ok() ? (*offline)->QuickStart(self, matmul, DType::kF32, shape)
                       : absl::StatusOr<std::vector<Params>>(offline.status());
      if (offline.ok() && !start.ok()) std::cerr << "cutune-bench: " << start.status() << "\n";
      return start.ok() ? *start : store::QuickStartOfNothing(matmul.starters(), matmul.baseline());
    };
    std::cerr << "awkward set: quick from " << start_of({4096, 4096, 4096}).size()
              << " configurations of " << table << " (its portfolio and winners for "
              << info->name() << " or its architecture, the family's starters, the baseline)\n";
    std::vector<double> awkward, awkward_quick;
    for (Shape shape : {Shape{4097, 1023, 777}, Shape{127, 8192, 4096}, Shape{2048, 512, 8192},
                        Shape{16, 8192, 8192}, Shape{8192, 32, 8192}, Shape{64, 16384, 4096},
                        Shape{200, 12000, 3000}, Shape{12000, 200, 3000}, Shape{256, 256, 16384},
                        Shape{1024, 1024, 16384}, Shape{4096, 4096, 32}, Shape{8192, 8192, 64},
                        Shape{1021, 2039, 4093}, Shape{3001, 5003, 1009}}) {
      if (!only.empty() && std::find(only.begin(), only.end(), FormatShape(shape)) == only.end()) {
        continue;
      }
      auto full = sweep("matmul " + FormatShape(shape) + " (awkward, full)", matmul, shape, {});
      auto quick = sweep("matmul " + FormatShape(shape) + " (awkward, quick)", matmul, shape,
                         start_of(shape), "quick");
      if (!full || !quick) continue;
      awkward.push_back(best_percent(*full));
      awkward_quick.push_back(best_percent(*quick));
      Add("awkward " + FormatShape(shape) + " vs cuBLAS: full / quick",
          absl::StrFormat("%.1f%% / %.1f%% (%.1f TFLOP/s)", best_percent(*full),
                          best_percent(*quick), full->winner ? full->rows[*full->winner].tflops : 0.0),
          "report");
    }
    auto add_summary = [&](std::vector<double> v, const std::string& what, bool target) {
      if (v.empty()) return;
      std::sort(v.begin(), v.end());
      const double median = v[v.size() / 2];
      Add(absl::StrFormat("awkward set (%zu shapes, %s) median vs cuBLAS", v.size(), what),
          absl::StrFormat("%.1f%%", median), target ? ">= 95%" : "report",
          target ? std::optional<bool>(median >= 95) : std::nullopt);
      Add(absl::StrFormat("awkward set (%zu shapes, %s) worst vs cuBLAS", v.size(), what),
          absl::StrFormat("%.1f%%", v.front()), target ? ">= 90%" : "report",
          target ? std::optional<bool>(v.front() >= 90) : std::nullopt);
    };
    add_summary(awkward, "full", true);
    add_summary(awkward_quick, "quick", false);
  }

  std::cout << "\n"
            << absl::StrFormat("%-52s %-34s %-20s %s\n", "figure", "measured", "target", "");
  for (const Row& row : rows) {
    std::cout << absl::StrFormat("%-52s %-34s %-20s %s\n", row.what, row.value, row.target,
                                 row.verdict);
    record["figures"].push_back(
        {{"what", row.what}, {"value", row.value}, {"target", row.target}, {"verdict", row.verdict}});
  }
  if (!json_out.empty()) std::ofstream(json_out) << record.dump(2) << "\n";
  return 0;
}
