// The ProfileCandidate RPC: which configuration (given, or the stored winner), its stored row,
// the candidate compiled as a sweep compiles it, the run under Nsight Compute on the GPU once no
// job runs there (JobManager::Profile), and the counters stored with the row.
#include "absl/strings/str_cat.h"
#include "server/core/strings.h"
#include "server/service/convert.h"
#include "server/service/tuner_service.h"
#include "server/tuner/candidate.h"

namespace cutune::service {
namespace {

namespace wpb = ::cutune::worker::v1;

void ToProto(const store::StoredProfile& profile, pb::Profile* out) {
  out->set_ncu_version(profile.ncu_version);
  out->set_profiled_at_ms(profile.profiled_at_ms);
  for (const store::ProfileMetric& metric : profile.metrics) {
    pb::ProfileMetric* m = out->add_metrics();
    m->set_name(metric.name);
    m->set_value(metric.value);
    m->set_unit(metric.unit);
  }
}

// The one-shot worker's job: the problem as a sweep prepares it, the candidate checked once and
// then launched once more, timed like a sample (the L2 flushed first): that launch is profiled.
wpb::ProfileJob JobFor(const ValidProblem& problem, uint64_t seed, const Params& params,
                       int sm_count, const compiler::CompileResult& compiled) {
  wpb::ProfileJob job;
  *job.mutable_prepare() =
      tuner::PrepareRequest(*problem.family, problem.shape, problem.dtype, seed);
  wpb::TimingPolicy timing;
  timing.set_warmup(0);
  timing.set_min_samples(1);
  timing.set_max_samples(1);
  timing.set_target_rel_spread(1.0);
  timing.set_flush_l2(true);
  *job.mutable_run() =
      tuner::RunRequest(*problem.family, params, problem.shape, sm_count, compiled, timing,
                        /*verify=*/true);
  return job;
}

}  // namespace

absl::StatusOr<pb::ProfileCandidateResponse> TunerService::Profile(
    const pb::ProfileCandidateRequest& request) {
  auto problem = Validate(request.problem());
  if (!problem.ok()) return problem.status();
  // Said first: without ncu nothing else about the request matters.
  if (auto ncu = jobs_.Ncu(); !ncu.ok()) return ncu.status();
  auto target = ResolveDevice(request.device(), /*need_gpu=*/true);
  if (!target.ok()) return target.status();
  const kernels::KernelFamily& family = *problem->family;
  const std::string what = absl::StrCat(ToAbsl(family.name()), " ", FormatShape(problem->shape),
                                        " ", ToAbsl(DTypeName(problem->dtype)));

  Params params;
  std::optional<int64_t> winner_sweep;
  if (request.winner()) {
    auto winners = store_.ListWinners(target->model);
    if (!winners.ok()) return winners.status();
    for (const store::Winner& w : *winners) {
      if (w.family == family.name() && w.shape == problem->shape && w.dtype == problem->dtype) {
        params = w.measurement.params;
        winner_sweep = w.sweep_id;
      }
    }
    if (params.empty()) {
      return absl::NotFoundError(absl::StrCat("no stored winner of ", what, " on ", target->model,
                                              ": tune it first, or give the parameters"));
    }
  } else {
    params = family.baseline();
    for (const auto& [name, value] : request.params().values()) params[name] = value;
    if (absl::Status s = family.default_space().Admit(params, /*strict=*/true); !s.ok()) return s;
  }

  // The row the profile belongs to: this configuration under this kernel source, the winner's
  // own sweep for a winner, else the newest sweep that measured it.
  store::RowQuery query;
  query.device_model = target->model;
  query.family = std::string(family.name());
  query.shape = problem->shape;
  query.dtype = problem->dtype;
  query.source_hash = family.source_hash();
  auto rows = store_.ListRows(query);
  if (!rows.ok()) return rows.status();
  std::optional<store::StoredRow> row;
  for (const store::StoredRow& r : *rows) {
    if (r.measurement.params != params) continue;
    if (winner_sweep && r.sweep_id != *winner_sweep) continue;
    if (!row || r.sweep_id > row->sweep_id) row = r;
  }

  const std::string arch = ArchOf(AnswerDeviceOf(*target));
  auto compiled = pool_.Submit(tuner::CandidateRequest(family, params, problem->shape, arch)).get();
  if (!compiled.ok()) return compiled.status();
  if (!compiled->ok) {
    return absl::InvalidArgumentError(absl::StrCat(FormatParams(params), " does not compile for ",
                                                   arch, ":\n", tuner::LogExcerpt(compiled->log)));
  }
  const int ordinal = target->ordinal.value_or(0);
  auto ran = jobs_.Profile(
      ordinal, JobFor(*problem, request.seed() ? request.seed() : 1, params, target->sm_count,
                      *compiled));
  if (!ran.ok()) return ran.status();

  store::StoredProfile stored{ran->ncu_version, store::NowMs(), {}};
  for (const profile::Metric& m : ran->metrics) stored.metrics.push_back({m.name, m.value, m.unit});
  pb::ProfileCandidateResponse response;
  if (row) {
    if (absl::Status s = store_.RecordProfile(row->sweep_id, params, stored); !s.ok()) return s;
    ToProto(row->measurement, response.mutable_row());
    response.mutable_row()->set_sequence(row->sequence);
    response.set_stored(true);
  }
  for (const auto& [name, value] : params) (*response.mutable_params())[name] = value;
  ToProto(stored, response.mutable_profile());
  response.set_device_model(target->model);
  response.set_ordinal(ordinal);
  return response;
}

grpc::Status TunerService::ProfileCandidate(grpc::ServerContext* context,
                                            const pb::ProfileCandidateRequest* request,
                                            pb::ProfileCandidateResponse* response) {
  if (auto s = Authorize(*context, Role::kAdmin, "ProfileCandidate"); !s.ok()) return s;
  auto answer = Profile(*request);
  if (!answer.ok()) return ToGrpc(answer.status());
  *response = *std::move(answer);
  return grpc::Status::OK;
}

}  // namespace cutune::service
