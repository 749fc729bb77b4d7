#include "server/observe/events.h"

namespace cutune::observe {
namespace {

class Nothing final : public Observer {
 public:
  void DaemonStarted(const DaemonStart&) override {}
  void DaemonStopping(std::string_view) override {}
  void DaemonStopped() override {}
  void JobQueued(const JobInfo&) override {}
  void JobStarted(const JobInfo&, int64_t) override {}
  void JobFinished(const JobEnd&) override {}
  void CandidateFinished(const CandidateEnd&) override {}
  void WorkerRestarted(const WorkerRestart&) override {}
  void DeviceQuarantined(const DeviceQuarantine&) override {}
  void TableImported(const TableImport&) override {}
  void TableExported(const TableExport&) override {}
  void AuthRefused(const AuthRefusal&) override {}
  void RpcFinished(const RpcEnd&) override {}
  void LookupAnswered(const LookupEnd&) override {}
  void ModelChoiceChanged(const ModelChoice&) override {}
};

}  // namespace

Observer& NoObserver() {
  static Nothing nothing;
  return nothing;
}

}  // namespace cutune::observe
