#include "server/tuner/sweep.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/tuner/candidate.h"
#include "server/tuner/strategy.h"
#include "server/tuner/timing.h"
#include "server/tuner/winner.h"
#include "server/worker/outcome.h"

namespace cutune::tuner {
namespace {

using Clock = std::chrono::steady_clock;
namespace wpb = worker::wpb;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

TimingOptions TimingFor(std::string_view strategy, TimingOptions base) {
  if (strategy != "quick") return base;
  base.warmup = std::min(base.warmup, 1);
  base.min_samples = std::min(base.min_samples, 3);
  base.max_samples = std::max(base.min_samples, std::min(base.max_samples, 50));
  base.target_rel_spread = std::max(base.target_rel_spread, 0.02);
  base.max_ms = base.max_ms > 0 ? std::min(base.max_ms, 50.0) : 50.0;
  base.abandon_factor = kQuickAbandonFactor;
  return base;
}

namespace {

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

// What a search hears about a row: its median time when it ran correctly.
std::optional<double> OkTime(const Measurement& row) {
  if (row.outcome != Outcome::kOk) return std::nullopt;
  return row.timing.median_us;
}


// A proposed candidate on its way to the GPU: pruned before compilation, or compiling on the pool.
struct Pending {
  Params params;
  std::optional<std::string> pruned;
  std::future<absl::StatusOr<compiler::CompileResult>> compiled;
};

// What measuring one candidate added to the sweep's totals, kept apart while GPUs measure in
// parallel and added in under the sweep's lock.
struct Tally {
  TimeBreakdown time;
  int64_t cache_hits = 0;
  bool worker_failed = false;  // the error came from the GPU's worker, not from NVRTC
};

// One Sweeper::Run, as the phases Run calls in turn: Plan, Prepare, Evaluate, RemeasureFinalists,
// Finish. Each phase leaves its part of the result (and of the time breakdown) in `result_`.
class SweepRun {
 public:
  SweepRun(compiler::CompilePool& pool, std::vector<worker::WorkerProcess*> workers,
           const SweepOptions& options, const ProgressCallback& on_result,
           const std::atomic<bool>* cancel)
      : pool_(pool),
        workers_(std::move(workers)),
        options_(options),
        on_result_(on_result),
        cancel_(cancel),
        policy_(Policy(options.timing)),
        explore_timing_(TimingFor(options.strategy, options.timing)),
        explore_policy_(Policy(explore_timing_)) {}
  // However the run ends (cancel, budget, error), its compilations still queued are dropped.
  ~SweepRun() { abandon_->store(true); }

  absl::StatusOr<SweepResult> Run();

 private:
  // Checks the options and makes the search, starts the workers (the first GPU's limits prune
  // candidates; every GPU must be of its model), takes in the resumed rows and starts compiling
  // ahead.
  absl::Status Plan();
  // The problem's buffers, inputs and reference output on every GPU, and the reference's figure
  // on the first. A GPU other than the first that cannot prepare leaves the sweep.
  absl::Status Prepare();
  // Every candidate the search proposes to a row, in turn, until it is done, the budget is spent
  // or the sweep is cancelled; each GPU takes the next candidate as it becomes free. Errors only
  // for failures that are no candidate's.
  absl::Status Evaluate();
  // One GPU's share of Evaluate: candidates taken from the queue until there are none left,
  // the sweep stops, or this GPU's worker fails (a GPU other than the first then leaves the
  // sweep, giving its candidate back).
  void Drive(size_t w);
  // The fastest few ok rows timed again in turns, each row's median replaced by the median of
  // its medians, so that a drift in clocks or temperature hits all alike.
  void RemeasureFinalists();
  // At most this many times SweepOptions::finalists rows are re-measured (with challengers).
  static constexpr size_t kChallengerFactor = 3;
  // The winner: the canonical first of the finalists tied with the fastest (winner.h); and the
  // totals.
  void Finish();

  // Proposes and submits candidates until the compile-ahead window is full or the quota reached.
  void Refill();
  // One candidate on one GPU: its row, or an error (the worker or NVRTC broke). Its timing
  // stops at the first sample above `abandon_above_us` (0: never).
  absl::StatusOr<Measurement> EvaluateOne(Pending& pending, worker::WorkerProcess& worker,
                                          double abandon_above_us, Tally& tally);
  // Adds a row measured by `workers_[w]` (-1: resumed) to the result and reports it with the
  // progress so far.
  void Record(Measurement row, int w);
  // Takes a GPU out of a sharded sweep, with why.
  void Drop(size_t w, const absl::Status& why);
  worker::WorkerProcess& home() { return *workers_.front(); }
  // Whether the sweep was cancelled or ran past max_seconds: both also end re-measurement.
  bool Stopped() const;
  bool OutOfTime() const {
    return options_.max_seconds > 0 && Seconds(began_) > options_.max_seconds;
  }

