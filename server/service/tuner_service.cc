#include "server/service/tuner_service.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/compiler/compiler.h"
#include "server/core/strings.h"
#include "server/core/version.h"
#include "server/service/answer.h"
#include "server/service/convert.h"
#include "server/store/tables.h"
#include "server/tuner/candidate.h"
#include "server/tuner/strategy.h"

namespace cutune::service {
namespace {

int64_t BytesNeeded(const kernels::KernelFamily& family, const Shape& shape) {
  kernels::BufferPlan plan = family.Buffers(shape);
  int64_t elements = 2 * plan.output;  // output and reference
  for (int64_t input : plan.inputs) elements += input;
  return elements * 4;
}

// RESOURCE_EXHAUSTED when the problem's buffers cannot fit in the GPU's memory (0: unknown).
absl::Status CheckFits(const kernels::KernelFamily& family, const Shape& shape, int gpu,
                       int64_t total_memory) {
  const int64_t bytes = BytesNeeded(family, shape);
  if (total_memory > 0 && bytes > total_memory) {
    return absl::ResourceExhaustedError(absl::StrCat("problem needs ", bytes / (1 << 20),
                                                     " MiB of GPU memory; GPU ", gpu, " has ",
                                                     total_memory / (1 << 20), " MiB"));
  }
  return absl::OkStatus();
}

absl::Status ShuttingDown(const std::string& job_id) {
  return absl::UnavailableError(absl::StrCat(
      "cutuned is shutting down; job ", job_id,
      " stops and resumes from the store when the daemon starts again"));
}

// A job id as clients send it: the service names jobs itself, so only the shape is checked here
// (whether the job exists is JobManager's answer).
absl::Status CheckJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id is required");
  return absl::OkStatus();
}

constexpr size_t kMaxIdempotencyKey = 256;
constexpr int kMaxOverrideValues = 1024;  // far more than any parameter of a family lists
constexpr int kMaxCandidates = 4096;      // more than a family's whole default space

}  // namespace

AnswerDevice TunerService::AnswerDeviceOf(const Target& target) {
  return {target.model, target.cc_major, target.cc_minor, target.driver_version, target.sm_count};
}

TunerService::TunerService(store::Store& store, JobManager& jobs, compiler::CompilePool& pool,
                           Authorizer authorizer, ServiceLimits limits,
                           observe::Observer* observer)
    : store_(store),
      jobs_(jobs),
      pool_(pool),
      authorizer_(std::move(authorizer)),
      observer_(observer ? *observer : observe::NoObserver()),
      streams_(limits.max_streams, "open WatchJob streams and WAIT_FOR_TUNING calls"),
      table_calls_(limits.max_table_calls, "table exports and imports") {}

grpc::Status TunerService::Authorize(const grpc::ServerContext& context, Role needed,
                                     std::string_view method) const {
  grpc::Status status = authorizer_.Check(context, needed);
  if (!status.ok()) ReportRefusal(context, method, status);
  return status;
}

void TunerService::ReportRefusal(const grpc::ServerContext& context, std::string_view method,
                                 const grpc::Status& refusal) const {
  const std::string full = absl::StrCat("cutune.v1.Tuner/", ToAbsl(method));
  const auto code = static_cast<absl::StatusCode>(refusal.error_code());
  observer_.AuthRefused(
      {"grpc", context.peer(), full, absl::StatusCodeToString(code), refusal.error_message()});
}

