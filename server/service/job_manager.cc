#include "server/service/job_manager.h"

#include <algorithm>
#include <iostream>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "server/core/hash.h"
#include "server/core/strings.h"
#include "server/store/quick_start.h"
#include "server/tuner/strategy.h"

namespace cutune::service {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

namespace {

nlohmann::ordered_json SpecJson(const JobSpec& spec) {
  nlohmann::ordered_json j;
  j["family"] = spec.family ? std::string(spec.family->name()) : "";
  j["shape"] = spec.shape;
  j["dtype"] = std::string(DTypeName(spec.dtype));
  j["device"] = spec.device;
  j["strategy"] = spec.strategy;
  j["max_evaluations"] = spec.max_evaluations;
  j["max_seconds"] = spec.max_seconds;
  nlohmann::ordered_json space = nlohmann::ordered_json::object();
  for (const auto& [name, values] : spec.space) space[name] = values;
  j["space"] = space;
  if (!spec.candidates.empty()) {
    nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
    for (const Params& params : spec.candidates) candidates.push_back(FormatParams(params));
    j["candidates"] = candidates;
  }
  j["seed"] = spec.seed;
  return j;
}

observe::JobInfo InfoOf(const JobSnapshot& job) {
  return {job.id,
          job.spec.family ? std::string(job.spec.family->name()) : "",
          job.spec.shape,
          job.spec.dtype,
          job.spec.strategy,
          job.spec.device,
          job.spec.shards};
}

}  // namespace

std::string JobSpec::MergeKey() const { return SpecJson(*this).dump(); }

class Job {
 public:
  // `on_end` is called once, when an update first leaves the job finished, before any waiter
  // sees it: so its job.finished line and metrics are there when a client learns the end. `wall`
  // counts from the update that set it running (0 if it never ran).
  using OnEnd = std::function<void(const JobSnapshot& job, double wall_seconds)>;
  Job(JobSnapshot snapshot, OnEnd on_end)
      : snapshot_(std::move(snapshot)), on_end_(std::move(on_end)) {}

  JobSnapshot Snapshot() const {
    std::lock_guard lock(mu_);
    return snapshot_;
  }
  JobState State() const {
    std::lock_guard lock(mu_);
    return snapshot_.state;
  }
  template <typename F>
  void Update(F&& change) {
    std::optional<JobSnapshot> ended;
    double wall = 0;
    {
      std::lock_guard lock(mu_);
      change(snapshot_);
      ++snapshot_.version;
      const auto now = std::chrono::steady_clock::now();
      if (snapshot_.state == JobState::kRunning && !ran_since_) ran_since_ = now;
      if (snapshot_.finished() && !ended_) {
        ended_ = true;
        ended = snapshot_;
        if (ran_since_) wall = std::chrono::duration<double>(now - *ran_since_).count();
      }
    }
    if (ended && on_end_) on_end_(*ended, wall);
    changed_.notify_all();
  }
  JobSnapshot WaitForChange(uint64_t after, std::chrono::steady_clock::time_point deadline) const {
    std::unique_lock lock(mu_);
    changed_.wait_until(lock, deadline, [&] { return snapshot_.version > after; });
    return snapshot_;
  }

