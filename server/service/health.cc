#include "server/service/health.h"

#include <optional>

namespace cutune::service {

// One Watch stream. gRPC allows one write in flight per stream, so a change that arrives while a
// write is outstanding is kept (only the latest counts) and sent when the write completes.
class HealthService::Watcher final : public grpc::ServerWriteReactor<hpb::HealthCheckResponse> {
 public:
  Watcher(HealthService& service, std::string name) : service_(service), name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // Sends `status` (or finishes after sending it, when `last`). Called with service_.mu_ held.
  void Tell(Status status, bool last) {
    std::lock_guard lock(mu_);
    if (finished_) return;
    pending_ = status;
    last_ = last_ || last;
    if (!writing_) SendLocked();
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    writing_ = false;
    if (!ok) return FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "stream broken"));
    if (cancelled_) return FinishLocked(grpc::Status::CANCELLED);
    if (pending_) SendLocked();
  }

  void OnCancel() override {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (!writing_) FinishLocked(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    service_.Forget(this);
    delete this;
  }

 private:
  void SendLocked() {
    if (finished_ || !pending_) return;
    response_.set_status(*pending_);
    if (response_.status() == sent_ && !last_) {  // nothing new to say
      pending_.reset();
      return;
    }
    sent_ = response_.status();
    pending_.reset();
    writing_ = true;
    if (last_) {
      finished_ = true;
      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&response_);
    }
  }

  void FinishLocked(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  HealthService& service_;
  const std::string name_;
  std::mutex mu_;
  hpb::HealthCheckResponse response_;  // must outlive the write
  std::optional<Status> pending_;
  std::optional<Status> sent_;
  bool last_ = false;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
};

HealthService::HealthService() { serving_[""] = true; }

HealthService::~HealthService() = default;

HealthService::Status HealthService::StatusLocked(const std::string& service) const {
  auto it = serving_.find(service);
  if (it == serving_.end()) return hpb::HealthCheckResponse::SERVICE_UNKNOWN;
  return it->second && !shut_down_ ? hpb::HealthCheckResponse::SERVING
                                   : hpb::HealthCheckResponse::NOT_SERVING;
}

void HealthService::SetServingStatus(const std::string& service, bool serving) {
  std::lock_guard lock(mu_);
  serving_[service] = serving;
  for (Watcher* w : watchers_) {
    if (w->name() == service) w->Tell(StatusLocked(service), shut_down_);
  }
}

void HealthService::Shutdown() {
  std::lock_guard lock(mu_);
  if (shut_down_) return;
  shut_down_ = true;
  for (Watcher* w : watchers_) w->Tell(StatusLocked(w->name()), /*last=*/true);
}

int HealthService::watchers() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(watchers_.size());
}

void HealthService::Forget(Watcher* watcher) {
  std::lock_guard lock(mu_);
  watchers_.erase(watcher);
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const hpb::HealthCheckRequest* request,
                                               hpb::HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Status status;
  {
    std::lock_guard lock(mu_);
    status = StatusLocked(request->service());
  }
  if (status == hpb::HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service '" + request->service().substr(0, 200) + "'"));
  } else {
    response->set_status(status);
    reactor->Finish(grpc::Status::OK);
  }
  return reactor;
}

grpc::ServerWriteReactor<hpb::HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext*, const hpb::HealthCheckRequest* request) {
  auto* watcher = new Watcher(*this, request->service());
  std::lock_guard lock(mu_);
  watchers_.insert(watcher);
  watcher->Tell(StatusLocked(request->service()), shut_down_);
  return watcher;
}

}  // namespace cutune::service