absl::StatusOr<TunerService::Target> TunerService::ResolveDevice(
    const pb::DeviceSelector& selector, bool need_gpu) const {
  const std::vector<GpuInfo> gpus = jobs_.Gpus();
  auto from_gpu = [](const GpuInfo& gpu) {
    Target t;
    t.ordinal = gpu.ordinal;
    if (gpu.device) {
      t.model = gpu.device->name();
      t.cc_major = gpu.device->cc_major();
      t.cc_minor = gpu.device->cc_minor();
      t.driver_version = gpu.device->driver_version();
      t.total_memory = gpu.device->total_memory_bytes();
      t.sm_count = gpu.device->sm_count();
    }
    return t;
  };
  auto from_model = [](const store::DeviceModel& m) {
    return Target{std::nullopt, m.name, m.cc_major, m.cc_minor, 0, m.total_memory_bytes,
                  m.sm_count};
  };
  if (need_gpu && gpus.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("this host cannot tune (it serves tables only): ", jobs_.no_gpu_reason()));
  }
  switch (selector.by_case()) {
    case pb::DeviceSelector::kOrdinal:
      for (const GpuInfo& gpu : gpus) {
        if (gpu.ordinal == selector.ordinal()) return from_gpu(gpu);
      }
      return absl::NotFoundError(absl::StrCat("no GPU with ordinal ", selector.ordinal(),
                                              " on this host (", gpus.size(), " present)"));
    case pb::DeviceSelector::kUuid:
      for (const GpuInfo& gpu : gpus) {
        if (gpu.device && gpu.device->uuid() == selector.uuid()) return from_gpu(gpu);
      }
      return absl::NotFoundError(absl::StrCat("no GPU with uuid ", Quoted(selector.uuid())));
    case pb::DeviceSelector::kModel: {
      if (need_gpu) {
        return absl::InvalidArgumentError("tuning needs a GPU of this host: select it by ordinal "
                                          "or uuid, not by model");
      }
      std::vector<std::string> gpu_models;
      for (const GpuInfo& gpu : gpus) {
        if (gpu.device && gpu.device->name() == selector.model()) return from_gpu(gpu);
        if (gpu.device) gpu_models.push_back(gpu.device->name());
      }
      std::sort(gpu_models.begin(), gpu_models.end());
      gpu_models.erase(std::unique(gpu_models.begin(), gpu_models.end()), gpu_models.end());
      auto described = DescribedGpu(selector);
      if (!described.ok()) return described.status();
      auto m = ModelFromTables(store_, selector.model(), gpu_models, *described);
      if (!m.ok()) return m.status();
      return from_model(*m);
    }
    case pb::DeviceSelector::BY_NOT_SET:
      break;
  }
  if (!gpus.empty()) return from_gpu(gpus.front());
  auto m = ModelFromTables(store_, "");
  if (!m.ok()) return m.status();
  return from_model(*m);
}

absl::Status TunerService::FillTableModels(pb::ListDevicesResponse* response) const {
  auto models = store_.ListDeviceModels();
  if (!models.ok()) return models.status();
  auto winners = store_.ListWinners("");
  if (!winners.ok()) return winners.status();
  for (const store::DeviceModel& m : *models) {
    int64_t count = 0;
    std::set<std::string> families;
    for (const store::Winner& w : *winners) {
      if (w.device.name != m.name) continue;
      ++count;
      families.insert(w.family);
    }
    if (count == 0) continue;  // a model known only from a sweep that found nothing
    pb::TableModel* model = response->add_table_models();
    model->set_name(m.name);
    model->set_compute_capability(absl::StrCat(m.cc_major, ".", m.cc_minor));
    model->set_sm_count(m.sm_count);
    model->set_total_memory_bytes(m.total_memory_bytes);
    model->set_winners(count);
    for (const std::string& family : families) model->add_families(family);
  }
  return absl::OkStatus();
}

pb::ListDevicesResponse TunerService::Devices() const {
  pb::ListDevicesResponse out;
  pb::ListDevicesResponse* response = &out;
  for (const GpuInfo& gpu : jobs_.Gpus()) {
    pb::Device* d = response->add_devices();
    d->set_ordinal(gpu.ordinal);
    if (gpu.device) {
      d->set_name(gpu.device->name());
      d->set_uuid(gpu.device->uuid());
      d->set_compute_capability(absl::StrCat(gpu.device->cc_major(), ".", gpu.device->cc_minor()));
      d->set_sm_count(gpu.device->sm_count());
      d->set_total_memory_bytes(gpu.device->total_memory_bytes());
      d->set_driver_version(gpu.device->driver_version());
    }
    d->set_state(gpu.quarantined ? pb::Device::STATE_QUARANTINED
                 : gpu.busy      ? pb::Device::STATE_BUSY
                                 : pb::Device::STATE_READY);
    d->set_queued_jobs(gpu.queued);
  }
  response->set_nvrtc_version(compiler::NvrtcVersion());
  response->set_no_gpu_reason(jobs_.no_gpu_reason());
  return out;
}