  std::atomic<bool> cancel{false};
  std::atomic<bool> shutdown{false};  // cancelled by a daemon shutdown: leave it resumable
  // Set by Submit, then fixed: the order jobs were queued in, and the GPUs the job holds while it
  // runs (its own first, then its shards).
  uint64_t seq = 0;
  std::vector<int> gpus;
  // Set for a job that is not a sweep (a profile): what the lane runs instead of RunJob.
  std::function<void()> work;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  JobSnapshot snapshot_;
  const OnEnd on_end_;
  std::optional<std::chrono::steady_clock::time_point> ran_since_;
  bool ended_ = false;
};

struct JobManager::Lane {
  int ordinal = 0;
  std::unique_ptr<worker::WorkerProcess> worker;
  std::deque<std::shared_ptr<Job>> queue;  // guarded by JobManager::mu_
  std::shared_ptr<Job> held;  // the job running on this GPU, its own or a sharded one (mu_)
  std::thread thread;
};

JobManager::JobManager(Options options, store::Store& store, compiler::CompilePool& pool)
    : options_(std::move(options)),
      observer_(options_.observer ? *options_.observer : observe::NoObserver()),
      store_(store),
      pool_(pool) {
  // A GPU quarantined while a job runs on it is told to health at once.
  const auto quarantined = [this](int ordinal) {
    std::function<void(int, bool)> health;
    {
      std::lock_guard lock(mu_);
      health = health_callback_;
    }
    if (health) health(ordinal, false);
  };
  auto first = std::make_unique<worker::WorkerProcess>(
      worker::WorkerOptions{.executable = options_.worker_path,
                            .ordinal = 0,
                            .observer = &observer_,
                            .on_quarantine = quarantined});
  auto info = first->Start();
  if (absl::IsFailedPrecondition(info.status())) {
    // No driver, no device or no worker binary: this host serves tables only.
    no_gpu_reason_ = std::string(info.status().message());
    return;
  }
  // A worker that keeps crashing at start-up leaves its GPU listed, but quarantined.
  const int count = info.ok() ? std::max(1, info->device_count()) : 1;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto lane = std::make_unique<Lane>();
    lane->ordinal = ordinal;
    lane->worker = ordinal == 0 ? std::move(first)
                                : std::make_unique<worker::WorkerProcess>(worker::WorkerOptions{
                                      .executable = options_.worker_path,
                                      .ordinal = ordinal,
                                      .observer = &observer_,
                                      .on_quarantine = quarantined});
    if (ordinal > 0) (void)lane->worker->Start();  // a failure shows as quarantine / state
    lanes_.push_back(std::move(lane));
  }
  for (auto& lane : lanes_) {
    Lane* raw = lane.get();
    lane->thread = std::thread([this, raw] { RunLane(*raw); });
  }
  trainer_ = std::thread([this] { RunTrainer(); });
}

void JobManager::RunTrainer() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      retrain_changed_.wait(lock, [&] { return shutting_down_ || retrain_wanted_; });
      if (shutting_down_) return;  // the next Store::Open trains on everything stored
      retrain_wanted_ = false;
    }
    if (absl::Status s = store_.RetrainModels(); !s.ok()) {
      std::cerr << "cutune store: retraining the prediction models: " << s << "\n";
    }
  }
}

JobManager::~JobManager() { Shutdown(); }

bool JobManager::shutting_down() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

void JobManager::SetHealthCallback(std::function<void(int, bool)> callback) {
  std::lock_guard lock(mu_);
  health_callback_ = std::move(callback);
}

std::vector<GpuInfo> JobManager::Gpus() const {
  std::lock_guard lock(mu_);
  std::vector<GpuInfo> out;
  for (const auto& lane : lanes_) {
    GpuInfo info;
    info.ordinal = lane->ordinal;
    info.device = lane->worker->device();
    info.quarantined = lane->worker->quarantined();
    info.busy = lane->held != nullptr;
    info.queued = static_cast<int>(lane->queue.size());
    out.push_back(std::move(info));
  }
  return out;
}

std::map<JobState, int> JobManager::CountByState() const {
  std::map<JobState, int> counts = {{JobState::kQueued, 0},
                                    {JobState::kRunning, 0},
                                    {JobState::kSucceeded, 0},
                                    {JobState::kFailed, 0},
                                    {JobState::kCancelled, 0}};
  std::lock_guard lock(mu_);
  for (const auto& [id, job] : jobs_) ++counts[job->State()];
  return counts;
}

void JobManager::ReportEnd(const JobSnapshot& job, double wall_seconds) {
  observe::JobEnd end{InfoOf(job), JobStateName(job.state)};
  for (const auto& [outcome, count] : job.progress.counts) {
    end.candidates += count;
    (outcome == Outcome::kOk ? end.ok : end.rejected) += count;
  }
  if (job.progress.best) {
    end.best_us = job.progress.best->timing.median_us;
    end.best_params = FormatParams(job.progress.best->params);
  }
  end.wall_seconds = wall_seconds;
  end.error = job.error;
  observer_.JobFinished(end);
}

