// What the daemon tells its operators, in one place: every event the job manager, the worker
// supervisor, the service and cutuned itself report goes through this one Observer interface.
// Two implementations observe the same events: LogObserver writes them as log lines
// (log_observer.h) and Metrics counts them for Prometheus (metrics.h); Fanout hands each event to
// both. The methods are pure virtual so that each implementation decides, per event, what it does.
//
// Events are plain data borrowed for the call only (views stay valid until the method returns).
// Observers must be thread-safe: events arrive from RPC threads, job lanes and workers at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "server/core/types.h"

namespace cutune::observe {

// A unary RPC that takes this long is worth a log line (streams are long by design).
inline constexpr double kSlowRpcSeconds = 1.0;

struct GpuSummary {
  int ordinal = 0;
  std::string name{};  // empty: its worker never started
  bool quarantined = false;
};

struct DaemonStart {
  std::string version{};
  std::string listen{};          // the gRPC address as bound (a port 0 resolved)
  std::string metrics_listen{};  // the metrics address as bound; empty when off
  std::string store{};           // the SQLite database's path
  std::vector<GpuSummary> gpus{};
  std::string no_gpu_reason{};  // why this host serves tables only; empty when it can tune
};

struct JobInfo {
  std::string id{};
  std::string family{};
  Shape shape{};
  DType dtype = DType::kF32;
  std::string strategy{};
  int device = 0;
  std::vector<int> shards{};  // the other GPUs of a sharded sweep
};

struct JobEnd {
  JobInfo job;
  std::string_view state{};  // "succeeded", "failed", "cancelled" (JobStateName)
  int64_t candidates = 0;    // rows of the sweep, resumed ones included
  int64_t ok = 0;            // verified and timed
  int64_t rejected = 0;      // every other outcome
  std::optional<double> best_us{};
  std::string best_params{};
  double wall_seconds = 0;
  std::string error{};  // why it failed or stopped; empty otherwise
};

// One candidate measured by a job (not the rows a resumed sweep had stored already).
struct CandidateEnd {
  std::string_view job{};
  int device = 0;
  const Measurement& row;
};

struct WorkerRestart {
  int device = 0;
  std::string_view reason{};  // "fault", "timeout" (a candidate's) or "poisoned" (the worker's own
                              // sticky error outside a candidate)
  std::string_view detail{};
};

struct DeviceQuarantine {
  int device = 0;
  int failures = 0;  // consecutive failed starts
  std::string_view error{};
};

struct TableImport {
  std::string_view source{};  // a file imported at start, or "ImportTable" (the RPC)
  int64_t bytes = 0;
  int64_t winners_added = 0;
  int64_t winners_replaced = 0;
  int64_t winners_kept = 0;
  int64_t rows_added = 0;
  std::string_view error{};  // empty on success
};

struct TableExport {
  std::string_view model{};  // empty: every model
  bool include_rows = false;
  int64_t bytes = 0;
  std::string_view error{};  // empty on success
};

struct AuthRefusal {
  std::string_view transport{};  // "grpc" or "http"
  std::string_view peer{};
  std::string_view method{};  // "cutune.v1.Tuner/ImportTable", "GET /metrics"
  std::string_view code{};    // "UNAUTHENTICATED" or "PERMISSION_DENIED"
  std::string_view reason{};  // the refusal's message; never the token
};

struct RpcEnd {
  std::string_view method{};  // as gRPC names it: "/cutune.v1.Tuner/GetBestConfig"
  bool streaming = false;     // a server stream (WatchJob, Health/Watch)
  int code = 0;               // grpc::StatusCode (numerically absl::StatusCode)
  std::string_view message{};
  double seconds = 0;
  absl::FunctionRef<std::string()> peer;  // computed only by an observer that needs it
};

struct LookupEnd {
  std::string_view rung{};  // LookupRungName: "exact", "predicted", ...
  bool stale = false;
  bool waited = false;  // ON_MISS_WAIT_FOR_TUNING waited for a job: not a lookup's latency
  double seconds = 0;
};

// The store's choice of prediction model for a device model and family changed: it now answers
// untuned shapes from another model of its architecture (`answers_from`), whose picks measured
// `other` of their winners' speed on `shapes` of its own tuned shapes against its own model's
// `own` held out (geometric means), or, with `answers_from` empty, from its own model again.
struct ModelChoice {
  std::string_view model{};
  std::string_view family{};
  std::string_view dtype{};
  std::string_view answers_from{};
  int64_t shapes = 0;
  double own = 0;
  double other = 0;
};

class Observer {
 public:
  virtual ~Observer() = default;