grpc::Status TunerService::ListDevices(grpc::ServerContext* context, const pb::ListDevicesRequest*,
                                       pb::ListDevicesResponse* response) {
  if (auto s = Authorize(*context, Role::kRead, "ListDevices"); !s.ok()) return s;
  *response = Devices();
  if (auto s = FillTableModels(response); !s.ok()) return ToGrpc(s);
  return grpc::Status::OK;
}

grpc::Status TunerService::ListFamilies(grpc::ServerContext* context,
                                        const pb::ListFamiliesRequest*,
                                        pb::ListFamiliesResponse* response) {
  if (auto s = Authorize(*context, Role::kRead, "ListFamilies"); !s.ok()) return s;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    FillFamily(*family, response->add_families());
  }
  return grpc::Status::OK;
}

absl::Status TunerService::AwaitJob(const grpc::ServerContext& context,
                                    const std::string& job_id) {
  uint64_t seen = 0;
  // Answer a little before the caller's deadline: at the deadline itself the client has
  // already given up with its own DEADLINE_EXCEEDED and never learns the job id.
  const auto answer_by = context.deadline() - std::chrono::milliseconds(100);
  while (true) {
    // Wake once a second to notice the caller's departure.
    const auto left = std::max(std::chrono::system_clock::duration::zero(),
                               answer_by - std::chrono::system_clock::now());
    auto deadline = std::chrono::steady_clock::now() +
                    std::min<std::chrono::steady_clock::duration>(left, std::chrono::seconds(1));
    auto job = jobs_.WaitForChange(job_id, seen, deadline);
    if (!job.ok()) return job.status();
    if (jobs_.shutting_down() && !job->finished()) return ShuttingDown(job_id);
    seen = job->version;
    if (job->finished()) {
      if (job->state != JobState::kSucceeded) {
        return absl::AbortedError(absl::StrCat("tuning job ", job->id, " ended ",
                                               std::string(JobStateName(job->state)), ": ",
                                               job->error));
      }
      return absl::OkStatus();
    }
    if (context.IsCancelled() || std::chrono::system_clock::now() >= answer_by) {
      return absl::DeadlineExceededError(
          absl::StrCat("still tuning; job ", job_id, " goes on: watch it or ask again later"));
    }
  }
}