std::shared_ptr<Job> JobManager::FindLocked(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

absl::StatusOr<std::pair<std::string, bool>> JobManager::Submit(JobSpec spec) {
  if (spec.family == nullptr) return absl::InvalidArgumentError("no kernel family given");
  if (auto s = spec.family->ValidateShape(spec.shape); !s.ok()) return s;
  if (!spec.space.empty()) {
    auto narrowed = spec.family->default_space().Narrow(spec.space);
    if (!narrowed.ok()) return narrowed.status();
  }
  if (auto s = tuner::CheckBudget(spec.max_evaluations, spec.max_seconds); !s.ok()) return s;
  if (!no_gpu_reason_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("this host cannot tune (serving tables only): ", no_gpu_reason_));
  }
  std::lock_guard lock(mu_);
  if (shutting_down_) return absl::UnavailableError("the daemon is shutting down");
  if (!spec.idempotency_key.empty()) {
    auto it = by_idempotency_key_.find(spec.idempotency_key);
    if (it != by_idempotency_key_.end()) return std::make_pair(it->second, true);
  }
  if (spec.device < 0 || spec.device >= static_cast<int>(lanes_.size())) {
    return absl::NotFoundError(absl::StrCat("no GPU with ordinal ", spec.device, " (this host has ",
                                            lanes_.size(), ")"));
  }
  Lane& lane = *lanes_[spec.device];
  if (lane.worker->quarantined()) {
    return absl::UnavailableError(
        absl::StrCat("GPU ", spec.device, " is quarantined: its worker keeps failing to start"));
  }
  if (absl::Status s = ResolveShardsLocked(spec); !s.ok()) return s;
  const std::string merge_key = spec.MergeKey();
  // A job that has just finished stays listed until its lane thread clears it: not in flight.
  if (auto it = in_flight_.find(merge_key);
      it != in_flight_.end() && !FindLocked(it->second)->Snapshot().finished()) {
    if (!spec.idempotency_key.empty()) by_idempotency_key_[spec.idempotency_key] = it->second;
    return std::make_pair(it->second, true);
  }
  if (static_cast<int>(lane.queue.size()) >= options_.max_queue_per_gpu) {
    return absl::ResourceExhaustedError(absl::StrCat("GPU ", spec.device, "'s queue is full (",
                                                     options_.max_queue_per_gpu,
                                                     " jobs); try again later"));
  }
  static std::mt19937_64 rng(std::random_device{}());
  JobSnapshot snapshot;
  snapshot.id = absl::StrFormat("job-%06d-%04x", next_job_++, rng() & 0xffff);
  snapshot.spec = spec;
  auto job = std::make_shared<Job>(
      snapshot, [this](const JobSnapshot& ended, double wall) { ReportEnd(ended, wall); });
  job->seq = next_job_ - 1;
  job->gpus = {spec.device};
  job->gpus.insert(job->gpus.end(), spec.shards.begin(), spec.shards.end());
  jobs_[snapshot.id] = job;
  in_flight_[merge_key] = snapshot.id;
  if (!spec.idempotency_key.empty()) by_idempotency_key_[spec.idempotency_key] = snapshot.id;
  // Told before the lane can take it, so that job.queued always precedes job.started.
  observer_.JobQueued(InfoOf(snapshot));
  lane.queue.push_back(job);
  lanes_changed_.notify_all();
  return std::make_pair(snapshot.id, false);
}

