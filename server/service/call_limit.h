// A bound on how many calls of one kind run at once (open progress streams, table exports and
// imports): past the bound a call is turned away at once with RESOURCE_EXHAUSTED rather than
// queued, so no client, whatever its role, can pin every server thread or all memory.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace cutune::service {

class CallLimit {
 public:
  // Held while a call runs; gives its place back when destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : used_(std::exchange(other.used_, nullptr)) {}
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot() {
      if (used_ != nullptr) used_->fetch_sub(1);
    }

   private:
    friend class CallLimit;
    explicit Slot(std::atomic<int>* used) : used_(used) {}
    std::atomic<int>* used_;
  };

  // `what` names the calls in the refusal ("open WatchJob/WAIT_FOR_TUNING calls").
  CallLimit(int limit, std::string what) : limit_(limit), what_(std::move(what)) {}

  absl::StatusOr<Slot> Enter() {
    if (used_.fetch_add(1) >= limit_) {
      used_.fetch_sub(1);
      return absl::ResourceExhaustedError(absl::StrCat(
          "too many ", what_, " at once (the limit is ", limit_, "); try again later"));
    }
    return Slot(&used_);
  }

  int in_use() const { return used_.load(); }
  int limit() const { return limit_; }

 private:
  const int limit_;
  const std::string what_;
  std::atomic<int> used_{0};
};

}  // namespace cutune::service
