// Test helper for crash_test: runs (or resumes) one sweep of synthetic candidates against a
// store, as the daemon would, so the test can SIGKILL it at arbitrary points.
// Usage: store_writer DB_PATH CANDIDATES MICROSECONDS_PER_CANDIDATE
// Exit 0: sweep finished (now or earlier); 2: a store call failed; 64: bad usage.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/store/store.h"
#include "tests/store/writer_rows.h"

int main(int argc, char** argv) {
  using namespace cutune;
  using namespace cutune::store;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DB_PATH CANDIDATES US_PER_CANDIDATE\n", argv[0]);
    return 64;
  }
  const int candidates = std::atoi(argv[2]);
  const int work_us = std::atoi(argv[3]);
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "store_writer: %s\n", s.ToString().c_str());
    return 2;
  };

  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(argv[1]);
  if (!store.ok()) return fail(store.status());
  absl::StatusOr<std::vector<SweepInfo>> sweeps = (*store)->ListSweeps();
  if (!sweeps.ok()) return fail(sweeps.status());
  for (const SweepInfo& s : *sweeps) {
    if (s.status == SweepStatus::kSucceeded) {
      std::printf("already done\n");
      return 0;
    }
  }
  absl::StatusOr<StartedSweep> started = (*store)->StartOrResumeSweep(
      writer_rows::Key(), writer_rows::Prov(), "{\"strategy\":\"brute_force\"}");
  if (!started.ok()) return fail(started.status());
  absl::StatusOr<std::set<std::string>> done = (*store)->FinishedCandidates(started->sweep_id);
  if (!done.ok()) return fail(done.status());
  int measured = 0;
  for (int i = 0; i < candidates; ++i) {
    Measurement m = writer_rows::Candidate(i);
    if (done->contains(FormatParams(m.params))) continue;
    usleep(static_cast<useconds_t>(work_us));  // the GPU work a real sweep would do here
    if (absl::Status s = (*store)->RecordMeasurement(started->sweep_id, m); !s.ok()) return fail(s);
    ++measured;
  }
  absl::StatusOr<FinishResult> finished =
      (*store)->FinishSweep(started->sweep_id, SweepStatus::kSucceeded, {"device copy", 5.0});
  if (!finished.ok()) return fail(finished.status());
  std::printf("measured %d, skipped %zu\n", measured, done->size());
  return 0;
}
