#include "server/service/answer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/compiler/cache.h"
#include "server/compiler/compiler.h"
#include "server/core/strings.h"
#include "server/tuner/candidate.h"

namespace cutune::service {
namespace {

void ToProto(const LaunchGeometry& g, pb::LaunchGeometry* out) {
  for (uint32_t v : g.grid) out->add_grid(v);
  for (uint32_t v : g.block) out->add_block(v);
  out->set_dynamic_shared_bytes(g.dynamic_shared_bytes);
}

pb::KernelArgument::Role ToProto(kernels::KernelArgument::Role role) {
  switch (role) {
    case kernels::KernelArgument::Role::kInput:
      return pb::KernelArgument::ROLE_INPUT;
    case kernels::KernelArgument::Role::kOutput:
      return pb::KernelArgument::ROLE_OUTPUT;
    case kernels::KernelArgument::Role::kDimension:
      return pb::KernelArgument::ROLE_DIMENSION;
  }
  return pb::KernelArgument::ROLE_UNSPECIFIED;
}

pb::LaunchContract::Concurrency ToProto(kernels::Concurrency concurrency) {
  switch (concurrency) {
    case kernels::Concurrency::kAny:
      return pb::LaunchContract::CONCURRENCY_ANY;
    case kernels::Concurrency::kOneModulePerStream:
      return pb::LaunchContract::CONCURRENCY_ONE_MODULE_PER_STREAM;
  }
  return pb::LaunchContract::CONCURRENCY_UNSPECIFIED;
}

}  // namespace

absl::StatusOr<ValidProblem> Validate(const pb::Problem& problem) {
  if (problem.family().empty()) return absl::InvalidArgumentError("problem.family is required");
  auto family = kernels::GetFamily(problem.family());
  if (!family.ok()) return family.status();
  ValidProblem out;
  out.family = *family;
  if (!problem.dtype().empty()) {
    auto dtype = ParseDType(problem.dtype());
    if (!dtype.ok()) return dtype.status();
    out.dtype = *dtype;
  }
  out.shape.assign(problem.shape().begin(), problem.shape().end());
  if (auto s = out.family->ValidateShape(out.shape); !s.ok()) return s;
  return out;
}

std::string ArchOf(const AnswerDevice& device) {
  return device.cc_major ? absl::StrCat("sm_", device.cc_major, device.cc_minor) : "sm_90";
}

absl::StatusOr<store::DeviceModel> ModelFromTables(
    store::Store& store, const std::string& model, const std::vector<std::string>& gpu_models,
    const std::optional<store::DeviceModel>& described) {
  auto models = store.ListDeviceModels();
  if (!models.ok()) return models.status();
  std::vector<std::string> names;
  for (const store::DeviceModel& m : *models) {
    if (!model.empty() && m.name == model) return m;
    names.push_back(m.name);
  }
  if (!model.empty() && described) {
    store::DeviceModel gpu = *described;
    // No SM count given: that of a held model of its architecture (the one answering it), not
    // one SM, so a persistent kernel's grid still fills the GPU.
    for (const store::DeviceModel& m : *models) {
      if (gpu.sm_count > 0) break;
      if (m.cc_major == gpu.cc_major && m.cc_minor == gpu.cc_minor) gpu.sm_count = m.sm_count;
    }
    return gpu;
  }
  if (!model.empty()) {
    // Every name that would have answered, so that a typo is one look away from its fix.
    std::vector<std::string> known;
    if (!gpu_models.empty()) {
      known.push_back(absl::StrCat("GPUs here: ", absl::StrJoin(gpu_models, ", ")));
    }
    known.push_back(names.empty() ? std::string("no tables imported")
                                  : absl::StrCat("tables hold: ", absl::StrJoin(names, ", ")));
    return absl::NotFoundError(absl::StrCat(
        "no GPU and no tuning data for device model ", Quoted(model), " (",
        absl::StrJoin(known, "; "),
        "); a request that gives the GPU's compute capability (device.cc_major, cc_minor; "
        "`cutune get --arch`) is answered from a model of the same architecture"));
  }
  if (models->size() == 1) return models->front();
  if (models->empty()) return store::DeviceModel{};
  return absl::InvalidArgumentError(absl::StrCat(
      "this host has no GPU and its tables hold several device models; choose one with "
      "device.model: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::optional<store::DeviceModel>> DescribedGpu(const pb::DeviceSelector& selector) {
  if (selector.by_case() != pb::DeviceSelector::kModel || selector.cc_major() == 0) {
    return std::nullopt;
  }
  if (selector.cc_major() < 1 || selector.cc_major() > 99) {
    return absl::InvalidArgumentError(
        absl::StrCat("device.cc_major must be 1..99 (0: not given), not ", selector.cc_major()));
  }
  if (selector.cc_minor() < 0 || selector.cc_minor() > 99) {
    return absl::InvalidArgumentError(
        absl::StrCat("device.cc_minor must be 0..99, not ", selector.cc_minor()));
  }
  if (selector.sm_count() < 0 || selector.sm_count() > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat("device.sm_count must be 0..100000 (0: unknown), not ", selector.sm_count()));
  }
  return store::DeviceModel{selector.model(), selector.cc_major(), selector.cc_minor(),
                            selector.sm_count(), 0};
}

store::LookupQuery LookupQueryFor(const ValidProblem& problem, const AnswerDevice& device) {
  const kernels::KernelFamily& family = *problem.family;
  store::LookupQuery query;
  query.device_model = device.model;
  query.cc_major = device.cc_major;
  query.cc_minor = device.cc_minor;
  query.family = std::string(family.name());
  query.shape = problem.shape;
  query.dtype = problem.dtype;
  // No timing: a winner timed another way is still a right and tuned configuration (its times
  // are what differ), so timing is not among the stale fields.
  query.current = {device.driver_version, compiler::NvrtcVersion(), family.source_hash(),
                   family.space_version(), ""};
  query.family_default = family.baseline();
  return query;
}

pb::Outcome ToProto(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return pb::OUTCOME_OK;
    case Outcome::kPruned:
      return pb::OUTCOME_PRUNED;
    case Outcome::kCompileFailed:
      return pb::OUTCOME_COMPILE_FAILED;
    case Outcome::kOutOfResources:
      return pb::OUTCOME_OUT_OF_RESOURCES;
    case Outcome::kFault:
      return pb::OUTCOME_FAULT;
    case Outcome::kTimeout:
      return pb::OUTCOME_TIMEOUT;
    case Outcome::kWrongAnswer:
      return pb::OUTCOME_WRONG_ANSWER;
  }
  return pb::OUTCOME_UNSPECIFIED;
}

pb::GetBestConfigResponse::Rung ToProto(store::LookupRung rung) {
  switch (rung) {
    case store::LookupRung::kExact:
      return pb::GetBestConfigResponse::RUNG_EXACT;
    case store::LookupRung::kPredicted:
      return pb::GetBestConfigResponse::RUNG_PREDICTED;
    case store::LookupRung::kNearestShape:
      return pb::GetBestConfigResponse::RUNG_NEAREST_SHAPE;
    case store::LookupRung::kSameArchitecture:
      return pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE;
    case store::LookupRung::kFamilyDefault:
      return pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT;
  }
  return pb::GetBestConfigResponse::RUNG_UNSPECIFIED;
}

namespace {
constexpr absl::string_view kArchOption = "--gpu-architecture=";

// The process's compiler for answers: the content-addressed cache the daemon uses too
// (compiler::DefaultCacheDirectory), so that a program starting again, or asking for what a
// daemon on this host compiled, loads a cubin instead of running NVRTC. Without a usable cache
// directory it compiles every time.
compiler::CachingCompiler& AnswerCompiler() {
  static compiler::CachingCompiler* const compiler = [] {
    if (auto dir = compiler::DefaultCacheDirectory(); dir.ok()) {
      if (auto cache = compiler::CompileCache::Open(*dir); cache.ok()) {
        return new compiler::CachingCompiler(*std::move(cache));
      }
    }
    return new compiler::CachingCompiler();
  }();
  return *compiler;
}
}  // namespace

std::string AnswerArch(const pb::GetBestConfigResponse& answer) {
  for (const std::string& option : answer.compile_options()) {
    if (absl::StartsWith(option, kArchOption)) return option.substr(kArchOption.size());
  }
  return "";
}

absl::StatusOr<std::string> CompileAnswer(const pb::GetBestConfigResponse& answer,
                                          const std::string& arch) {
  compiler::CompileRequest request;
  request.arch = arch;
  request.source = answer.source();
  if (request.source.empty()) {
    const kernels::KernelFamily* family = kernels::FindFamily(answer.problem().family());
    if (family == nullptr || family->source_hash() != answer.source_hash()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the answer holds no source and its source hash ", answer.source_hash().substr(0, 16),
          " is not this build's ", answer.problem().family(), " kernel: ask with include_source"));
    }
    request.source = std::string(family->source());
  }
  for (const std::string& option : answer.compile_options()) {
    if (!absl::StartsWith(option, kArchOption)) request.options.push_back(option);
  }
  auto compiled = AnswerCompiler().Compile(request);
  if (!compiled.ok()) return compiled.status();
  if (!compiled->ok) {
    return absl::InternalError(absl::StrCat("the answer's configuration does not compile for ",
                                            arch, ":\n", compiled->log));
  }
  return std::move(compiled->cubin);
}

