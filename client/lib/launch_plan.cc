#include "client/lib/launch_plan.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/family.h"

namespace cutune::client {

namespace pb = ::cutune::v1;

absl::StatusOr<LaunchPlan> PlanLaunch(const pb::GetBestConfigResponse& r) {
  const kernels::KernelFamily* family = kernels::FindFamily(r.problem().family());
  if (family == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown family '", r.problem().family(), "'"));
  }
  const std::vector<std::string> dims = family->dims();
  auto dim_value = [&](const std::string& name) -> absl::StatusOr<int64_t> {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == name && static_cast<int>(i) < r.problem().shape_size()) {
        return r.problem().shape(static_cast<int>(i));
      }
    }
    return absl::InternalError(absl::StrCat("the contract names dimension '", name,
                                            "', which ", r.problem().family(), " lacks"));
  };
  LaunchPlan plan;
  int pointers = 0;
  for (const pb::KernelArgument& arg : r.launch().arguments()) {
    if (arg.role() == pb::KernelArgument::ROLE_DIMENSION) {
      if (arg.extent_size() != 1) return absl::InternalError("a dimension argument has no name");
      auto v = dim_value(arg.extent(0));
      if (!v.ok()) return v.status();
      if (*v > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat("dimension ", arg.extent(0), " = ", *v,
                                                       " does not fit the kernel's int"));
      }
      plan.slots.push_back({false, static_cast<int>(plan.dims.size())});
      plan.dims.push_back(static_cast<int32_t>(*v));
      continue;
    }
    int64_t elements = 1;
    for (const std::string& e : arg.extent()) {
      auto v = dim_value(e);
      if (!v.ok()) return v.status();
      elements *= *v;
    }
    plan.slots.push_back({true, pointers++});
    plan.output.push_back(arg.role() == pb::KernelArgument::ROLE_OUTPUT);
    plan.bytes.push_back(elements * 4);
    plan.names.push_back(arg.name());
    plan.element_type = arg.element_type();
  }
  plan.alignment = r.launch().pointer_alignment() ? r.launch().pointer_alignment()
                                                : kernels::kPointerAlignment;
  plan.family = r.problem().family();
  if (plan.output.size() > kMaxLaunchPointers || plan.dims.size() > kMaxLaunchDims) {
    return absl::InternalError("the contract has more arguments than a launch takes");
  }
  if (plan.slots.empty()) {
    return absl::InternalError("the answer carries no launch contract (a daemon older than this "
                               "library?)");
  }
  return plan;
}


absl::Status CheckLaunch(const LaunchPlan& plan, const void* const* pointers,
                         const Kernel::PointerInfo* info, size_t count, uint64_t* values) {
  if (count != plan.output.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(plan.family, " takes ", plan.output.size(), " device pointers (",
                     absl::StrJoin(plan.names, ", "), "); got ", count));
  }
  for (size_t i = 0; i < count; ++i) {
    const std::string& name = plan.names[i];
    if (pointers[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", name, " is a null pointer"));
    }
    if (info[i].element_type == nullptr || plan.element_type != info[i].element_type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", name, " must point to ", plan.element_type, " elements (",
          plan.element_type == "f32" ? "float" : plan.element_type, "), not ",
          info[i].element_type != nullptr ? info[i].element_type : "another type"));
    }
    if (plan.output[i] && info[i].is_const) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", name, " is the output: pass a non-const pointer"));
    }
    const auto address = reinterpret_cast<uintptr_t>(pointers[i]);
    if (address % plan.alignment != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", name, " (0x", absl::Hex(address), ") is not aligned to ",
                       plan.alignment, " bytes, as the kernel's vector loads need"));
    }
    values[i] = address;
  }
  return absl::OkStatus();
}

}  // namespace cutune::client
