// grpc.health.v1.Health, served by cutuned itself instead of gRPC's default health service: Watch
// streams run on the callback API (an open stream holds no server thread), and Shutdown() ends
// every stream at once after telling it NOT_SERVING, so load balancers' watches never hold a
// stopping daemon until the end of its grace period.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace cutune::service {

namespace hpb = ::grpc::health::v1;

class HealthService final : public hpb::Health::CallbackService {
 public:
  // The overall service "" is SERVING from the start.
  HealthService();
  ~HealthService() override;

  // Creates the service name if new; tells every watcher of it.
  void SetServingStatus(const std::string& service, bool serving);
  // Every service NOT_SERVING, told to every watcher, then every Watch stream finished (OK).
  // Afterwards Check answers NOT_SERVING and a new Watch gets NOT_SERVING and ends. Idempotent.
  void Shutdown();

  // Open Watch streams (for tests and metrics).
  int watchers() const;

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const hpb::HealthCheckRequest* request,
                                  hpb::HealthCheckResponse* response) override;
  grpc::ServerWriteReactor<hpb::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context, const hpb::HealthCheckRequest* request) override;

 private:
  class Watcher;
  using Status = hpb::HealthCheckResponse::ServingStatus;
  Status StatusLocked(const std::string& service) const;  // SERVICE_UNKNOWN when not listed
  void Forget(Watcher* watcher);

  mutable std::mutex mu_;
  std::map<std::string, bool> serving_;
  std::set<Watcher*> watchers_;
  bool shut_down_ = false;
};

}  // namespace cutune::service
