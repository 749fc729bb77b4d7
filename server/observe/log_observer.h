// The daemon's events as log lines: one line per event, named `area.what` (job.finished,
// candidate.fault, auth.refused, ...); docs/operations.md lists them with their fields. Never
// logs a token or a table's body: events carry neither.
#pragma once

#include "server/core/log.h"
#include "server/observe/events.h"

namespace cutune::observe {

class LogObserver final : public Observer {
 public:
  explicit LogObserver(log::Logger& logger) : log_(logger) {}

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
  void ModelChoiceChanged(const ModelChoice& event) override;

 private:
  log::Logger& log_;
};

// The level an RPC's end is logged at, and under which event: failures the server caused
// (INTERNAL, UNKNOWN, DATA_LOSS) warn, other failures are info, except a client leaving or its
// deadline passing (CANCELLED, DEADLINE_EXCEEDED: normal for streams and WAIT_FOR_TUNING), which
// are debug like every successful call; a unary call slower than kSlowRpcSeconds is info.
struct RpcLogRule {
  log::Level level;
  std::string_view event;  // "rpc.failed", "rpc.slow" or "rpc.finished"
};
RpcLogRule RuleFor(int code, bool streaming, double seconds);

}  // namespace cutune::observe
