#include "server/tuner/sweep.h"

#include <algorithm>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "server/tuner/candidate.h"
#include "server/tuner/strategy.h"
#include "server/worker/outcome.h"

namespace cutune::tuner {
namespace {

using Clock = std::chrono::steady_clock;
namespace wpb = worker::wpb;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

wpb::TimingPolicy Policy(const TimingOptions& t) {
  wpb::TimingPolicy p;
  p.set_warmup(t.warmup);
  p.set_min_samples(t.min_samples);
  p.set_max_samples(t.max_samples);
  p.set_target_rel_spread(t.target_rel_spread);
  p.set_max_ms(t.max_ms);
  p.set_flush_l2(t.flush_l2);
  return p;
}

// Equal medians are broken by parameters, as the store breaks them, so the winner a sweep
// reports is the one stored.
// What a search hears about a row: its median time when it ran correctly.
std::optional<double> OkTime(const Measurement& row) {
  if (row.outcome != Outcome::kOk) return std::nullopt;
  return row.timing.median_us;
}

bool Faster(const Measurement& a, const Measurement& b) {
  if (a.timing.median_us != b.timing.median_us) return a.timing.median_us < b.timing.median_us;
  return FormatParams(a.params) < FormatParams(b.params);
}

}  // namespace

kernels::DeviceLimits LimitsFrom(const wpb::DeviceInfo& info) {
  kernels::DeviceLimits limits;
  limits.cc_major = info.cc_major();
  limits.cc_minor = info.cc_minor();
  limits.max_threads_per_block = info.max_threads_per_block();
  limits.max_shared_per_block_optin = info.max_shared_per_block_optin();
  limits.max_registers_per_block = info.max_registers_per_block();
  limits.max_shared_per_sm = info.max_shared_per_sm();
  limits.sm_count = info.sm_count();
  return limits;
}

void DeriveFigures(const kernels::KernelFamily& family, const Shape& shape, double reference_us,
                   Measurement& row) {
  if (row.outcome != Outcome::kOk || row.timing.median_us <= 0) return;
  const double seconds = row.timing.median_us * 1e-6;
  row.gbps = family.BytesMoved(shape) / seconds / 1e9;
  row.tflops = family.Flops(shape) / seconds / 1e12;
  row.percent_of_reference = reference_us > 0 ? 100.0 * reference_us / row.timing.median_us : 0;
}

absl::StatusOr<SweepResult> Sweeper::Run(const SweepOptions& options,
                                         const ProgressCallback& on_result,
                                         const std::atomic<bool>* cancel) {
  const auto began = Clock::now();
  if (options.family == nullptr) return absl::InvalidArgumentError("no kernel family given");
  const kernels::KernelFamily& family = *options.family;
  if (auto s = family.ValidateShape(options.shape); !s.ok()) return s;
  if (auto s = CheckBudget(options.max_evaluations, options.max_seconds); !s.ok()) return s;
  const kernels::Space& space = options.space ? *options.space : family.default_space();
  if (auto s = CheckStrategy(options.strategy); !s.ok()) return s;  // a list does not excuse it
  std::unique_ptr<Search> search;
  if (!options.candidates.empty()) {
    for (const Params& params : options.candidates) {
      if (auto s = space.Admit(params, /*strict=*/false); !s.ok()) return s;
    }
    search = ListSearch(options.candidates);
  } else {
    auto made = MakeSearch(space, options.strategy, options.seed, options.max_evaluations);
    if (!made.ok()) return made.status();
    search = *std::move(made);
  }

  auto info = worker_.Start();
  if (!info.ok()) return info.status();
  const kernels::DeviceLimits limits = LimitsFrom(*info);

  SweepResult result;
  result.device = {info->name(), info->uuid(), info->cc_major(), info->cc_minor(),
                   info->sm_count(), info->total_memory_bytes()};
  result.driver_version = info->driver_version();
  result.nvrtc_version = info->nvrtc_version();
  result.arch = limits.Arch();
  result.invalid = search->invalid();

  // Resumed rows count as done and are told to the search, which never proposes them again; up
  // to the evaluation budget of what it proposes is this run's work.
  std::map<std::string, Measurement> finished;
  for (const Measurement& row : options.finished) {
    finished[FormatParams(row.params)] = row;
    search->Tell(row.params, OkTime(row));
  }
  const int64_t quota =
      options.max_evaluations > 0 ? options.max_evaluations : std::numeric_limits<int64_t>::max();

  // Candidates are compiled ahead so that the pool works while the GPU measures: all of them for
  // a fixed order, a window for a search that steers by the results (enough to keep the GPU fed,
  // few enough that each proposal knows nearly every result before it).
  struct Pending {
    Params params;
    std::optional<std::string> pruned;
    std::future<absl::StatusOr<compiler::CompileResult>> compiled;
  };
  // Set when this sweep stops early (cancel, budget, error): its queued compilations are dropped.
  auto abandon = std::make_shared<std::atomic<bool>>(false);
  struct AbandonOnExit {
    std::shared_ptr<std::atomic<bool>> flag;
    ~AbandonOnExit() { flag->store(true); }
  } abandon_on_exit{abandon};
  const size_t window = search->adaptive() ? static_cast<size_t>(2 * std::max(pool_.threads(), 4))
                                           : std::numeric_limits<size_t>::max();
  std::deque<Pending> pending;
  int64_t proposed = 0;
  auto refill = [&] {
    while (pending.size() < window && proposed < quota) {
      const int64_t room = std::min<int64_t>(
          quota - proposed,
          static_cast<int64_t>(std::min<size_t>(window - pending.size(), size_t{1} << 30)));
      std::vector<Params> next = search->Next(static_cast<size_t>(room));
      if (next.empty()) return;
      for (Params& params : next) {
        if (finished.count(FormatParams(params))) continue;
        Pending p;
        p.pruned = family.PruneForDevice(params, limits);
        if (!p.pruned) {
          p.compiled = pool_.Submit(CandidateRequest(family, params, result.arch), abandon);
        }
        p.params = std::move(params);
        pending.push_back(std::move(p));
        ++proposed;
      }
    }
  };
  refill();

  auto phase = Clock::now();
  wpb::Prepare prepare;
  prepare.set_family(std::string(family.name()));
  for (int64_t d : options.shape) prepare.add_shape(d);
  prepare.set_dtype(std::string(DTypeName(options.dtype)));
  prepare.set_seed(options.seed);
  if (auto s = worker_.Prepare(prepare); !s.ok()) return s;
  result.time.prepare = Seconds(phase);

  phase = Clock::now();
  wpb::Reference reference;
  *reference.mutable_timing() = Policy(options.timing);
  auto ref = worker_.Reference(reference, options.candidate_timeout * 3);
  if (ref.ok()) {
    result.reference_name = ref->name();
    result.reference_us = ref->stats().median_us();
  } else {
    // Without a reference the sweep still ranks candidates; only "% of reference" is missing.
    result.reference_name = absl::StrCat("unavailable: ", std::string(ref.status().message()));
  }
  result.time.reference = Seconds(phase);

  Progress progress;
  progress.total = static_cast<int64_t>(finished.size() + pending.size()) +
                   std::min(search->remaining(), quota - proposed);
  auto record = [&](Measurement row) {
    DeriveFigures(family, options.shape, result.reference_us, row);
    ++progress.done;
    ++progress.counts[row.outcome];
    if (row.outcome == Outcome::kOk && (!progress.best || Faster(row, *progress.best))) {
      progress.best = row;
    }
    progress.elapsed_seconds = Seconds(began);
    int64_t measured = progress.done - static_cast<int64_t>(finished.size());
    progress.eta_seconds = measured > 0 ? progress.elapsed_seconds / measured *
                                              static_cast<double>(progress.total - progress.done)
                                        : 0;
    result.rows.push_back(row);
    if (on_result) on_result(result.rows.back(), progress);
  };
  for (auto& [key, row] : finished) {
    Measurement copy = row;
    record(std::move(copy));
  }

  const wpb::TimingPolicy policy = Policy(options.timing);
  // One candidate: its row, or an error that ends the sweep (the worker or NVRTC broke).
  auto evaluate = [&](Pending& p) -> absl::StatusOr<Measurement> {
    Measurement row;
    row.params = p.params;
    if (p.pruned) {
      row.outcome = Outcome::kPruned;
      row.detail = *p.pruned;
      return row;
    }
    const auto waited = Clock::now();
    absl::StatusOr<compiler::CompileResult> compiled = p.compiled.get();
    result.time.compile_wait += Seconds(waited);
    if (!compiled.ok()) return compiled.status();  // NVRTC itself broke: not the candidate's fault
    result.time.compile += compiled->compile_ms / 1000.0;
    if (compiled->from_cache) ++result.cache_hits;
    CompileReport built = ReportCompiled(family, p.params, *compiled, limits);
    row.compile_ms = built.compile_ms;
    row.resources = built.resources;
    if (built.outcome != Outcome::kOk) {
      row.outcome = built.outcome;
      row.detail = std::move(built.detail);
      return row;
    }
    wpb::Run run;
    wpb::Candidate* candidate = run.mutable_candidate();
    candidate->set_key(compiled->key);
    candidate->set_cubin(compiled->cubin);
    candidate->set_kernel(std::string(kernels::KernelFamily::kKernelName));
    LaunchGeometry g = family.Geometry(p.params, options.shape);
    wpb::Geometry* geometry = candidate->mutable_geometry();
    for (uint32_t v : g.grid) geometry->add_grid(v);
    for (uint32_t v : g.block) geometry->add_block(v);
    geometry->set_dynamic_shared_bytes(g.dynamic_shared_bytes);
    *run.mutable_timing() = policy;
    run.set_verify(options.verify);
    const std::string key = FormatParams(p.params);
    run.set_debug_hang(options.debug_hang.count(key) > 0);
    run.set_debug_crash(options.debug_crash.count(key) > 0);

    const auto sent = Clock::now();
    auto ran = worker_.Run(run, options.candidate_timeout);
    result.time.gpu += Seconds(sent);
    if (!ran.ok()) return ran.status();
    result.time.load += ran->load_ms() / 1000;
    result.time.verify += ran->verify_ms() / 1000;
    result.time.timing += ran->time_ms() / 1000;
    if (ran->registers() > 0) {
      // Whatever the compile report lacked (some NVRTC builds log nothing; the cubin carries no
      // shared-memory figure), take from the driver's account of the loaded function.
      if (row.resources.registers == 0) row.resources.registers = ran->registers();
      if (row.resources.static_shared_bytes == 0) {
        row.resources.static_shared_bytes = ran->static_shared_bytes();
      }
      if (row.resources.stack_bytes == 0) row.resources.stack_bytes = ran->local_bytes();
    }
    row.outcome = worker::FromProto(ran->outcome());
    row.detail = ran->detail();
    row.timing = {ran->stats().samples(), ran->stats().median_us(), ran->stats().min_us(),
                  ran->stats().rel_spread()};
    return row;
  };
  while (!pending.empty()) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    if (options.max_seconds > 0 && Seconds(began) > options.max_seconds) {
      result.budget_exhausted = true;
      break;
    }
    absl::StatusOr<Measurement> row = evaluate(pending.front());
    if (!row.ok()) return row.status();
    pending.pop_front();
    search->Tell(row->params, OkTime(*row));
    record(*std::move(row));
    refill();
  }
  // The evaluation budget stopped a search that had more to propose.
  if (proposed >= quota && search->remaining() > 0) result.budget_exhausted = true;

