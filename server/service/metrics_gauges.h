// The service's state as Prometheus gauges, read at scrape time rather than counted: jobs by
// state, each GPU's state and queue, the store's size on disk, the RPCs in flight. Also names
// every lookup rung, so each shows from the first scrape.
#pragma once

#include <string>

#include "server/observe/metrics.h"
#include "server/service/in_flight.h"
#include "server/service/job_manager.h"

namespace cutune::service {

// `jobs` and `in_flight` must outlive every scrape of `metrics`.
void AddServiceGauges(observe::Metrics& metrics, const JobManager& jobs, std::string db_path,
                      const InFlightCalls& in_flight);

// The database file and its write-ahead log, in bytes (what the store takes on disk).
int64_t StoreBytes(const std::string& db_path);

}  // namespace cutune::service