void FillLaunchContract(const kernels::KernelFamily& family, const Params& params,
                        const LaunchGeometry& geometry, DType dtype, pb::LaunchContract* out) {
  out->set_kernel(std::string(kernels::KernelFamily::kKernelName));
  const std::vector<std::string> dims = family.dims();
  for (const kernels::KernelArgument& a : family.Arguments()) {
    pb::KernelArgument* arg = out->add_arguments();
    arg->set_name(a.name);
    arg->set_role(ToProto(a.role));
    arg->set_type(kernels::ArgumentCType(a, DTypeName(dtype)));
    if (a.role != kernels::KernelArgument::Role::kDimension) {
      arg->set_element_type(std::string(DTypeName(dtype)));
    }
    for (int dim : a.extent) arg->add_extent(dims.at(dim));
  }
  for (const kernels::FunctionAttribute& a : kernels::FunctionAttributes(geometry)) {
    pb::FunctionAttribute* attribute = out->add_function_attributes();
    attribute->set_name(a.name);
    attribute->set_driver_attribute(a.driver_attribute);
    attribute->set_value(a.value);
  }
  out->set_concurrency(ToProto(family.LaunchConcurrency(params)));
  out->set_pointer_alignment(kernels::kPointerAlignment);
}

void FillFamily(const kernels::KernelFamily& family, pb::Family* f) {
  f->set_name(std::string(family.name()));
  f->set_description(std::string(family.description()));
  for (const std::string& dim : family.dims()) f->add_dims(dim);
  const kernels::Space& space = family.default_space();
  for (const kernels::Parameter& p : space.parameters()) {
    pb::Parameter* param = f->add_parameters();
    param->set_name(p.name);
    for (int64_t v : p.values) param->add_values(v);
    param->set_help(p.help);
  }
  for (const kernels::Constraint& c : space.constraints()) f->add_constraints(c.text);
  f->set_space_size(space.CartesianSize());
  f->set_source_hash(family.source_hash());
  const Params baseline = family.baseline();
  for (const auto& [name, value] : baseline) (*f->mutable_default_params())[name] = value;
  // The contract of the default configuration. Its attributes depend on the configuration
  // alone; the grid, which a contract does not hold, is all the shape sizes.
  const LaunchGeometry geometry =
      family.Geometry(baseline, Shape(family.dims().size(), 64), /*sm_count=*/1);
  FillLaunchContract(family, baseline, geometry, DType::kF32, f->mutable_launch());
}

