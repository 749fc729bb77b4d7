#include "server/service/metrics_gauges.h"

#include <filesystem>

#include "server/store/ladder.h"

namespace cutune::service {

using observe::prometheus::Family;
using observe::prometheus::Type;

int64_t StoreBytes(const std::string& db_path) {
  int64_t bytes = 0;
  for (const std::string& path : {db_path, db_path + "-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

void AddServiceGauges(observe::Metrics& metrics, const JobManager& jobs, std::string db_path,
                      const InFlightCalls& in_flight) {
  for (store::LookupRung rung :
       {store::LookupRung::kExact, store::LookupRung::kPredicted, store::LookupRung::kNearestShape,
        store::LookupRung::kSameArchitecture, store::LookupRung::kFamilyDefault}) {
    metrics.DeclareLookupRung(store::LookupRungName(rung));
  }
  metrics.AddCollector([&jobs, db_path = std::move(db_path), &in_flight](std::vector<Family>& out) {
    Family by_state{
        "cutune_jobs", "Tuning jobs this daemon has seen, by current state", Type::kGauge, {}};
    for (const auto& [state, count] : jobs.CountByState()) {
      by_state.samples.push_back(
          {"", {{"state", std::string(JobStateName(state))}}, double(count)});
    }
    out.push_back(std::move(by_state));

    Family gpu_state{"cutune_gpu_state",
                     "Each GPU's state: 1 for the state it is in (ready, busy, quarantined), 0 "
                     "for the others",
                     Type::kGauge,
                     {}};
    Family queued{"cutune_gpu_queued_jobs", "Jobs waiting in each GPU's queue", Type::kGauge, {}};
    for (const GpuInfo& gpu : jobs.Gpus()) {
      const std::string ordinal = std::to_string(gpu.ordinal);
      const std::string model = gpu.device ? gpu.device->name() : "";
      const std::string_view now = gpu.quarantined ? "quarantined" : gpu.busy ? "busy" : "ready";
      for (std::string_view state : {"ready", "busy", "quarantined"}) {
        gpu_state.samples.push_back(
            {"",
             {{"gpu", ordinal}, {"model", model}, {"state", std::string(state)}},
             state == now ? 1.0 : 0.0});
      }
      queued.samples.push_back({"", {{"gpu", ordinal}}, double(gpu.queued)});
    }
    out.push_back(std::move(gpu_state));
    out.push_back(std::move(queued));

    out.push_back({"cutune_store_size_bytes",
                   "The SQLite store on disk: the database file and its write-ahead log",
                   Type::kGauge,
                   {{"", {}, double(StoreBytes(db_path))}}});
    out.push_back({"cutune_rpcs_in_flight",
                   "RPCs being served now",
                   Type::kGauge,
                   {{"", {}, double(in_flight.count())}}});
  });
}

}  // namespace cutune::service