  // Finalists: re-measured in turns, so that a drift in clocks or temperature hits all alike.
  phase = Clock::now();
  std::vector<size_t> ok_rows;
  for (size_t i = 0; i < result.rows.size(); ++i) {
    if (result.rows[i].outcome == Outcome::kOk) ok_rows.push_back(i);
  }
  std::sort(ok_rows.begin(), ok_rows.end(),
            [&](size_t a, size_t b) { return Faster(result.rows[a], result.rows[b]); });
  if (ok_rows.size() > static_cast<size_t>(std::max(options.finalists, 0))) {
    ok_rows.resize(std::max(options.finalists, 0));
  }
  const bool stopped = result.cancelled || (cancel != nullptr && cancel->load()) ||
                       (options.max_seconds > 0 && Seconds(began) > options.max_seconds);
  if (ok_rows.size() > 1 && !stopped) {
    std::map<size_t, std::vector<double>> medians;
    std::map<size_t, wpb::Run> runs;
    for (size_t i : ok_rows) {
      medians[i].push_back(result.rows[i].timing.median_us);
      auto compiled = pool_.Submit(CandidateRequest(family, result.rows[i].params, result.arch)).get();
      if (!compiled.ok() || !compiled->ok) continue;
      wpb::Run& run = runs[i];
      run.mutable_candidate()->set_key(compiled->key);
      run.mutable_candidate()->set_cubin(compiled->cubin);
      run.mutable_candidate()->set_kernel(std::string(kernels::KernelFamily::kKernelName));
      LaunchGeometry g = family.Geometry(result.rows[i].params, options.shape);
      for (uint32_t v : g.grid) run.mutable_candidate()->mutable_geometry()->add_grid(v);
      for (uint32_t v : g.block) run.mutable_candidate()->mutable_geometry()->add_block(v);
      run.mutable_candidate()->mutable_geometry()->set_dynamic_shared_bytes(g.dynamic_shared_bytes);
      *run.mutable_timing() = policy;
      run.set_verify(false);  // verified already; these runs only time
    }
    for (int round = 0; round < options.remeasure_rounds; ++round) {
      if ((cancel != nullptr && cancel->load()) ||
          (options.max_seconds > 0 && Seconds(began) > options.max_seconds)) {
        break;  // the budget also bounds the finalists' re-measurement
      }
      for (auto& [i, run] : runs) {
        auto ran = worker_.Run(run, options.candidate_timeout);
        if (ran.ok() && ran->outcome() == wpb::OUTCOME_OK) {
          medians[i].push_back(ran->stats().median_us());
          result.rows[i].timing.samples += ran->stats().samples();
        }
      }
    }
    for (auto& [i, values] : medians) {
      std::sort(values.begin(), values.end());
      size_t n = values.size();
      result.rows[i].timing.median_us =
          n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
      DeriveFigures(family, options.shape, result.reference_us, result.rows[i]);
    }
  }
  result.time.remeasure = Seconds(phase);
  for (size_t i : ok_rows) {
    if (!result.winner || Faster(result.rows[i], result.rows[*result.winner])) result.winner = i;
  }
  result.worker_restarts = worker_.restarts();
  result.time.wall = Seconds(began);
  return result;
}

}  // namespace cutune::tuner
