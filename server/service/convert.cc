#include "server/service/convert.h"

namespace cutune::service {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Echoes are cut where they are made (Quoted); this bound keeps any message, a compile log
  // say, far below the size that would turn the answer into RESOURCE_EXHAUSTED on the client.
  constexpr size_t kMaxMessage = 16 << 10;
  std::string message(status.message().substr(0, kMaxMessage));
  if (status.message().size() > kMaxMessage) message += "... (cut)";
  return {static_cast<grpc::StatusCode>(status.code()), std::move(message)};
}

void ToProto(const Measurement& m, pb::Measurement* out) {
  for (const auto& [name, value] : m.params) (*out->mutable_params())[name] = value;
  out->set_outcome(ToProto(m.outcome));
  out->set_detail(m.detail);
  out->set_registers(m.resources.registers);
  out->set_shared_bytes(m.resources.static_shared_bytes);
  out->set_spill_store_bytes(m.resources.spill_store_bytes);
  out->set_spill_load_bytes(m.resources.spill_load_bytes);
  out->set_samples(m.timing.samples);
  out->set_time_us(m.timing.median_us);
  out->set_rel_spread(m.timing.rel_spread);
  out->set_gbps(m.gbps);
  out->set_tflops(m.tflops);
  out->set_percent_of_reference(m.percent_of_reference);
  out->set_compile_ms(m.compile_ms);
}

void ToProto(const JobSnapshot& job, pb::JobProgress* out) {
  out->set_job_id(job.id);
  switch (job.state) {
    case JobState::kQueued:
      out->set_state(pb::JobProgress::STATE_QUEUED);
      break;
    case JobState::kRunning:
      out->set_state(pb::JobProgress::STATE_RUNNING);
      break;
    case JobState::kSucceeded:
      out->set_state(pb::JobProgress::STATE_SUCCEEDED);
      break;
    case JobState::kFailed:
      out->set_state(pb::JobProgress::STATE_FAILED);
      break;
    case JobState::kCancelled:
      out->set_state(pb::JobProgress::STATE_CANCELLED);
      break;
  }
  pb::Problem* problem = out->mutable_problem();
  if (job.spec.family) problem->set_family(std::string(job.spec.family->name()));
  for (int64_t d : job.spec.shape) problem->add_shape(d);
  problem->set_dtype(std::string(DTypeName(job.spec.dtype)));
  out->set_done(job.progress.done);
  out->set_total(job.progress.total);
  for (const auto& [outcome, count] : job.progress.counts) {
    (*out->mutable_outcome_counts())[pb::Outcome_Name(ToProto(outcome))] = count;
  }
  if (job.progress.best) ToProto(*job.progress.best, out->mutable_best());
  if (job.latest) ToProto(*job.latest, out->mutable_latest());
  out->set_eta_seconds(job.progress.eta_seconds);
  out->set_elapsed_seconds(job.progress.elapsed_seconds);
  out->set_error(job.error);
  out->set_reference_name(job.reference_name);
  out->set_reference_us(job.reference_us);
  for (const auto& [phase, seconds] : job.phase_seconds) (*out->mutable_phase_seconds())[phase] = seconds;
  for (const Measurement& tie : job.ties) ToProto(tie, out->add_ties());
  out->set_resumed(job.resumed);
  for (int device : job.devices) out->add_devices(device);
  for (const std::string& note : job.notes) out->add_notes(note);
}

}  // namespace cutune::service