absl::Status JobManager::ResolveShardsLocked(JobSpec& spec) const {
  const auto model = [&](int ordinal) -> std::optional<std::string> {
    auto device = lanes_[ordinal]->worker->device();
    if (!device) return std::nullopt;
    return device->name();
  };
  const std::optional<std::string> own = model(spec.device);
  std::vector<int> shards;
  if (spec.shard_all) {
    for (const auto& lane : lanes_) {
      if (lane->ordinal != spec.device && !lane->worker->quarantined() && own &&
          model(lane->ordinal) == own) {
        shards.push_back(lane->ordinal);
      }
    }
  } else {
    for (int ordinal : spec.shards) {
      if (ordinal == spec.device ||
          std::find(shards.begin(), shards.end(), ordinal) != shards.end()) {
        continue;
      }
      if (ordinal < 0 || ordinal >= static_cast<int>(lanes_.size())) {
        return absl::NotFoundError(absl::StrCat("no GPU with ordinal ", ordinal, " to shard onto (this host has ",
                                                lanes_.size(), ")"));
      }
      if (lanes_[ordinal]->worker->quarantined()) {
        return absl::UnavailableError(absl::StrCat(
            "GPU ", ordinal, " is quarantined: its worker keeps failing to start"));
      }
      const std::optional<std::string> theirs = model(ordinal);
      if (!own || !theirs || *own != *theirs) {
        return absl::InvalidArgumentError(absl::StrCat(
            "GPU ", ordinal, " is ", theirs ? Quoted(*theirs) : "of an unknown model", " and GPU ",
            spec.device, " ", own ? Quoted(*own) : "of an unknown model",
            ": a sweep is sharded across GPUs of one model only"));
      }
      shards.push_back(ordinal);
    }
  }
  std::sort(shards.begin(), shards.end());
  spec.shards = std::move(shards);
  spec.shard_all = false;
  return absl::OkStatus();
}

bool MayStart(const WaitingJob& job, const std::vector<bool>& held,
              const std::vector<WaitingJob>& firsts) {
  for (int ordinal : job.gpus) {
    if (held.at(ordinal)) return false;
    for (const WaitingJob& first : firsts) {
      if (first.seq < job.seq &&
          std::find(first.gpus.begin(), first.gpus.end(), ordinal) != first.gpus.end()) {
        return false;
      }
    }
  }
  return true;
}

bool JobManager::CanStartLocked(const Job& job) const {
  std::vector<bool> held;
  std::vector<WaitingJob> firsts;
  for (const auto& lane : lanes_) {
    held.push_back(lane->held != nullptr);
    if (!lane->queue.empty()) firsts.push_back({lane->queue.front()->seq, lane->queue.front()->gpus});
  }
  return MayStart({job.seq, job.gpus}, held, firsts);
}

absl::StatusOr<JobSnapshot> JobManager::Get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto job = FindLocked(id);
  if (!job) return absl::NotFoundError(absl::StrCat("no job ", Quoted(id)));
  return job->Snapshot();
}

std::vector<JobSnapshot> JobManager::List() const {
  std::lock_guard lock(mu_);
  std::vector<JobSnapshot> out;
  for (const auto& [id, job] : jobs_) out.push_back(job->Snapshot());
  return out;
}

absl::StatusOr<JobSnapshot> JobManager::WaitForChange(
    const std::string& id, uint64_t after, std::chrono::steady_clock::time_point deadline) const {
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mu_);
    job = FindLocked(id);
  }
  if (!job) return absl::NotFoundError(absl::StrCat("no job ", Quoted(id)));
  return job->WaitForChange(after, deadline);
}

absl::StatusOr<JobState> JobManager::Cancel(const std::string& id) {
  std::lock_guard lock(mu_);
  auto job = FindLocked(id);
  if (!job) return absl::NotFoundError(absl::StrCat("no job ", Quoted(id)));
  job->cancel = true;
  for (auto& lane : lanes_) {
    auto it = std::find(lane->queue.begin(), lane->queue.end(), job);
    if (it != lane->queue.end()) {
      lane->queue.erase(it);
      in_flight_.erase(job->Snapshot().spec.MergeKey());
      job->Update([](JobSnapshot& s) { s.state = JobState::kCancelled; });
      lanes_changed_.notify_all();  // a job waiting behind it, or for its GPUs, may start
    }
  }
  return job->Snapshot().state;
}

