// The server interceptor every RPC passes (every service: an interceptor lives as long as its
// call). It counts the RPCs in flight: a stopping cutuned waits for this count to reach zero, not
// for gRPC's own drain, which also waits for clients to close their idle connections and so can
// hold a shutdown for seconds. And it tells the observer how each call ended (method, status
// code, time), the one place that sees every call of every service.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/server_context.h"
#include "grpcpp/support/server_interceptor.h"
#include "server/observe/events.h"

namespace cutune::service {

class InFlightCalls {
 public:
  // `observer` (nullptr: nobody) must outlive the server.
  explicit InFlightCalls(observe::Observer* observer = nullptr)
      : state_(std::make_shared<State>(observer ? *observer : observe::NoObserver())) {}

  int count() const { return state_->count.load(); }

  // For ServerBuilder::experimental().SetInterceptorCreators; may be called more than once.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Factory() const {
    return std::make_unique<CounterFactory>(state_);
  }

 private:
  struct State {
    explicit State(observe::Observer& o) : observer(o) {}
    std::atomic<int> count{0};
    observe::Observer& observer;
  };

  class Counter final : public grpc::experimental::Interceptor {
   public:
    Counter(std::shared_ptr<State> state, grpc::experimental::ServerRpcInfo* info)
        : state_(std::move(state)),
          method_(info->method()),
          streaming_(info->type() == grpc::experimental::ServerRpcInfo::Type::SERVER_STREAMING ||
                     info->type() == grpc::experimental::ServerRpcInfo::Type::BIDI_STREAMING),
          context_(info->server_context()),
          began_(std::chrono::steady_clock::now()) {
      state_->count.fetch_add(1);
    }
    ~Counter() override {
      // No status was sent (the call was cancelled before it ended): still one call. The
      // context is being destroyed here, so its peer is not asked for.
      if (!reported_) Report(grpc::StatusCode::CANCELLED, "", [] { return std::string(); });
      state_->count.fetch_sub(1);
    }
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
      if (methods->QueryInterceptionHookPoint(
              grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
        const grpc::Status status = methods->GetSendStatus();
        Report(status.error_code(), status.error_message(), [this] { return context_->peer(); });
      }
      methods->Proceed();
    }

   private:
    void Report(grpc::StatusCode code, std::string_view message,
                absl::FunctionRef<std::string()> peer) {
      reported_ = true;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
      state_->observer.RpcFinished(
          {method_ ? method_ : "", streaming_, static_cast<int>(code), message, seconds, peer});
    }

    std::shared_ptr<State> state_;
    const char* method_;
    bool streaming_;
    grpc::ServerContextBase* context_;
    std::chrono::steady_clock::time_point began_;
    bool reported_ = false;
  };

  class CounterFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
   public:
    explicit CounterFactory(std::shared_ptr<State> state) : state_(std::move(state)) {}
    grpc::experimental::Interceptor* CreateServerInterceptor(
        grpc::experimental::ServerRpcInfo* info) override {
      return new Counter(state_, info);
    }

   private:
    std::shared_ptr<State> state_;
  };

  std::shared_ptr<State> state_;
};

}  // namespace cutune::service
