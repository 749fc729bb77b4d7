// `cutune space show FAMILY` and `cutune space compile FAMILY --arch sm_90`: the search spaces,
// and compiling every candidate locally (no daemon, no GPU needed).
#include <iostream>
#include <map>
#include <memory>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json.h"
#include "client/cli/render.h"
#include "cutune/v1/cli.pb.h"
#include "kernels/family.h"
#include "server/compiler/cache.h"
#include "server/compiler/pool.h"
#include "server/service/answer.h"
#include "server/tuner/compile_space.h"

namespace cutune::cli {
namespace {

namespace pb = ::cutune::v1;

int ShowSpace(const std::string& name, bool json) {
  auto family = kernels::GetFamily(name);
  if (!family.ok()) return ReportError(family.status());
  const kernels::Space& space = (*family)->default_space();
  int64_t valid = 0;
  space.ForEachValid([&](uint64_t, const Params&) { ++valid; });
  if (json) {
    pb::SpaceReport report;
    service::FillFamily(**family, report.mutable_family());
    report.set_space_version((*family)->space_version());
    report.set_valid_size(valid);
    return PrintJson(report);
  }
  std::cout << (*family)->name() << ": " << (*family)->description() << "\n"
            << "shape: " << absl::StrJoin((*family)->dims(), " x ") << "\n"
            << "source hash: " << (*family)->source_hash().substr(0, 16) << "  space version "
            << (*family)->space_version() << "\n\n";
  Table table({"parameter", "values", "meaning"});
  for (const auto& p : space.parameters()) {
    table.Add({p.name, absl::StrJoin(p.values, " "), p.help});
  }
  std::cout << table.Render() << "\nconstraints:\n";
  for (const auto& c : space.constraints()) std::cout << "  - " << c.text << "\n";
  std::cout << "\nsize: " << space.CartesianSize() << " combinations, " << valid
            << " valid candidates\n"
            << "baseline (seed kernel): " << FormatParams((*family)->baseline()) << "\n";
  return kExitOk;
}

struct ShowOptions {
  std::string family;
  bool json = false;
};

struct CompileOptions {
  std::string family;
  std::string arch = "sm_90";
  bool json = false;
  bool csv = false;
  bool no_cache = false;
  int threads = 0;
  int top = 0;
  std::string shape;  // empty: shape-free (matmul's aligned class)  // candidates listed, in space order (0: all); the summary counts all
};

// `space compile --csv`: one row per candidate in space order, with what NVRTC and ptxas say
// of it. No compile time and no cache flag: those change from run to run, and two runs of one
// NVRTC over one space should diff clean (--json has them).
std::string CompileCsv(const std::vector<tuner::CompileReport>& candidates, size_t listed) {
  std::vector<std::string> names;
  if (!candidates.empty()) {
    for (const auto& [name, value] : candidates.front().params) names.push_back(name);
  }
  std::vector<std::string> header = {"index"};
  header.insert(header.end(), names.begin(), names.end());
  for (const char* column : {"outcome", "registers", "shared_bytes", "stack_bytes",
                             "spill_store_bytes", "spill_load_bytes", "reason"}) {
    header.push_back(column);
  }
  std::string out = CsvRecord(header);
  for (size_t i = 0; i < listed; ++i) {
    const tuner::CompileReport& c = candidates[i];
    std::vector<std::string> fields = {absl::StrCat(i)};
    for (const std::string& name : names) {
      auto it = c.params.find(name);
      fields.push_back(it == c.params.end() ? "" : absl::StrCat(it->second));
    }
    const bool compiled = c.outcome != Outcome::kCompileFailed;
    fields.push_back(std::string(OutcomeName(c.outcome)));
    for (int64_t figure : {static_cast<int64_t>(c.resources.registers),
                           static_cast<int64_t>(c.resources.static_shared_bytes),
                           static_cast<int64_t>(c.resources.stack_bytes),
                           static_cast<int64_t>(c.resources.spill_store_bytes),
                           static_cast<int64_t>(c.resources.spill_load_bytes)}) {
      fields.push_back(compiled ? absl::StrCat(figure) : "");
    }
    fields.push_back(c.detail.substr(0, c.detail.find('\n')));
    out += CsvRecord(fields);
  }
  return out;
}

int CompileSpace(const CompileOptions& options) {
  const std::string& arch = options.arch;
  const bool json = options.json;
  const bool quiet = json || options.csv;  // machine output: no bar
  auto family = kernels::GetFamily(options.family);
  if (!family.ok()) return ReportError(family.status());
  Shape shape;
  if (!options.shape.empty()) {
    auto parsed = ParseShape(options.shape);
    if (!parsed.ok()) return ReportError(parsed.status());
    shape = *std::move(parsed);
  }
  std::optional<compiler::CompileCache> cache;
  if (!options.no_cache) {
    auto dir = compiler::DefaultCacheDirectory();
    if (dir.ok()) {
      auto opened = compiler::CompileCache::Open(*dir);
      if (opened.ok()) cache = std::move(*opened);
    }
  }
  compiler::CachingCompiler compiler(std::move(cache));
  compiler::CompilePool pool(compiler, options.threads);
  ProgressBar bar(!quiet);
  auto compiled =
      tuner::CompileSpace(**family, (*family)->default_space(), arch, shape, pool,
                          [&](const tuner::CompileReport& report, size_t done, size_t total) {
                            bar.Update(static_cast<int64_t>(done), static_cast<int64_t>(total),
                                       FormatParams(report.params));
                          });
  bar.Finish();
  if (!compiled.ok()) return ReportError(compiled.status());

  std::map<Outcome, int64_t> counts;
  std::map<std::string, int64_t> prune_reasons;
  int64_t spilling = 0, cache_hits = 0;
  double compile_ms = 0;
  for (const auto& c : compiled->candidates) {
    ++counts[c.outcome];
    if (c.outcome == Outcome::kPruned) ++prune_reasons[c.detail];
    if (Spills(c.resources)) ++spilling;
    if (c.from_cache) ++cache_hits;
    compile_ms += c.compile_ms;
  }
  const size_t listed = options.top > 0 ? std::min<size_t>(options.top, compiled->candidates.size())
                                         : compiled->candidates.size();
  if (options.csv) {
    std::cout << CompileCsv(compiled->candidates, listed);
  } else if (json) {
    pb::SpaceCompileReport report;
    report.set_family(std::string((*family)->name()));
    report.set_arch(compiled->arch);
    for (size_t i = 0; i < listed; ++i) {
      const tuner::CompileReport& c = compiled->candidates[i];
      pb::CompiledCandidate* candidate = report.add_candidates();
      for (const auto& [name, value] : c.params) (*candidate->mutable_params())[name] = value;
      candidate->set_outcome(service::ToProto(c.outcome));
      candidate->set_detail(c.detail);
      candidate->set_registers(c.resources.registers);
      candidate->set_shared_bytes(c.resources.static_shared_bytes);
      candidate->set_stack_bytes(c.resources.stack_bytes);
      candidate->set_spill_store_bytes(c.resources.spill_store_bytes);
      candidate->set_spill_load_bytes(c.resources.spill_load_bytes);
      candidate->set_compile_ms(c.compile_ms);
      candidate->set_cached(c.from_cache);
    }
    pb::SpaceCompileSummary* summary = report.mutable_summary();
    summary->set_cartesian_size(compiled->cartesian);
    summary->set_invalid(compiled->invalid);
    summary->set_candidates(static_cast<int64_t>(compiled->candidates.size()));
    for (const auto& [outcome, count] : counts) {
      if (count > 0) {
        (*summary->mutable_outcome_counts())[pb::Outcome_Name(service::ToProto(outcome))] = count;
      }
    }
    summary->set_spilling(spilling);
    summary->set_cache_hits(cache_hits);
    summary->set_compile_ms_total(compile_ms);
    summary->set_wall_seconds(compiled->wall_seconds);
    summary->set_threads(pool.threads());
    if (int code = PrintJson(report); code != kExitOk) return code;
  } else {
    Table table({"#", "parameters", "status", "regs", "smem", "stack", "spills", "ms", "note"});
    table.DropFirst({7, 5, 6});  // on a narrow terminal: ms, stack, spills, then cut the note
    table.Elastic(8, 12);
    for (size_t index = 0; index < listed; ++index) {
      const tuner::CompileReport& c = compiled->candidates[index];
      std::string note = c.outcome == Outcome::kOk ? (c.from_cache ? "cached" : "")
                                                   : c.detail.substr(0, c.detail.find('\n'));
      table.Add(
          {std::to_string(index), FormatParams(c.params), std::string(OutcomeName(c.outcome)),
           c.outcome == Outcome::kCompileFailed ? "" : std::to_string(c.resources.registers),
           std::to_string(c.resources.static_shared_bytes), std::to_string(c.resources.stack_bytes),
           std::to_string(c.resources.spill_store_bytes + c.resources.spill_load_bytes),
           FormatDouble(c.compile_ms, 1), note});
    }
    std::cout << table.Render(OutputColumns());
    if (listed < compiled->candidates.size()) {
      std::cout << "(the first " << listed << " of " << compiled->candidates.size()
                << " candidates in space order; --top 0 lists all)\n";
    }
    std::cout << absl::StrFormat(
        "\n%s for %s: %d candidates (%d combinations, %d break a constraint)\n"
        "  compiled %d, pruned %d, compile failed %d; %d spill; %d from cache\n"
        "  NVRTC time %.1f s on %d threads, wall %.1f s\n",
        std::string((*family)->name()), compiled->arch, compiled->candidates.size(),
        compiled->cartesian, compiled->invalid, counts[Outcome::kOk], counts[Outcome::kPruned],
        counts[Outcome::kCompileFailed], spilling, cache_hits, compile_ms / 1000, pool.threads(),
        compiled->wall_seconds);
    for (const auto& [reason, n] : prune_reasons) {
      std::cout << "  pruned " << n << ": " << reason << "\n";
    }
  }
  return counts[Outcome::kCompileFailed] > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void AddSpaceCommands(CLI::App& app, Context& context) {
  CLI::App* space =
      app.add_subcommand("space", "Inspect and compile kernel search spaces (no GPU)");
  space->require_subcommand(1);
  {
    auto options = std::make_shared<ShowOptions>();
    CLI::App* show =
        space->add_subcommand("show", "Parameters, constraints and size of a family's space");
    show->add_option("family", options->family, "Kernel family (transpose, matmul)")->required();
    show->add_flag("--json", options->json, "Machine-readable output");
    show->callback([&context, options] {
      context.action = [options] { return ShowSpace(options->family, options->json); };
    });
  }
  {
    auto options = std::make_shared<CompileOptions>();
    CLI::App* compile = space->add_subcommand(
        "compile", "Compile every candidate locally for an architecture and report resources");
    compile->add_option("family", options->family, "Kernel family (transpose, matmul)")->required();
    compile->add_option("--arch", options->arch, "Target architecture, e.g. sm_80, sm_90")
        ->capture_default_str();
    auto* json = compile->add_flag("--json", options->json, "Machine-readable output");
    compile->add_flag("--csv", options->csv,
                      "CSV: a header, then one row per candidate in space order (index, one "
                      "column per parameter, outcome, registers, shared/stack/spill bytes, "
                      "reason)")
        ->excludes(json);
    compile->add_option("--top", options->top,
                        "List only the first N candidates in space order (the # column; "
                        "there is no timing to rank by), with --json and --csv too; the summary "
                        "still counts every candidate (0: all)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    compile->add_option("--shape", options->shape,
                        "Compile the candidates as they run at this shape (MxNxK: matmul's "
                        "misaligned K or N build their fast path for it); default: shape-free, "
                        "as aligned shapes run");
    compile->add_option("--threads", options->threads, "Compile threads (0: one per core)");
    compile->add_flag("--no-cache", options->no_cache, "Bypass the on-disk compile cache");
    compile->callback(
        [&context, options] { context.action = [options] { return CompileSpace(*options); }; });
  }
}

}  // namespace cutune::cli