void FillAnswer(const ValidProblem& problem, const AnswerDevice& device,
                const store::LookupResult& found, bool include_source,
                pb::GetBestConfigResponse* response) {
  const kernels::KernelFamily& family = *problem.family;
  pb::Problem* asked = response->mutable_problem();
  asked->set_family(std::string(family.name()));
  for (int64_t d : problem.shape) asked->add_shape(d);
  asked->set_dtype(std::string(DTypeName(problem.dtype)));
  response->set_rung(ToProto(found.rung));
  response->set_shape_distance(found.distance);
  for (int64_t d : found.tuned_shape) response->add_tuned_shape(d);
  response->set_device_model(found.device_model);
  response->set_kernel(std::string(kernels::KernelFamily::kKernelName));
  for (const auto& [name, value] : found.winner.params) (*response->mutable_params())[name] = value;
  for (const std::string& option : tuner::CandidateOptions(family, found.winner.params, problem.shape)) {
    response->add_compile_options(option);
  }
  response->add_compile_options(absl::StrCat("--gpu-architecture=", ArchOf(device)));
  const LaunchGeometry geometry =
      family.Geometry(found.winner.params, problem.shape, device.sm_count);
  ToProto(geometry, response->mutable_geometry());
  FillLaunchContract(family, found.winner.params, geometry, problem.dtype,
                     response->mutable_launch());
  response->set_source_hash(found.rung == store::LookupRung::kFamilyDefault
                                ? family.source_hash()
                                : found.provenance.source_hash);
  response->set_time_us(found.winner.timing.median_us);
  response->set_gbps(found.winner.gbps);
  response->set_tflops(found.winner.tflops);
  response->set_percent_of_reference(found.winner.percent_of_reference);
  response->set_measured_at_asked_shape(found.rung == store::LookupRung::kExact);
  if (found.expected_slowdown > 0) {  // a prediction model's pick (PREDICTED, SAME_ARCHITECTURE)
    response->set_predicted_time_us(found.predicted_time_us);
    response->set_expected_slowdown(found.expected_slowdown);
  }
  for (const std::string& s : found.stale) response->add_stale(s);
  if (found.rung != store::LookupRung::kFamilyDefault) {
    pb::Provenance* provenance = response->mutable_provenance();
    provenance->set_driver_version(found.provenance.driver_version);
    provenance->set_nvrtc_version(found.provenance.nvrtc_version);
    provenance->set_source_hash(found.provenance.source_hash);
    provenance->set_space_version(found.provenance.space_version);
    provenance->set_timing(found.provenance.timing);
    response->set_from_table(found.imported);
  }
  if (include_source) response->set_source(std::string(family.source()));
}