void JobManager::RunLane(Lane& lane) {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mu_);
      lanes_changed_.wait(lock, [&] {
        return shutting_down_ || (!lane.queue.empty() && CanStartLocked(*lane.queue.front()));
      });
      if (shutting_down_) return;
      job = lane.queue.front();
      lane.queue.pop_front();
      for (int ordinal : job->gpus) lanes_[ordinal]->held = job;
    }
    if (job->work) {
      RunWork(lane, job);
    } else {
      RunJob(lane, job);
      {
        std::lock_guard lock(mu_);
        retrain_wanted_ = true;  // what its sweep left for later (FinishSweep, kLater)
      }
      retrain_changed_.notify_all();
    }
    std::function<void(int, bool)> health;
    {
      std::lock_guard lock(mu_);
      for (int ordinal : job->gpus) lanes_[ordinal]->held = nullptr;
      // Only this job's entry: an identical job may have been submitted since it finished.
      auto it = in_flight_.find(job->Snapshot().spec.MergeKey());
      if (it != in_flight_.end() && it->second == job->Snapshot().id) in_flight_.erase(it);
      health = health_callback_;
    }
    lanes_changed_.notify_all();
    if (health) {
      for (int ordinal : job->gpus) health(ordinal, !lanes_[ordinal]->worker->quarantined());
    }
  }
}

void JobManager::RunWork(Lane& lane, const std::shared_ptr<Job>& job) {
  job->Update([](JobSnapshot& s) { s.state = JobState::kRunning; });
  // The GPU's own worker keeps a context and the last problem's buffers; the profiled process
  // gets the GPU to itself, and the next job starts a fresh worker.
  lane.worker->Stop();
  job->work();
  job->Update([](JobSnapshot& s) { s.state = JobState::kSucceeded; });
}

absl::StatusOr<std::string> JobManager::Ncu() const { return profile::FindNcu(options_.ncu_path); }

absl::StatusOr<ProfileRun> JobManager::Profile(int ordinal, const worker::wpb::ProfileJob& message) {
  auto ncu = Ncu();
  if (!ncu.ok()) return ncu.status();
  if (!no_gpu_reason_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("this host cannot profile (serving tables only): ", no_gpu_reason_));
  }
  struct Result {
    absl::StatusOr<ProfileRun> run = absl::UnavailableError("the profile never ran");
  };
  auto result = std::make_shared<Result>();
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return absl::UnavailableError("the daemon is shutting down");
    if (ordinal < 0 || ordinal >= static_cast<int>(lanes_.size())) {
      return absl::NotFoundError(absl::StrCat("no GPU with ordinal ", ordinal, " (this host has ",
                                              lanes_.size(), ")"));
    }
    Lane& lane = *lanes_[ordinal];
    if (lane.worker->quarantined()) {
      return absl::UnavailableError(
          absl::StrCat("GPU ", ordinal, " is quarantined: its worker keeps failing to start"));
    }
    if (static_cast<int>(lane.queue.size()) >= options_.max_queue_per_gpu) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "GPU ", ordinal, "'s queue is full (", options_.max_queue_per_gpu,
          " jobs); try again later"));
    }
    JobSnapshot snapshot;
    snapshot.id = absl::StrFormat("profile-%06d", next_job_);
    job = std::make_shared<Job>(std::move(snapshot), nullptr);
    job->seq = next_job_++;
    job->gpus = {ordinal};
    NcuRunOptions run_options;
    run_options.ncu = *ncu;
    run_options.worker =
        options_.worker_path.empty() ? worker::DefaultWorkerPath() : options_.worker_path;
    run_options.ordinal = ordinal;
    run_options.timeout = options_.profile_timeout;
    run_options.cancel = &job->cancel;  // the lane holds the job while its work runs
    job->work = [result, message, run_options] { result->run = RunUnderNcu(message, run_options); };
    lane.queue.push_back(job);
    lanes_changed_.notify_all();
  }
  uint64_t seen = 0;
  JobSnapshot now;
  do {
    now = job->WaitForChange(seen, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    seen = now.version;
  } while (!now.finished());
  if (now.state == JobState::kCancelled) {
    return absl::UnavailableError(absl::StrCat("the profile did not run: ", now.error));
  }
  return result->run;
}

