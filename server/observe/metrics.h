// The daemon's Prometheus metrics: the events of events.h counted (lookups by rung and their
// latency, RPCs by method and code, candidates by outcome, jobs by final state, worker restarts,
// table imports and exports, auth refusals), plus gauges that collectors read at scrape time
// (jobs by state, GPU state, store size: server/service/metrics_gauges.h) and a build-info gauge.
// Render() is what GET /metrics answers.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "server/observe/events.h"
#include "server/observe/prometheus.h"

namespace cutune::observe {

class Metrics final : public Observer {
 public:
  explicit Metrics(std::string version);

  // Adds gauges to every scrape; called at scrape time from the HTTP server's threads.
  using Collector = std::function<void(std::vector<prometheus::Family>&)>;
  void AddCollector(Collector collector);
  // A lookup rung shown at 0 before its first lookup.
  void DeclareLookupRung(std::string_view rung) { lookups_.Declare({rung}); }

  std::vector<prometheus::Family> Collect() const;
  std::string Render() const { return prometheus::Render(Collect()); }

  void DaemonStarted(const DaemonStart& event) override;
  void DaemonStopping(std::string_view signal) override;
  void DaemonStopped() override;
  void JobQueued(const JobInfo& job) override;
  void JobStarted(const JobInfo& job, int64_t resumed_rows) override;
  void JobFinished(const JobEnd& event) override;
  void CandidateFinished(const CandidateEnd& event) override;
  void WorkerRestarted(const WorkerRestart& event) override;
  void DeviceQuarantined(const DeviceQuarantine& event) override;
  void TableImported(const TableImport& event) override;
  void TableExported(const TableExport& event) override;
  void AuthRefused(const AuthRefusal& event) override;
  void RpcFinished(const RpcEnd& event) override;
  void LookupAnswered(const LookupEnd& event) override;
  void ModelChoiceChanged(const ModelChoice&) override {}  // the log says it; nothing to count

 private:
  const std::string version_;
  std::atomic<double> start_time_{0};
  prometheus::CounterFamily lookups_;
  prometheus::CounterFamily stale_answers_;
  prometheus::Histogram lookup_seconds_;
  prometheus::CounterFamily rpcs_;
  prometheus::CounterFamily candidates_;
  prometheus::CounterFamily jobs_finished_;
  prometheus::CounterFamily worker_restarts_;
  prometheus::CounterFamily table_imports_;
  prometheus::CounterFamily table_exports_;
  prometheus::CounterFamily auth_refusals_;
  mutable std::mutex collectors_mu_;
  std::vector<Collector> collectors_;
};

// "/cutune.v1.Tuner/GetBestConfig" -> {"cutune.v1.Tuner", "GetBestConfig"}.
std::pair<std::string_view, std::string_view> SplitMethod(std::string_view method);

}  // namespace cutune::observe
