// How Nsight Compute profiles are shown (ProfileCandidate's counters): one compact line per
// profiled row under `results` and `report`, and the full account `cutune profile` prints, each
// counter with its unit and what it means here.
#pragma once

#include <string>
#include <vector>

#include "cutune/v1/cutune.pb.h"

namespace cutune::cli {

namespace pb = ::cutune::v1;

// "bank conflicts 0 · DRAM 87.4% · occupancy 71.9% · L2 hit 50.0% · 30 regs · 12.48 us (ncu
// 2025.3.1.0)"; "" for a row without a profile.
std::string ProfileLine(const pb::Profile& profile);

// Under a ranked table: "profiled:" and one line per profiled ok row among `rows` ("tile=32,...:
// <ProfileLine>"), at most `max` rows, fastest first; "" when none is profiled.
std::string ProfiledRows(const std::vector<pb::Measurement>& rows, int max = 5);

// `cutune profile`: every counter, "shared-memory bank conflicts: 0 (the seeds' yardstick for
// padding/swizzle)", then the stored time beside ncu's.
std::string ProfileReport(const pb::ProfileCandidateResponse& response);

}  // namespace cutune::cli