void JobManager::RunJob(Lane& lane, const std::shared_ptr<Job>& job) {
  const JobSpec spec = job->Snapshot().spec;
  job->Update([](JobSnapshot& s) { s.state = JobState::kRunning; });
  auto fail = [&](const absl::Status& status) {
    job->Update([&](JobSnapshot& s) {
      s.state = JobState::kFailed;
      s.error = absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                             std::string(status.message()));
    });
  };
  auto info = lane.worker->Start();
  if (!info.ok()) return fail(info.status());
  DeviceDescription device{info->name(), info->uuid(), info->cc_major(), info->cc_minor(),
                           info->sm_count(), info->total_memory_bytes()};
  if (auto s = store_.UpsertDevice(device, info->driver_version()); !s.ok()) return fail(s);

  tuner::SweepOptions options;
  options.family = spec.family;
  options.shape = spec.shape;
  options.dtype = spec.dtype;
  if (!spec.space.empty()) {
    auto narrowed = spec.family->default_space().Narrow(spec.space);
    if (!narrowed.ok()) return fail(narrowed.status());
    options.space = std::move(*narrowed);
  }
  options.strategy = spec.strategy;
  options.max_evaluations = spec.max_evaluations;
  options.max_seconds = spec.max_seconds;
  options.seed = spec.seed;
  options.timing = spec.timing;
  options.candidate_timeout = options_.candidate_timeout;
  options.candidates = spec.candidates;
  if (spec.strategy == "quick" && options.candidates.empty()) {
    const store::DeviceModel model{device.name, device.cc_major, device.cc_minor,
                                   device.sm_count, device.total_memory_bytes};
    auto start = store::QuickStart(store_, model, spec.family->name(), spec.dtype, spec.shape,
                                   spec.family->starters(), spec.family->baseline());
    if (!start.ok()) return fail(start.status());
    options.candidates = *std::move(start);
  }

  store::SweepKey key{device, std::string(spec.family->name()), spec.shape, spec.dtype};
  Provenance provenance{info->driver_version(), info->nvrtc_version(), spec.family->source_hash(),
                        spec.family->space_version(), info->timing()};
  const std::string request_json = SpecJson(spec).dump();
  if (spec.resume) {
    auto earlier = store_.LatestSweepOfRequest(key, provenance, request_json);
    if (!earlier.ok()) return fail(earlier.status());
    if (earlier->has_value()) {
      const store::SweepInfo& sweep = **earlier;
      if (sweep.status == store::SweepStatus::kSucceeded) {
        if (absl::Status s = AnswerFromSweep(*job, sweep); !s.ok()) return fail(s);
        return;
      }
      // StartOrResumeSweep below resumes it, as it does an interrupted one.
      if (sweep.status == store::SweepStatus::kCancelled ||
          sweep.status == store::SweepStatus::kFailed) {
        if (absl::Status s = store_.ReopenSweep(sweep.id); !s.ok()) return fail(s);
      }
    }
  }
  auto started = store_.StartOrResumeSweep(key, provenance, request_json);
  if (!started.ok()) return fail(started.status());
  const int64_t sweep_id = started->sweep_id;
  job->Update([&](JobSnapshot& s) { s.sweep_id = sweep_id; });
  if (started->resumed) {
    store::RowQuery query{info->name(), std::string(spec.family->name()), spec.shape, spec.dtype,
                          spec.family->source_hash(), /*include_unfinished=*/true, 0};
    auto rows = store_.ListRows(query);
    if (!rows.ok()) return fail(rows.status());
    for (const store::StoredRow& row : *rows) {
      if (row.sweep_id == sweep_id) options.finished.push_back(row.measurement);
    }
  }
  std::set<std::string> already;
  for (const Measurement& m : options.finished) already.insert(FormatParams(m.params));
  job->Update([&](JobSnapshot& s) { s.resumed = static_cast<int64_t>(already.size()); });
  const observe::JobInfo job_info = InfoOf(job->Snapshot());
  observer_.JobStarted(job_info, static_cast<int64_t>(already.size()));

  // Rows are written in small batches: each commit flushes the disk (synchronous=FULL), and a
  // crash loses at most one batch, which a resumed sweep simply measures again.
  absl::Status record_error;
  std::vector<Measurement> unsaved;
  auto last_flush = std::chrono::steady_clock::now();
  auto flush = [&] {
    if (unsaved.empty()) return;
    absl::Status s = store_.RecordMeasurements(sweep_id, unsaved);
    if (!s.ok() && record_error.ok()) record_error = s;
    unsaved.clear();
    last_flush = std::chrono::steady_clock::now();
  };
  // The GPUs it shards onto that can still take work; the sweep checks they match its own.
  std::vector<worker::WorkerProcess*> workers = {lane.worker.get()};
  std::vector<std::string> notes;
  for (int ordinal : spec.shards) {
    worker::WorkerProcess& other = *lanes_[ordinal]->worker;
    if (other.quarantined()) {
      notes.push_back(absl::StrCat("GPU ", ordinal, " was quarantined before the job started"));
    } else {
      workers.push_back(&other);
    }
  }
  job->Update([&](JobSnapshot& s) {
    for (worker::WorkerProcess* w : workers) s.devices.push_back(w->ordinal());
    s.notes = notes;
  });
  tuner::Sweeper sweeper(pool_, workers);
  auto result = sweeper.Run(
      options,
      [&](const Measurement& row, const tuner::Progress& progress) {
        if (!already.count(FormatParams(row.params))) {
          unsaved.push_back(row);
          observer_.CandidateFinished(
              {job_info.id, progress.latest_device >= 0 ? progress.latest_device : lane.ordinal,
               row});
        }
        if (unsaved.size() >= 32 ||
            std::chrono::steady_clock::now() - last_flush > std::chrono::seconds(1)) {
          flush();
        }
        job->Update([&](JobSnapshot& s) {
          s.progress = progress;
          s.latest = row;
        });
      },
      &job->cancel);
  flush();
  // A sweep that cannot go on is marked failed in the store (its rows stay); if even that write
  // fails, the job's error says so too.
  auto fail_sweep = [&](const absl::Status& status) {
    absl::Status marked = store_.FinishSweep(sweep_id, store::SweepStatus::kFailed, {}).status();
    if (marked.ok()) return fail(status);
    fail(absl::Status(status.code(), absl::StrCat(status.message(),
                                                  "; marking the sweep failed in the store "
                                                  "failed too: ",
                                                  marked.message())));
  };
  if (!result.ok()) return fail_sweep(result.status());
  job->Update([&](JobSnapshot& s) {
    s.notes.insert(s.notes.end(), result->dropped.begin(), result->dropped.end());
    s.reference_name = result->reference_name;
    s.reference_us = result->reference_us;
    const tuner::TimeBreakdown& t = result->time;
    s.phase_seconds = {{"wall", t.wall},          {"compile", t.compile},
                       {"gpu_idle_compiling", t.compile_wait},
                       {"prepare", t.prepare},    {"reference", t.reference},
                       {"load", t.load},          {"verify", t.verify},
                       {"time", t.timing},        {"finalists", t.remeasure}};
    // The last row's progress was taken before the finalists were re-measured: the ended job's
    // elapsed time is the whole sweep's, as its phases say.
    s.progress.elapsed_seconds = t.wall;
    s.progress.eta_seconds = 0;
  });
  if (!record_error.ok()) return fail(record_error);  // the sweep stays resumable
  if (result->cancelled && job->shutdown) {
    // Daemon shutdown: the sweep stays "running" in the store and resumes next time.
    job->Update([](JobSnapshot& s) {
      s.state = JobState::kCancelled;
      s.error = "stopped by daemon shutdown; resumable";
    });
    return;
  }
  // Finalists were re-measured after their rows were stored; store their final figures.
  if (result->winner) {
    for (const Measurement& row : result->rows) {
      if (row.outcome != Outcome::kOk) continue;
      // Without its final figures the store could crown another finalist than the sweep did.
      if (absl::Status s = store_.UpdateTiming(sweep_id, row); !s.ok()) {
        return fail_sweep(absl::Status(
            s.code(), absl::StrCat("storing a finalist's re-measured time: ", s.message())));
      }
    }
  }
  store::Reference reference{result->reference_name, result->reference_us};
  const store::SweepStatus status =
      result->cancelled ? store::SweepStatus::kCancelled : store::SweepStatus::kSucceeded;
  // The sweep's canonical pick among the finalists tied with the fastest, and the others tied.
  store::FinishChoice choice;
  if (result->winner) {
    choice.winner = result->rows[*result->winner].params;
    for (size_t i : result->tied) {
      if (i != *result->winner) choice.ties.push_back(result->rows[i].params);
    }
  }
  // The models retrain once the job has ended (RunTrainer), not before its client hears of it.
  auto finished =
      store_.FinishSweep(sweep_id, status, reference, choice, store::Store::Retrain::kLater);
  if (!finished.ok()) return fail(finished.status());
  job->Update([&](JobSnapshot& s) {
    s.state = result->cancelled ? JobState::kCancelled : JobState::kSucceeded;
    if (result->winner) {
      s.progress.best = result->rows[*result->winner];
      for (size_t i : result->tied) {
        if (i != *result->winner) s.ties.push_back(result->rows[i]);
      }
    }
  });
}