grpc::Status TunerService::GetBestConfig(grpc::ServerContext* context,
                                         const pb::GetBestConfigRequest* request,
                                         pb::GetBestConfigResponse* response) {
  const auto began = std::chrono::steady_clock::now();
  if (!pb::GetBestConfigRequest::OnMiss_IsValid(request->on_miss())) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("unknown on_miss value ", request->on_miss())};
  }
  const bool tune = request->on_miss() == pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE ||
                    request->on_miss() == pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING;
  // The role first: a read token learns nothing about a tuning request it may not make.
  if (auto s = Authorize(*context, tune ? Role::kAdmin : Role::kRead, "GetBestConfig"); !s.ok()) {
    return s;
  }
  auto problem = Validate(request->problem());
  if (!problem.ok()) return ToGrpc(problem.status());
  // A fresh exact answer needs no GPU, so the device is resolved as for a plain lookup first;
  // only a miss that must be tuned needs a GPU of this host.
  auto target = ResolveDevice(request->device(), /*need_gpu=*/false);
  if (!target.ok()) return ToGrpc(target.status());
  const kernels::KernelFamily& family = *problem->family;

  const store::LookupQuery query = LookupQueryFor(*problem, AnswerDeviceOf(*target));
  store::LookupResult found = store_.Lookup(query);

  const bool miss = found.rung != store::LookupRung::kExact || !found.stale.empty();
  bool waited = false;
  if (tune && miss) {
    auto gpu = ResolveDevice(request->device(), /*need_gpu=*/true);
    if (!gpu.ok()) return ToGrpc(gpu.status());
    target = *std::move(gpu);
    JobSpec spec;
    spec.family = problem->family;
    spec.shape = problem->shape;
    spec.dtype = problem->dtype;
    spec.device = target->ordinal.value_or(0);
    // ANSWER_NOW_AND_TUNE already answered; its job makes the answer exact within seconds.
    if (request->on_miss() == pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE) {
      spec.strategy = "quick";
    }
    if (auto s = CheckFits(family, spec.shape, spec.device, target->total_memory); !s.ok()) {
      return ToGrpc(s);
    }
    auto submitted = jobs_.Submit(spec);
    if (!submitted.ok()) return ToGrpc(submitted.status());
    response->set_job_id(submitted->first);
    if (request->on_miss() == pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING) {
      auto slot = streams_.Enter();
      if (!slot.ok()) {
        context->AddTrailingMetadata(std::string(kJobIdTrailer), submitted->first);
        return ToGrpc(slot.status());
      }
      waited = true;
      if (absl::Status s = AwaitJob(*context, submitted->first); !s.ok()) {
        context->AddTrailingMetadata(std::string(kJobIdTrailer), submitted->first);
        return ToGrpc(s);
      }
      found = store_.Lookup(query);
    }
  }

  const AnswerDevice device = AnswerDeviceOf(*target);
  FillAnswer(*problem, device, found, request->include_source(), response);
  const std::string arch = ArchOf(device);
  if (request->include_cubin()) {
    auto compiled =
        pool_.Submit(tuner::CandidateRequest(family, found.winner.params, problem->shape, arch))
            .get();
    if (!compiled.ok()) return ToGrpc(compiled.status());
    if (!compiled->ok) {
      return {grpc::StatusCode::INTERNAL,
              absl::StrCat("the answer's configuration does not compile for ", arch, ":\n",
                           compiled->log)};
    }
    response->set_cubin(compiled->cubin);
  }
  observer_.LookupAnswered(
      {store::LookupRungName(found.rung), !found.stale.empty(), waited,
       std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()});
  return grpc::Status::OK;
}