store::EntryValidator FamilyRules() {
  return {kernels::ValidateProblem, kernels::ValidateParams, kernels::CanonicalParams};
}

store::StoreOptions StoreRules() {
  store::StoreOptions options;
  options.validator = FamilyRules();
  options.current_source = [](std::string_view name) {
    const kernels::KernelFamily* family = kernels::FindFamily(name);
    return family == nullptr ? std::string() : std::string(family->source_hash());
  };
  // Only asked about configurations and shapes the validator accepted (winners, imported
  // members), whose geometry is defined.
  options.fit = [](std::string_view name, const store::DeviceModel& device) -> predict::FitFn {
    const kernels::KernelFamily* family = kernels::FindFamily(name);
    // A memory-bound kernel's time is its bytes over the bandwidth its blocks keep busy, not
    // whole waves of tiles: the fit (tiles' coverage times the last wave's busy share) only
    // reorders its members at small shapes, where every launch is latency (transpose,
    // leave-one-shape-out on three H200 tables: bench/results/unseen-shapes.md, section 11).
    if (family == nullptr || family->memory_bound()) return nullptr;
    const int sm_count = device.sm_count > 0 ? device.sm_count : 132;
    // Occupancy needs the architecture's per-SM limits; on an unknown one a block is counted
    // as alone on its SM.
    const absl::StatusOr<kernels::DeviceLimits> limits =
        kernels::DeviceLimits::ForComputeCapability(device.cc_major, device.cc_minor);
    return [family, sm_count, limits](const Params& params, const Shape& shape,
                                      const ResourceUsage& resources) {
      kernels::LaunchFigures f = kernels::FitLaunch(*family, params, shape, resources,
                                                    limits.ok() ? &*limits : nullptr, sm_count);
      return predict::LaunchFit{f.efficiency, std::move(f.cost_terms)};
    };
  };
  return options;
}

store::ImportOptions ImportRules(store::MergePolicy policy) {
  store::ImportOptions options;
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) {
    options.known_families.insert(std::string(f->name()));
  }
  options.policy = policy;
  options.validator = FamilyRules();
  return options;
}

}  // namespace cutune::service
