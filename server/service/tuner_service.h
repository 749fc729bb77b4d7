// The cutune.v1.Tuner gRPC service: validates every request before anything is queued, answers
// lookups from the store's ladder, and drives tuning jobs through the JobManager. Synchronous
// gRPC handlers are used on purpose: WatchJob and WAIT_FOR_TUNING block on job progress, which
// the sync server's thread pool absorbs without the timer machinery callback reactors would need;
// ServiceLimits bounds how many such calls are open, and cutuned caps the pool's threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutune/v1/cutune.grpc.pb.h"
#include "server/compiler/pool.h"
#include "server/service/answer.h"
#include "server/service/auth.h"
#include "server/service/call_limit.h"
#include "server/observe/events.h"
#include "server/service/job_manager.h"
#include "server/store/store.h"

namespace cutune::service {

namespace pb = ::cutune::v1;

// Trailing metadata key on a WAIT_FOR_TUNING call that ends without an answer after its job was
// queued (DEADLINE_EXCEEDED while the job goes on, ABORTED when it failed or was cancelled, or
// the server's own error): the job's id, for machines.
inline constexpr std::string_view kJobIdTrailer = "cutune-job-id";

// Sweep spaces with more combinations than this are refused (RESOURCE_EXHAUSTED) rather than
// enumerated: a sweep walks every combination to find the valid ones (matmul's 17.7 million take
// about 7 s of CPU here, spread over up to 16 threads, once per daemon for the default space).
// Requests can only narrow a family's default space, which must fit (tested).
inline constexpr uint64_t kMaxSpaceCombinations = 32'000'000;


// Bounds on calls that hold a server thread or much memory for long (see CallLimit).
struct ServiceLimits {
  int max_streams = 64;      // WatchJob streams and WAIT_FOR_TUNING calls open at once
  int max_table_calls = 2;   // ExportTable and ImportTable calls running at once
};

class TunerService final : public pb::Tuner::Service {
 public:
  // `observer` (nullptr: nobody) is told of lookups, table imports and exports, and auth
  // refusals.
  TunerService(store::Store& store, JobManager& jobs, compiler::CompilePool& pool,
               Authorizer authorizer, ServiceLimits limits = {},
               observe::Observer* observer = nullptr);

  grpc::Status ListDevices(grpc::ServerContext* context, const pb::ListDevicesRequest* request,
                           pb::ListDevicesResponse* response) override;
  grpc::Status ListFamilies(grpc::ServerContext* context, const pb::ListFamiliesRequest* request,
                            pb::ListFamiliesResponse* response) override;
  grpc::Status GetBestConfig(grpc::ServerContext* context, const pb::GetBestConfigRequest* request,
                             pb::GetBestConfigResponse* response) override;
  grpc::Status StartTuning(grpc::ServerContext* context, const pb::StartTuningRequest* request,
                           pb::StartTuningResponse* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const pb::WatchJobRequest* request,
                        grpc::ServerWriter<pb::JobProgress>* writer) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const pb::CancelJobRequest* request,
                         pb::CancelJobResponse* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const pb::ListJobsRequest* request,
                        pb::ListJobsResponse* response) override;
  grpc::Status ListResults(grpc::ServerContext* context, const pb::ListResultsRequest* request,
                           pb::ListResultsResponse* response) override;
  grpc::Status ExportTable(grpc::ServerContext* context, const pb::ExportTableRequest* request,
                           pb::ExportTableResponse* response) override;
  grpc::Status ImportTable(grpc::ServerContext* context, const pb::ImportTableRequest* request,
                           pb::ImportTableResponse* response) override;
  grpc::Status GetServerInfo(grpc::ServerContext* context, const pb::GetServerInfoRequest* request,
                             pb::GetServerInfoResponse* response) override;
  // profile_handler.cc.
  grpc::Status ProfileCandidate(grpc::ServerContext* context,
                                const pb::ProfileCandidateRequest* request,
                                pb::ProfileCandidateResponse* response) override;

  // What the read RPCs answer, without the token check (the caller has made it): the gRPC
  // handlers above and the daemon's dashboard share them.
  pb::ListDevicesResponse Devices() const;
  pb::ListJobsResponse Jobs() const;
  absl::StatusOr<pb::ListResultsResponse> Results(const pb::ListResultsRequest* request) const;

 private:
  // The device a request resolves to (ResolveDevice).
  struct Target {
    std::optional<int> ordinal;  // a GPU of this host
    std::string model;           // empty: nothing known (family default only)
    int cc_major = 0;
    int cc_minor = 0;
    int driver_version = 0;
    int64_t total_memory = 0;
    int sm_count = 0;  // 0: unknown
  };
  // The rows as messages (with their sequence) and the newest sweep's summary.
  absl::Status FillResults(const std::vector<store::StoredRow>& rows,
                           pb::ListResultsResponse* response) const;  // the device a request resolves to
  static AnswerDevice AnswerDeviceOf(const Target& target);
  absl::StatusOr<Target> ResolveDevice(const pb::DeviceSelector& selector, bool need_gpu) const;
  // ListDevices' table_models: the device models the tables hold winners for.
  absl::Status FillTableModels(pb::ListDevicesResponse* response) const;
  // ProfileCandidate without the token check: the configuration, its stored row, the run under
  // ncu on the GPU (JobManager::Profile), the profile stored with the row.
  absl::StatusOr<pb::ProfileCandidateResponse> Profile(const pb::ProfileCandidateRequest& request);
  // WAIT_FOR_TUNING: blocks until the job ends (OK if it succeeded, ABORTED if not) or until
  // shortly before the caller's deadline (DEADLINE_EXCEEDED; the job goes on).
  absl::Status AwaitJob(const grpc::ServerContext& context, const std::string& job_id);
  // authorizer_.Check, and an auth refusal told to the observer (`method`: "ListDevices").
  grpc::Status Authorize(const grpc::ServerContext& context, Role needed,
                         std::string_view method) const;
  // An auth refusal of `method`'s call, told to the observer (peer, method, code, reason).
  void ReportRefusal(const grpc::ServerContext& context, std::string_view method,
                     const grpc::Status& refusal) const;

  store::Store& store_;
  JobManager& jobs_;
  compiler::CompilePool& pool_;
  const Authorizer authorizer_;
  observe::Observer& observer_;
  CallLimit streams_;
  CallLimit table_calls_;
};

}  // namespace cutune::service