  compiler::CompilePool& pool_;
  const std::vector<worker::WorkerProcess*> workers_;  // the first is the sweep's own GPU
  const SweepOptions& options_;
  const ProgressCallback& on_result_;
  const std::atomic<bool>* cancel_;
  const Clock::time_point began_ = Clock::now();
  const wpb::TimingPolicy policy_;          // the reference and the finalists
  const TimingOptions explore_timing_;      // every candidate's first timing (TimingFor)
  const wpb::TimingPolicy explore_policy_;  // the same for the worker, less abandon_factor
  const std::shared_ptr<std::atomic<bool>> abandon_ = std::make_shared<std::atomic<bool>>(false);

  const kernels::KernelFamily* family_ = nullptr;  // options_.family, once checked
  std::unique_ptr<Search> search_;
  kernels::DeviceLimits limits_;
  std::map<std::string, Measurement> finished_;  // resumed rows, by their parameters
  int64_t quota_ = 0;                            // proposals this run may make
  int64_t proposed_ = 0;
  size_t window_ = 0;  // most candidates compiled ahead at a time
  std::deque<Pending> pending_;
  std::vector<size_t> finalists_;   // ok rows, fastest first
  std::vector<size_t> remeasured_;  // the finalists timed again at least once
  std::vector<int> measured_by_;    // per row: the index into workers_ (-1: resumed)
  std::vector<bool> active_;        // per worker: still in the sweep
  // Evaluate's state while several GPUs measure: pending_, search_, result_, progress_ and the
  // callback are used under mu_; idle_ wakes a GPU waiting for the search to propose more.
  std::mutex mu_;
  std::condition_variable idle_;
  int in_flight_ = 0;
  absl::Status error_;
  SweepResult result_;
  Progress progress_;
};

absl::StatusOr<SweepResult> SweepRun::Run() {
  if (auto s = Plan(); !s.ok()) return s;
  if (auto s = Prepare(); !s.ok()) return s;
  if (auto s = Evaluate(); !s.ok()) return s;
  RemeasureFinalists();
  Finish();
  return std::move(result_);
}

absl::Status SweepRun::Plan() {
  if (options_.family == nullptr) return absl::InvalidArgumentError("no kernel family given");
  family_ = options_.family;
  if (auto s = family_->ValidateShape(options_.shape); !s.ok()) return s;
  if (auto s = CheckBudget(options_.max_evaluations, options_.max_seconds); !s.ok()) return s;
  const kernels::Space& space = options_.space ? *options_.space : family_->default_space();
  if (auto s = CheckStrategy(options_.strategy); !s.ok()) return s;  // a list does not excuse it
  if (!options_.candidates.empty() && options_.strategy != "quick") {
    for (const Params& params : options_.candidates) {
      if (auto s = space.Admit(params, /*strict=*/false); !s.ok()) return s;
    }
    search_ = ListSearch(options_.candidates);
  } else {
    // The default space's valid candidates are enumerated once per process (matmul's 4.7
    // million combinations take about two seconds), a narrowed space's every time.
    auto made = options_.space
                    ? MakeSearch(space, options_.strategy, options_.seed,
                                 options_.max_evaluations, options_.candidates)
                    : MakeSearch(space, ValidOfDefaultSpace(*family_), options_.strategy,
                                 options_.seed, options_.max_evaluations, options_.candidates);
    if (!made.ok()) return made.status();
    search_ = *std::move(made);
  }

  auto info = home().Start();
  if (!info.ok()) return info.status();
  // Another GPU that cannot start, or is not of this one's model, leaves the sweep.
  active_.assign(workers_.size(), true);
  for (size_t w = 1; w < workers_.size(); ++w) {
    auto other = workers_[w]->Start();
    if (!other.ok()) {
      Drop(w, other.status());
    } else if (other->name() != info->name() || other->cc_major() != info->cc_major() ||
               other->cc_minor() != info->cc_minor()) {
      Drop(w, absl::FailedPreconditionError(absl::StrCat(
                  "it is ", Quoted(other->name()), " (sm_", other->cc_major(), other->cc_minor(),
                  ") and GPU ", home().ordinal(), " ", Quoted(info->name()), " (sm_",
                  info->cc_major(), info->cc_minor(),
                  "): a sweep is sharded across GPUs of one model only")));
    }
  }
  for (worker::WorkerProcess* worker : workers_) result_.devices.push_back(worker->ordinal());
  limits_ = LimitsFrom(*info);
  result_.device = {info->name(),     info->uuid(),     info->cc_major(),
                    info->cc_minor(), info->sm_count(), info->total_memory_bytes()};
  result_.driver_version = info->driver_version();
  result_.nvrtc_version = info->nvrtc_version();
  result_.arch = limits_.Arch();
  result_.invalid = search_->invalid();

  // Resumed rows count as done and are told to the search, which never proposes them again; up
  // to the evaluation budget of what it proposes is this run's work.
  for (const Measurement& row : options_.finished) {
    finished_[FormatParams(row.params)] = row;
    search_->Tell(row.params, OkTime(row));
  }
  quota_ =
      options_.max_evaluations > 0 ? options_.max_evaluations : std::numeric_limits<int64_t>::max();
  // Candidates are compiled ahead so that the pool works while the GPU measures: all of them for
  // a fixed order, a window for a search that steers by the results (enough to keep the GPU fed,
  // few enough that each proposal knows nearly every result before it).
  window_ = search_->adaptive()
                ? static_cast<size_t>(2 * std::max(pool_.threads(), 4)) + workers_.size() - 1
                : std::numeric_limits<size_t>::max();
  Refill();
  return absl::OkStatus();
}

void SweepRun::Refill() {
  while (pending_.size() < window_ && proposed_ < quota_) {
    const int64_t room = std::min<int64_t>(
        quota_ - proposed_,
        static_cast<int64_t>(std::min<size_t>(window_ - pending_.size(), size_t{1} << 30)));
    std::vector<Params> next = search_->Next(static_cast<size_t>(room));
    if (next.empty()) return;
    for (Params& params : next) {
      if (finished_.count(FormatParams(params))) continue;
      Pending p;
      p.pruned = family_->PruneForDevice(params, limits_);
      if (!p.pruned) {
        p.compiled = pool_.Submit(CandidateRequest(*family_, params, options_.shape, result_.arch), abandon_);
      }
      p.params = std::move(params);
      pending_.push_back(std::move(p));
      ++proposed_;
    }
  }
}

absl::Status SweepRun::Prepare() {
  auto phase = Clock::now();
  const wpb::Prepare prepare =
      PrepareRequest(*family_, options_.shape, options_.dtype, options_.seed);
  // Every GPU prepares at once (inputs and reference output take seconds on large problems).
  std::map<size_t, std::future<absl::Status>> others;
  for (size_t w = 1; w < workers_.size(); ++w) {
    if (!active_[w]) continue;
    others[w] = std::async(std::launch::async, [&, w] { return workers_[w]->Prepare(prepare); });
  }
  absl::Status prepared = home().Prepare(prepare);
  for (auto& [w, other] : others) {
    if (absl::Status s = other.get(); !s.ok()) Drop(w, s);
  }
  if (!prepared.ok()) return prepared;
  result_.time.prepare = Seconds(phase);

  phase = Clock::now();
  wpb::Reference reference;
  *reference.mutable_timing() = policy_;
  auto ref = home().Reference(reference, options_.candidate_timeout * 3);
  if (ref.ok()) {
    result_.reference_name = ref->name();
    result_.reference_us = ref->stats().median_us();
  } else {
    // Without a reference the sweep still ranks candidates; only "% of reference" is missing.
    result_.reference_name = absl::StrCat("unavailable: ", std::string(ref.status().message()));
  }
  result_.time.reference = Seconds(phase);
  return absl::OkStatus();
}

absl::Status SweepRun::Evaluate() {
  progress_.total = static_cast<int64_t>(finished_.size() + pending_.size()) +
                    std::min(search_->remaining(), quota_ - proposed_);
  for (const auto& [key, row] : finished_) Record(row, -1);
  std::vector<std::thread> shards;
  for (size_t w = 1; w < workers_.size(); ++w) {
    if (active_[w]) shards.emplace_back([this, w] { Drive(w); });
  }
  Drive(0);
  for (std::thread& shard : shards) shard.join();
  if (!error_.ok()) return error_;
  // The evaluation budget stopped a search that had more to propose.
  if (proposed_ >= quota_ && search_->remaining() > 0) result_.budget_exhausted = true;
  return absl::OkStatus();
}

void SweepRun::Drive(size_t w) {
  std::unique_lock lock(mu_);
  while (error_.ok() && !result_.cancelled && !result_.budget_exhausted) {
    if (cancel_ != nullptr && cancel_->load()) {
      result_.cancelled = true;
      break;
    }
    if (OutOfTime()) {
      result_.budget_exhausted = true;
      break;
    }
    if (pending_.empty()) {
      if (in_flight_ == 0) break;  // nothing left, and no result to come that could propose more
      idle_.wait(lock);            // another GPU's result may let the search propose more
      continue;
    }
    Pending pending = std::move(pending_.front());
    pending_.pop_front();
    ++in_flight_;
    const double abandon_above_us = progress_.best ? AbandonAbove(explore_timing_.abandon_factor,
                                                                  progress_.best->timing.median_us)
                                                   : 0;
    lock.unlock();
    Tally tally;
    absl::StatusOr<Measurement> row = EvaluateOne(pending, *workers_[w], abandon_above_us, tally);
    lock.lock();
    --in_flight_;
    TimeBreakdown& t = result_.time;
    t.compile += tally.time.compile;
    t.compile_wait += tally.time.compile_wait;
    t.gpu += tally.time.gpu;
    t.load += tally.time.load;
    t.verify += tally.time.verify;
    t.timing += tally.time.timing;
    result_.cache_hits += tally.cache_hits;
    if (!row.ok()) {
      if (w == 0 || !tally.worker_failed) {
        if (error_.ok()) error_ = row.status();
      } else {
        // This GPU leaves the sweep; its candidate goes back to the others (compiled again
        // from the cache).
        Drop(w, row.status());
        Pending again;
        again.params = pending.params;
        again.compiled =
            pool_.Submit(CandidateRequest(*family_, again.params, options_.shape, result_.arch), abandon_);
        pending_.push_front(std::move(again));
      }
      break;
    }
    search_->Tell(row->params, OkTime(*row));
    Record(*std::move(row), static_cast<int>(w));
    Refill();
    idle_.notify_all();
  }
  idle_.notify_all();
}

void SweepRun::Drop(size_t w, const absl::Status& why) {
  active_[w] = false;
  result_.dropped.push_back(
      absl::StrCat("GPU ", workers_[w]->ordinal(), " left the sweep: ", why.ToString()));
}

absl::StatusOr<Measurement> SweepRun::EvaluateOne(Pending& p, worker::WorkerProcess& worker,
                                                  double abandon_above_us, Tally& tally) {
  Measurement row;
  row.params = p.params;
  if (p.pruned) {
    row.outcome = Outcome::kPruned;
    row.detail = *p.pruned;
    return row;
  }
  const auto waited = Clock::now();
  absl::StatusOr<compiler::CompileResult> compiled = p.compiled.get();
  tally.time.compile_wait += Seconds(waited);
  if (!compiled.ok()) return compiled.status();  // NVRTC itself broke: not the candidate's fault
  tally.time.compile += compiled->compile_ms / 1000.0;
  if (compiled->from_cache) ++tally.cache_hits;
  CompileReport built = ReportCompiled(*family_, p.params, *compiled, limits_);
  row.compile_ms = built.compile_ms;
  row.resources = built.resources;
  if (built.outcome != Outcome::kOk) {
    row.outcome = built.outcome;
    row.detail = std::move(built.detail);
    return row;
  }
  wpb::Run run =
      RunRequest(*family_, p.params, options_.shape, limits_.sm_count, *compiled,
                 explore_policy_, options_.verify);
  run.mutable_timing()->set_abandon_above_us(abandon_above_us);
  const std::string key = FormatParams(p.params);
  run.set_debug_hang(options_.debug_hang.count(key) > 0);
  run.set_debug_crash(options_.debug_crash.count(key) > 0);

  const auto sent = Clock::now();
  auto ran = worker.Run(run, options_.candidate_timeout);
  tally.time.gpu += Seconds(sent);
  if (!ran.ok()) {
    tally.worker_failed = true;
    return ran.status();
  }
  tally.time.load += ran->load_ms() / 1000;
  tally.time.verify += ran->verify_ms() / 1000;
  tally.time.timing += ran->time_ms() / 1000;
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
}

void SweepRun::Record(Measurement row, int w) {
  DeriveFigures(*family_, options_.shape, result_.reference_us, row);
  measured_by_.push_back(w);
  progress_.latest_device = w < 0 ? -1 : workers_[w]->ordinal();
  if (w >= 0) ++result_.rows_by_device[progress_.latest_device];
  ++progress_.done;
  ++progress_.counts[row.outcome];
  if (row.outcome == Outcome::kOk && (!progress_.best || RanksBefore(row, *progress_.best))) {
    progress_.best = row;
  }
  progress_.elapsed_seconds = Seconds(began_);
  const int64_t measured = progress_.done - static_cast<int64_t>(finished_.size());
  progress_.eta_seconds = measured > 0 ? progress_.elapsed_seconds / measured *
                                             static_cast<double>(progress_.total - progress_.done)
                                       : 0;
  result_.rows.push_back(std::move(row));
  if (on_result_) on_result_(result_.rows.back(), progress_);
}

bool SweepRun::Stopped() const { return (cancel_ != nullptr && cancel_->load()) || OutOfTime(); }

void SweepRun::RemeasureFinalists() {
  const auto phase = Clock::now();
  for (size_t i = 0; i < result_.rows.size(); ++i) {
    if (result_.rows[i].outcome == Outcome::kOk) finalists_.push_back(i);
  }
  std::sort(finalists_.begin(), finalists_.end(),
            [&](size_t a, size_t b) { return RanksBefore(result_.rows[a], result_.rows[b]); });
  const size_t wanted = static_cast<size_t>(std::max(options_.finalists, 0));
  if (finalists_.size() > wanted) finalists_.resize(wanted);
  if (finalists_.size() > 1 && !result_.cancelled && !Stopped()) {
    // Rows whose first time beats the re-measured fastest join in batches (Challengers), each
    // batch timed in turns with the fastest so far, up to kChallengerFactor times the finalists.
    const size_t cap = wanted * kChallengerFactor;
    std::map<size_t, std::vector<double>> medians;
    std::map<size_t, int> rounds;  // re-measurements each finalist got
    std::vector<size_t> batch = finalists_;
    while (!batch.empty() && !Stopped()) {
      std::map<size_t, wpb::Run> runs;
      for (size_t i : batch) {
        const Measurement& row = result_.rows[i];
        // Only the sweep's own GPU's figures decide: a first time measured on another GPU of
        // the sweep is replaced by the re-measurements.
        if (measured_by_[i] <= 0 && medians.count(i) == 0) {
          medians[i].push_back(row.timing.median_us);
        }
        auto compiled = pool_.Submit(CandidateRequest(*family_, row.params, options_.shape, result_.arch)).get();
        if (!compiled.ok() || !compiled->ok) continue;
        // Verified already: these runs only time.
        runs[i] = RunRequest(*family_, row.params, options_.shape, limits_.sm_count, *compiled, policy_,
                             /*verify=*/false);
      }
      for (int round = 0; round < options_.remeasure_rounds; ++round) {
        if (Stopped()) break;  // the budget also bounds the finalists' re-measurement
        for (auto& [i, run] : runs) {
          auto ran = home().Run(run, options_.candidate_timeout);
          if (ran.ok() && ran->outcome() == wpb::OUTCOME_OK) {
            medians[i].push_back(ran->stats().median_us());
            ++rounds[i];
            result_.rows[i].timing.samples += ran->stats().samples();
          }
        }
      }
      for (size_t i : batch) {
        std::vector<double>& values = medians[i];
        if (values.empty()) continue;  // measured elsewhere and never again: keeps its first time
        if (rounds[i] > 0 && std::find(remeasured_.begin(), remeasured_.end(), i) ==
                                 remeasured_.end()) {
          remeasured_.push_back(i);
        }
        result_.rows[i].timing.median_us = Median(values);
        DeriveFigures(*family_, options_.shape, result_.reference_us, result_.rows[i]);
      }
      const size_t room = cap > finalists_.size() ? cap - finalists_.size() : 0;
      batch = Challengers(result_.rows, finalists_, room);
      if (batch.empty()) break;
      // The fastest so far is timed again with the challengers, against drift between batches.
      size_t fastest = finalists_.front();
      for (size_t i : finalists_) {
        if (RanksBefore(result_.rows[i], result_.rows[fastest])) fastest = i;
      }
      finalists_.insert(finalists_.end(), batch.begin(), batch.end());
      batch.push_back(fastest);
    }
    std::sort(finalists_.begin(), finalists_.end(),
              [&](size_t a, size_t b) { return RanksBefore(result_.rows[a], result_.rows[b]); });
  }
  result_.time.remeasure = Seconds(phase);
}

void SweepRun::Finish() {
  WinnerChoice choice = ChooseWinner(result_.rows, finalists_, remeasured_);
  result_.winner = choice.winner;
  result_.tied = std::move(choice.tied);
  for (worker::WorkerProcess* worker : workers_) result_.worker_restarts += worker->restarts();
  result_.time.wall = Seconds(began_);
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
  if (workers_.empty()) return absl::InvalidArgumentError("a sweep needs at least one GPU");
  return SweepRun(pool_, workers_, options, on_result, cancel).Run();
}

}  // namespace cutune::tuner
