// The pure part of a launch (no driver): how an answer's launch contract maps onto
// cuLaunchKernel's argument list, and the checks every Kernel::Launch makes on the caller's
// pointers. Tested on the CPU (tests/client/launch_plan_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cutune/client.h"
#include "cutune/v1/cutune.pb.h"

namespace cutune::client {

inline constexpr size_t kMaxLaunchPointers = 8;
inline constexpr size_t kMaxLaunchDims = 8;

struct LaunchPlan {
  struct Slot {
    bool pointer = false;
    int index = 0;  // into the caller's pointers, or into dims
  };
  std::vector<Slot> slots;        // one per contract argument, in order
  std::vector<int32_t> dims;      // the dimension arguments' values
  std::vector<bool> output;       // per pointer
  std::vector<int64_t> bytes;     // per pointer: the size of its extent
  std::vector<std::string> names; // per pointer
  std::string element_type;       // of every pointer ("f32")
  uint32_t alignment = 16;        // bytes every pointer must be aligned to
  std::string family;
};

// The plan of an answer (its problem and launch contract). INTERNAL when the contract is missing
// or names a dimension the family lacks; INVALID_ARGUMENT when a dimension exceeds an int.
absl::StatusOr<LaunchPlan> PlanLaunch(const ::cutune::v1::GetBestConfigResponse& answer);

// INVALID_ARGUMENT saying what is wrong with the caller's pointers: their count, a null, an
// element type other than the plan's, a const output, a misaligned address. Fills `values`
// (kMaxLaunchPointers of them) with the addresses.
absl::Status CheckLaunch(const LaunchPlan& plan, const void* const* pointers,
                         const Kernel::PointerInfo* info, size_t count, uint64_t* values);

}  // namespace cutune::client