  virtual void DaemonStarted(const DaemonStart& event) = 0;
  virtual void DaemonStopping(std::string_view signal) = 0;
  virtual void DaemonStopped() = 0;
  virtual void JobQueued(const JobInfo& job) = 0;
  virtual void JobStarted(const JobInfo& job, int64_t resumed_rows) = 0;
  virtual void JobFinished(const JobEnd& event) = 0;
  virtual void CandidateFinished(const CandidateEnd& event) = 0;
  virtual void WorkerRestarted(const WorkerRestart& event) = 0;
  virtual void DeviceQuarantined(const DeviceQuarantine& event) = 0;
  virtual void TableImported(const TableImport& event) = 0;
  virtual void TableExported(const TableExport& event) = 0;
  virtual void AuthRefused(const AuthRefusal& event) = 0;
  virtual void RpcFinished(const RpcEnd& event) = 0;
  virtual void LookupAnswered(const LookupEnd& event) = 0;
  virtual void ModelChoiceChanged(const ModelChoice& event) = 0;
};

// Observes nothing: the default where no observer is given (tests, tools).
Observer& NoObserver();

// Hands every event to each of its observers in turn.
class Fanout final : public Observer {
 public:
  explicit Fanout(std::vector<Observer*> observers) : observers_(std::move(observers)) {}

  void DaemonStarted(const DaemonStart& e) override { Each(&Observer::DaemonStarted, e); }
  void DaemonStopping(std::string_view s) override { Each(&Observer::DaemonStopping, s); }
  void DaemonStopped() override {
    for (Observer* o : observers_) o->DaemonStopped();
  }
  void JobQueued(const JobInfo& e) override { Each(&Observer::JobQueued, e); }
  void JobStarted(const JobInfo& e, int64_t resumed) override {
    for (Observer* o : observers_) o->JobStarted(e, resumed);
  }
  void JobFinished(const JobEnd& e) override { Each(&Observer::JobFinished, e); }
  void CandidateFinished(const CandidateEnd& e) override { Each(&Observer::CandidateFinished, e); }
  void WorkerRestarted(const WorkerRestart& e) override { Each(&Observer::WorkerRestarted, e); }
  void DeviceQuarantined(const DeviceQuarantine& e) override {
    Each(&Observer::DeviceQuarantined, e);
  }
  void TableImported(const TableImport& e) override { Each(&Observer::TableImported, e); }
  void TableExported(const TableExport& e) override { Each(&Observer::TableExported, e); }
  void AuthRefused(const AuthRefusal& e) override { Each(&Observer::AuthRefused, e); }
  void RpcFinished(const RpcEnd& e) override { Each(&Observer::RpcFinished, e); }
  void LookupAnswered(const LookupEnd& e) override { Each(&Observer::LookupAnswered, e); }
  void ModelChoiceChanged(const ModelChoice& e) override {
    Each(&Observer::ModelChoiceChanged, e);
  }

 private:
  template <typename Event>
  void Each(void (Observer::*method)(Event), std::type_identity_t<Event> event) {
    for (Observer* o : observers_) (o->*method)(event);
  }
  std::vector<Observer*> observers_;
};

}  // namespace cutune::observe
