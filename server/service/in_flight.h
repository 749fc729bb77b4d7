// Counts the RPCs in flight (every service: a server interceptor lives as long as its call). A
// stopping cutuned waits for this count to reach zero, not for gRPC's own drain, which also waits
// for clients to close their idle connections and so can hold a shutdown for seconds.
#pragma once

#include <atomic>
#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace cutune::service {

class InFlightCalls {
 public:
  InFlightCalls() : count_(std::make_shared<std::atomic<int>>(0)) {}

  int count() const { return count_->load(); }

  // For ServerBuilder::experimental().SetInterceptorCreators; may be called more than once.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Factory() const {
    return std::make_unique<CounterFactory>(count_);
  }

 private:
  class Counter final : public grpc::experimental::Interceptor {
   public:
    explicit Counter(std::shared_ptr<std::atomic<int>> count) : count_(std::move(count)) {
      count_->fetch_add(1);
    }
    ~Counter() override { count_->fetch_sub(1); }
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
      methods->Proceed();
    }

   private:
    std::shared_ptr<std::atomic<int>> count_;
  };

  class CounterFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
   public:
    explicit CounterFactory(std::shared_ptr<std::atomic<int>> count) : count_(std::move(count)) {}
    grpc::experimental::Interceptor* CreateServerInterceptor(
        grpc::experimental::ServerRpcInfo*) override {
      return new Counter(count_);
    }

   private:
    std::shared_ptr<std::atomic<int>> count_;
  };

  std::shared_ptr<std::atomic<int>> count_;
};

}  // namespace cutune::service