absl::Status JobManager::AnswerFromSweep(Job& job, const store::SweepInfo& sweep) {
  store::RowQuery query;
  query.device_model = sweep.device_model;
  query.family = sweep.family;
  query.shape = sweep.shape;
  query.dtype = sweep.dtype;
  query.sweep_id = sweep.id;
  auto rows = store_.ListRows(query);  // ok rows fastest first
  if (!rows.ok()) return rows.status();
  tuner::Progress progress;
  progress.done = progress.total = static_cast<int64_t>(rows->size());
  for (const store::StoredRow& row : *rows) {
    ++progress.counts[row.measurement.outcome];
    if (!progress.best && row.measurement.outcome == Outcome::kOk) progress.best = row.measurement;
  }
  // The sweep's own pick among its tied finalists, while it is still the key's winner.
  std::vector<Measurement> ties;
  auto winners = store_.ListWinners(sweep.device_model);
  if (!winners.ok()) return winners.status();
  for (const store::Winner& winner : *winners) {
    if (winner.sweep_id != sweep.id) continue;
    progress.best = winner.measurement;
    for (const Params& tie : winner.ties) {
      for (const store::StoredRow& row : *rows) {
        if (row.measurement.params == tie) ties.push_back(row.measurement);
      }
    }
  }
  job.Update([&](JobSnapshot& s) {
    s.sweep_id = sweep.id;
    s.resumed = progress.done;
    s.progress = std::move(progress);
    s.reference_name = sweep.reference.name;
    s.reference_us = sweep.reference.time_us;
    s.ties = std::move(ties);
    s.state = JobState::kSucceeded;
  });
  return absl::OkStatus();
}

void JobManager::Shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    // Wake every waiter (WatchJob, WAIT_FOR_TUNING) now: they see shutting_down() and end their
    // calls at once instead of after the candidate in flight.
    for (auto& [id, job] : jobs_) job->Update([](JobSnapshot&) {});
    for (auto& lane : lanes_) {
      for (auto& job : lane->queue) {
        job->Update([](JobSnapshot& s) {
          s.state = JobState::kCancelled;
          s.error = "daemon shut down before the job started";
        });
      }
      lane->queue.clear();
      if (lane->held) {
        lane->held->shutdown = true;
        lane->held->cancel = true;
      }
      if (lane->thread.joinable()) threads.push_back(std::move(lane->thread));
    }
    lanes_changed_.notify_all();
    retrain_changed_.notify_all();
    if (trainer_.joinable()) threads.push_back(std::move(trainer_));
  }
  for (auto& t : threads) t.join();
  for (auto& lane : lanes_) lane->worker->Stop();
}

}  // namespace cutune::service