grpc::Status TunerService::StartTuning(grpc::ServerContext* context,
                                       const pb::StartTuningRequest* request,
                                       pb::StartTuningResponse* response) {
  if (auto s = Authorize(*context, Role::kAdmin, "StartTuning"); !s.ok()) return s;
  auto problem = Validate(request->problem());
  if (!problem.ok()) return ToGrpc(problem.status());
  JobSpec spec;
  spec.family = problem->family;
  spec.shape = problem->shape;
  spec.dtype = problem->dtype;
  spec.strategy = request->strategy().empty() ? "brute_force" : request->strategy();
  if (auto s = tuner::CheckStrategy(spec.strategy); !s.ok()) return ToGrpc(s);
  if (auto s = tuner::CheckBudget(request->budget().max_evaluations(),
                                  request->budget().max_seconds());
      !s.ok()) {
    return ToGrpc(s);
  }
  spec.max_evaluations = request->budget().max_evaluations();
  spec.max_seconds = request->budget().max_seconds();
  for (const auto& [name, list] : request->space().values()) {
    if (list.values().empty()) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              absl::StrCat("space override for ", Quoted(name), " lists no values")};
    }
    if (list.values_size() > kMaxOverrideValues) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              absl::StrCat("space override for ", Quoted(name), " lists ", list.values_size(),
                           " values (at most ", kMaxOverrideValues, ")")};
    }
    std::vector<int64_t> values(list.values().begin(), list.values().end());
    std::sort(values.begin(), values.end());
    if (auto twice = std::adjacent_find(values.begin(), values.end()); twice != values.end()) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              absl::StrCat("space override for ", Quoted(name), " lists ", *twice, " twice")};
    }
    spec.space[name] = {list.values().begin(), list.values().end()};
  }
  auto narrowed = spec.family->default_space().Narrow(spec.space);
  if (!narrowed.ok()) return ToGrpc(narrowed.status());
  if (narrowed->CartesianSize() > kMaxSpaceCombinations) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("space of ", narrowed->CartesianSize(), " combinations is larger than ",
                         kMaxSpaceCombinations, "; narrow it")};
  }
  if (request->candidates_size() > kMaxCandidates) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("candidates lists ", request->candidates_size(),
                         " configurations (at most ", kMaxCandidates, ")")};
  }
  std::vector<Params> written;
  for (const auto& candidate : request->candidates()) {
    written.emplace_back(candidate.values().begin(), candidate.values().end());
  }
  absl::StatusOr<std::vector<Params>> candidates = narrowed->AdmitCandidates(written);
  if (!candidates.ok()) return ToGrpc(candidates.status());
  spec.candidates = *std::move(candidates);
  spec.seed = request->seed() ? request->seed() : 1;
  if (request->idempotency_key().size() > kMaxIdempotencyKey) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("idempotency_key is ", request->idempotency_key().size(),
                         " bytes (at most ", kMaxIdempotencyKey, ")")};
  }
  spec.idempotency_key = request->idempotency_key();
  spec.resume = request->resume();
  spec.shards.assign(request->shard_devices().begin(), request->shard_devices().end());
  spec.shard_all = request->shard_all();
  auto target = ResolveDevice(request->device(), /*need_gpu=*/true);
  if (!target.ok()) return ToGrpc(target.status());
  spec.device = target->ordinal.value_or(0);
  if (auto s = CheckFits(*spec.family, spec.shape, spec.device, target->total_memory); !s.ok()) {
    return ToGrpc(s);
  }
  auto submitted = jobs_.Submit(std::move(spec));
  if (!submitted.ok()) return ToGrpc(submitted.status());
  response->set_job_id(submitted->first);
  response->set_merged(submitted->second);
  return grpc::Status::OK;
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* context,
                                    const pb::WatchJobRequest* request,
                                    grpc::ServerWriter<pb::JobProgress>* writer) {
  if (auto s = Authorize(*context, Role::kRead, "WatchJob"); !s.ok()) return s;
  if (auto s = CheckJobId(request->job_id()); !s.ok()) return ToGrpc(s);
  auto job = jobs_.Get(request->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  auto slot = streams_.Enter();
  if (!slot.ok()) return ToGrpc(slot.status());
  while (true) {
    pb::JobProgress progress;
    ToProto(*job, &progress);
    if (!writer->Write(progress)) return grpc::Status::OK;  // the client went away
    if (job->finished()) return grpc::Status::OK;
    const uint64_t seen = job->version;
    // Wake at least once a second to notice a client that left.
    do {
      job = jobs_.WaitForChange(request->job_id(), seen,
                                std::chrono::steady_clock::now() + std::chrono::seconds(1));
      if (!job.ok()) return ToGrpc(job.status());
      if (context->IsCancelled()) return {grpc::StatusCode::CANCELLED, "watch cancelled"};
      if (jobs_.shutting_down() && !job->finished()) return ToGrpc(ShuttingDown(job->id));
    } while (job->version == seen);
  }
}

grpc::Status TunerService::CancelJob(grpc::ServerContext* context,
                                     const pb::CancelJobRequest* request,
                                     pb::CancelJobResponse* response) {
  if (auto s = Authorize(*context, Role::kAdmin, "CancelJob"); !s.ok()) return s;
  if (auto s = CheckJobId(request->job_id()); !s.ok()) return ToGrpc(s);
  auto state = jobs_.Cancel(request->job_id());
  if (!state.ok()) return ToGrpc(state.status());
  JobSnapshot snapshot;
  snapshot.state = *state;
  pb::JobProgress progress;
  ToProto(snapshot, &progress);
  response->set_state(progress.state());
  return grpc::Status::OK;
}

pb::ListJobsResponse TunerService::Jobs() const {
  pb::ListJobsResponse out;
  for (const JobSnapshot& job : jobs_.List()) ToProto(job, out.add_jobs());
  return out;
}

grpc::Status TunerService::ListJobs(grpc::ServerContext* context, const pb::ListJobsRequest*,
                                    pb::ListJobsResponse* response) {
  if (auto s = Authorize(*context, Role::kRead, "ListJobs"); !s.ok()) return s;
  *response = Jobs();
  return grpc::Status::OK;
}

absl::Status TunerService::FillResults(const std::vector<store::StoredRow>& rows,
                                       pb::ListResultsResponse* response) const {
  int64_t newest = 0;
  std::vector<int64_t> row_ids;
  for (const store::StoredRow& row : rows) row_ids.push_back(row.sequence);
  auto profiles = store_.ProfilesOfRows(row_ids);
  if (!profiles.ok()) return profiles.status();
  for (const store::StoredRow& row : rows) {
    pb::Measurement* m = response->add_rows();
    ToProto(row.measurement, m);
    m->set_sequence(row.sequence);
    if (auto it = profiles->find(row.sequence); it != profiles->end()) {
      pb::Profile* p = m->mutable_profile();
      p->set_ncu_version(it->second.ncu_version);
      p->set_profiled_at_ms(it->second.profiled_at_ms);
      for (const store::ProfileMetric& metric : it->second.metrics) {
        pb::ProfileMetric* out = p->add_metrics();
        out->set_name(metric.name);
        out->set_value(metric.value);
        out->set_unit(metric.unit);
      }
    }
    newest = std::max(newest, row.sweep_id);
  }
  if (newest == 0) return absl::OkStatus();
  auto sweep = store_.GetSweep(newest);
  if (!sweep.ok()) return sweep.status();
  pb::SweepSummary* summary = response->mutable_sweep();
  summary->set_sweep_id(sweep->id);
  summary->set_source_hash(sweep->provenance.source_hash);
  summary->set_driver_version(sweep->provenance.driver_version);
  summary->set_nvrtc_version(sweep->provenance.nvrtc_version);
  summary->set_timing(sweep->provenance.timing);
  summary->set_started_at_ms(sweep->started_at_ms);
  summary->set_reference_name(sweep->reference.name);
  summary->set_reference_us(sweep->reference.time_us);
  summary->set_status(std::string(store::SweepStatusName(sweep->status)));
  return absl::OkStatus();
}

absl::StatusOr<pb::ListResultsResponse> TunerService::Results(
    const pb::ListResultsRequest* request) const {
  pb::ListResultsResponse out;
  pb::ListResultsResponse* response = &out;
  if (request->limit() < 0) return absl::InvalidArgumentError("limit must be >= 0");
  if (!request->job_id().empty()) {
    auto job = jobs_.Get(request->job_id());
    if (!job.ok()) return job.status();
    std::string model;
    for (const GpuInfo& gpu : jobs_.Gpus()) {
      if (gpu.ordinal == job->spec.device && gpu.device) model = gpu.device->name();
    }
    response->set_device_model(model);
    if (job->sweep_id == 0) return out;  // queued: nothing measured yet
    store::RowQuery query;
    query.device_model = model;
    query.family = std::string(job->spec.family->name());
    query.shape = job->spec.shape;
    query.dtype = job->spec.dtype;
    query.include_unfinished = true;
    query.limit = request->limit();
    query.sweep_id = job->sweep_id;
    auto rows = store_.ListRows(query);
    if (!rows.ok()) return rows.status();
    if (auto s = FillResults(*rows, response); !s.ok()) return s;
    return out;
  }
  auto problem = Validate(request->problem());
  if (!problem.ok()) return problem.status();
  auto target = ResolveDevice(request->device(), false);
  if (!target.ok()) return target.status();
  store::RowQuery query;
  query.device_model = target->model;
  query.family = std::string(problem->family->name());
  query.shape = problem->shape;
  query.dtype = problem->dtype;
  query.limit = request->limit();
  auto rows = store_.ListRows(query);
  if (!rows.ok()) return rows.status();
  if (auto s = FillResults(*rows, response); !s.ok()) return s;
  response->set_device_model(target->model);
  return out;
}

grpc::Status TunerService::ListResults(grpc::ServerContext* context,
                                       const pb::ListResultsRequest* request,
                                       pb::ListResultsResponse* response) {
  if (auto s = Authorize(*context, Role::kRead, "ListResults"); !s.ok()) return s;
  auto results = Results(request);
  if (!results.ok()) return ToGrpc(results.status());
  *response = *std::move(results);
  return grpc::Status::OK;
}

grpc::Status TunerService::ExportTable(grpc::ServerContext* context,
                                       const pb::ExportTableRequest* request,
                                       pb::ExportTableResponse* response) {
  if (auto s = Authorize(*context, Role::kRead, "ExportTable"); !s.ok()) return s;
  auto slot = table_calls_.Enter();
  if (!slot.ok()) return ToGrpc(slot.status());
  auto json = store::ExportTable(store_, {request->device_model(), request->include_rows()});
  observe::TableExport exported{request->device_model(), request->include_rows()};
  if (!json.ok()) {
    exported.error = ToStd(json.status().message());
    observer_.TableExported(exported);
    return ToGrpc(json.status());
  }
  exported.bytes = static_cast<int64_t>(json->size());
  observer_.TableExported(exported);
  response->set_json(std::move(*json));
  return grpc::Status::OK;
}

grpc::Status TunerService::ImportTable(grpc::ServerContext* context,
                                       const pb::ImportTableRequest* request,
                                       pb::ImportTableResponse* response) {
  if (auto s = Authorize(*context, Role::kAdmin, "ImportTable"); !s.ok()) return s;
  auto slot = table_calls_.Enter();
  if (!slot.ok()) return ToGrpc(slot.status());
  store::ImportOptions options = ImportRules(store::MergePolicy::kKeepFaster);
  switch (request->policy()) {
    case pb::ImportTableRequest::MERGE_POLICY_UNSPECIFIED:
    case pb::ImportTableRequest::MERGE_POLICY_KEEP_FASTER:
      options.policy = store::MergePolicy::kKeepFaster;
      break;
    case pb::ImportTableRequest::MERGE_POLICY_KEEP_NEWER:
      options.policy = store::MergePolicy::kKeepNewer;
      break;
    case pb::ImportTableRequest::MERGE_POLICY_FAIL_ON_CONFLICT:
      options.policy = store::MergePolicy::kFailOnConflict;
      break;
    default:
      return {grpc::StatusCode::INVALID_ARGUMENT,
              absl::StrCat("unknown merge policy ", request->policy())};
  }
  auto stats = store::ImportTable(store_, request->json(), options);
  observe::TableImport imported{"ImportTable", static_cast<int64_t>(request->json().size())};
  if (!stats.ok()) {
    imported.error = ToStd(stats.status().message());
    observer_.TableImported(imported);
    return ToGrpc(stats.status());
  }
  imported.winners_added = stats->winners_added;
  imported.winners_replaced = stats->winners_replaced;
  imported.winners_kept = stats->winners_kept;
  imported.rows_added = stats->rows_added;
  observer_.TableImported(imported);
  response->set_winners_added(stats->winners_added);
  response->set_winners_replaced(stats->winners_replaced);
  response->set_winners_kept(stats->winners_kept);
  response->set_rows_added(stats->rows_added);
  return grpc::Status::OK;
}

grpc::Status TunerService::GetServerInfo(grpc::ServerContext* context,
                                         const pb::GetServerInfoRequest*,
                                         pb::GetServerInfoResponse* response) {
  absl::StatusOr<Role> role = authorizer_.RoleOf(*context);
  if (!role.ok()) {
    const grpc::Status refusal = ToGrpc(role.status());
    ReportRefusal(*context, "GetServerInfo", refusal);
    return refusal;
  }
  response->set_version(std::string(Version()));
  response->set_api_level(kApiLevel);
  response->set_role(*role == Role::kAdmin ? pb::GetServerInfoResponse::ROLE_ADMIN
                                           : pb::GetServerInfoResponse::ROLE_READ);
  response->set_tokens_required(authorizer_.enabled());
  response->set_gpu_count(static_cast<int32_t>(jobs_.Gpus().size()));
  return grpc::Status::OK;
}

}  // namespace cutune::service
