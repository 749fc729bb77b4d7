// What a GetBestConfig answer says, built from a lookup: the rung, the configuration, every NVRTC
// option, the geometry and launch contract for the asked shape, the figures and their
// provenance. The daemon and the client library's offline tables both answer through here, so
// an answer read from a table file is the daemon's answer.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cutune/v1/cutune.pb.h"
#include "kernels/family.h"
#include "server/core/types.h"
#include "server/store/store.h"

namespace cutune::service {

namespace pb = ::cutune::v1;

// A request's problem, checked: a known family, a shape it accepts, a known dtype.
struct ValidProblem {
  const kernels::KernelFamily* family = nullptr;
  Shape shape;
  DType dtype = DType::kF32;
};
absl::StatusOr<ValidProblem> Validate(const pb::Problem& problem);

// The device an answer is for.
struct AnswerDevice {
  std::string model;  // empty: nothing known (the family default only)
  int cc_major = 0;   // 0: unknown, sm_90 assumed for compile options
  int cc_minor = 0;
  int driver_version = 0;
};
std::string ArchOf(const AnswerDevice& device);  // "sm_90"

// The store query for `problem` on `device`, with this process's provenance as "current".
store::LookupQuery LookupQueryFor(const ValidProblem& problem, const AnswerDevice& device);

// Every field of the answer but `cubin` and `job_id`.
void FillAnswer(const ValidProblem& problem, const AnswerDevice& device,
                const store::LookupResult& found, bool include_source,
                pb::GetBestConfigResponse* response);

// The launch contract of one configuration at one shape.
void FillLaunchContract(const kernels::KernelFamily& family, const Params& params,
                        const LaunchGeometry& geometry, DType dtype, pb::LaunchContract* out);
// A family as ListFamilies describes it.
void FillFamily(const kernels::KernelFamily& family, pb::Family* out);

pb::GetBestConfigResponse::Rung ToProto(store::LookupRung rung);

}  // namespace cutune::service
