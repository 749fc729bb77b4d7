// What a GetBestConfig answer says, built from a lookup: the rung, the configuration, every NVRTC
// option, the geometry and launch contract for the asked shape, the figures and their
// provenance. The daemon and the client library's offline tables both answer through here, so
// an answer read from a table file is the daemon's answer.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cutune/v1/cutune.pb.h"
#include "kernels/family.h"
#include "server/core/types.h"
#include "server/store/store.h"
#include "server/store/tables.h"

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
  int sm_count = 0;   // 0: unknown (the launch grid of a persistent kernel assumes one SM)
};
std::string ArchOf(const AnswerDevice& device);  // "sm_90"

// A device model known from the tables in `store`, for a host without that GPU: `model` if the
// tables hold it (NOT_FOUND listing the models they hold otherwise); empty `model`: the only
// model they hold (INVALID_ARGUMENT asking to choose when there are several; an empty device
// when there is none: only family defaults can answer). `gpu_models`, the models of this host's
// GPUs, are listed too in the NOT_FOUND message. A `model` the tables do not hold but that the
// request describes (`described`, DescribedGpu) is that description: the ladder then answers it
// from another model of its compute capability.
absl::StatusOr<store::DeviceModel> ModelFromTables(
    store::Store& store, const std::string& model, const std::vector<std::string>& gpu_models = {},
    const std::optional<store::DeviceModel>& described = std::nullopt);

// The asking GPU a selector by model describes (its cc_major, cc_minor and sm_count, named
// `model`); nullopt when cc_major is 0 or the selector is not by model. INVALID_ARGUMENT naming
// the field for a value out of range.
absl::StatusOr<std::optional<store::DeviceModel>> DescribedGpu(const pb::DeviceSelector& selector);

// The store query for `problem` on `device`, with this process's provenance as "current".
store::LookupQuery LookupQueryFor(const ValidProblem& problem, const AnswerDevice& device);

// Every field of the answer but `cubin` and `job_id`.
void FillAnswer(const ValidProblem& problem, const AnswerDevice& device,
                const store::LookupResult& found, bool include_source,
                pb::GetBestConfigResponse* response);

// A cubin of an answer for `arch` ("sm_90"): its `source` (the family's own when the answer
// holds none and its source_hash is this build's) compiled with exactly its compile_options, the
// architecture option replaced by `arch`, through the compile cache of this host (the daemon's
// default one, $CUTUNE_CACHE_DIR or ~/.cache/cutune/nvrtc). FAILED_PRECONDITION when the source is unknown here,
// INTERNAL with NVRTC's log when it does not compile.
absl::StatusOr<std::string> CompileAnswer(const pb::GetBestConfigResponse& answer,
                                          const std::string& arch);
// The architecture an answer's compile options name ("sm_90"), empty if none.
std::string AnswerArch(const pb::GetBestConfigResponse& answer);

// The launch contract of one configuration at one shape.
void FillLaunchContract(const kernels::KernelFamily& family, const Params& params,
                        const LaunchGeometry& geometry, DType dtype, pb::LaunchContract* out);
// A family as ListFamilies describes it.
void FillFamily(const kernels::KernelFamily& family, pb::Family* out);

pb::GetBestConfigResponse::Rung ToProto(store::LookupRung rung);
// The API's outcome (also what `cutune space compile --json` reports).
pb::Outcome ToProto(Outcome outcome);

// The kernel families' admission rules in the form the store takes: every table imported and
// every stored winner served passes them.
store::EntryValidator FamilyRules();
// What a store that answers lookups is opened with: FamilyRules and the families' launch
// efficiency (for the prediction models).
store::StoreOptions StoreRules();
// How a table is imported: the known families, FamilyRules and `policy`.
store::ImportOptions ImportRules(store::MergePolicy policy);

}  // namespace cutune::service
