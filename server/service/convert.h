// Conversions between cutune's internal records and the cutune.v1 API messages, and between
// absl::Status and grpc::Status (the codes share their numbers).
#pragma once

#include "absl/status/status.h"
#include "cutune/v1/cutune.pb.h"
#include "grpcpp/support/status.h"
#include "server/core/types.h"
#include "server/service/answer.h"  // ToProto(Outcome)
#include "server/service/job_manager.h"

namespace cutune::service {

namespace pb = ::cutune::v1;

grpc::Status ToGrpc(const absl::Status& status);
void ToProto(const Measurement& m, pb::Measurement* out);
void ToProto(const JobSnapshot& job, pb::JobProgress* out);

}  // namespace cutune::service
