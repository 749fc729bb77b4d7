// The two observers of the daemon's events, fed the same events: what the log says, and what the
// metrics count.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/observe/events.h"
#include "server/observe/log_observer.h"
#include "server/observe/metrics.h"
#include "tests/common/temp_dir.h"

namespace cutune::observe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A logger writing to a file, and the lines it wrote.
class CapturedLog {
 public:
  explicit CapturedLog(log::Level level = log::Level::kInfo,
                       log::Format format = log::Format::kText)
      : path_(dir_.File("log")),
        fd_(open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600)),
        logger_(format, level, fd_) {}
  ~CapturedLog() { close(fd_); }
  log::Logger& logger() { return logger_; }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }

 private:
  cutune::testing::TempDir dir_;
  std::string path_;
  int fd_;
  log::Logger logger_;
};

JobInfo Job() { return {"job-000001-3f2a", "matmul", {4096, 4096, 4096}, DType::kF32, "quick", 0}; }

TEST(LogObserverTest, JobLifecycleIsOneLineEach) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  observer.JobQueued(Job());
  observer.JobStarted(Job(), 0);
  observer.JobFinished({Job(), "succeeded", 12, 10, 2, 11.5, "tile=32", 3.25, ""});
  const std::string text = captured.text();
  EXPECT_THAT(text, HasSubstr(" INFO job.queued job=job-000001-3f2a family=matmul "
                              "shape=4096x4096x4096 dtype=f32 device=0 strategy=quick\n"));
  EXPECT_THAT(text, HasSubstr(" INFO job.started job=job-000001-3f2a "));
  EXPECT_THAT(text, HasSubstr(" INFO job.finished job=job-000001-3f2a family=matmul "
                              "shape=4096x4096x4096 dtype=f32 device=0 strategy=quick "
                              "state=succeeded candidates=12 ok=10 rejected=2 best_us=11.5 "
                              "best=\"tile=32\" wall_s=3.25\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(LogObserverTest, FailedJobWarnsWithItsError) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  observer.JobFinished({Job(), "failed", 0, 0, 0, std::nullopt, "", 0.5, "UNAVAILABLE: no GPU"});
  EXPECT_THAT(captured.text(),
              AllOf(HasSubstr(" WARNING job.finished "), HasSubstr("state=failed"),
                    HasSubstr("error=\"UNAVAILABLE: no GPU\""), Not(HasSubstr("best_us"))));
}

TEST(LogObserverTest, FaultsAndTimeoutsAreWarningsOtherCandidatesDebug) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  Measurement fault{{{"tile", 32}}, Outcome::kFault, "the worker process died", {}, {}, 0, 0, 0, 0};
  Measurement timeout{
      {{"tile", 64}}, Outcome::kTimeout, "no result within 100 ms", {}, {}, 0, 0, 0, 0};
  Measurement ok{{{"tile", 16}}, Outcome::kOk, "", {}, {10, 12.5, 12, 0.01}, 0, 0, 0, 0};
  observer.CandidateFinished({"job-1", 0, fault});
  observer.CandidateFinished({"job-1", 0, timeout});
  observer.CandidateFinished({"job-1", 0, ok});
  const std::string text = captured.text();
  EXPECT_THAT(text, HasSubstr(" WARNING candidate.fault job=job-1 device=0 params=\"tile=32\" "
                              "detail=\"the worker process died\"\n"));
  EXPECT_THAT(text, HasSubstr(" WARNING candidate.timeout job=job-1 device=0 params=\"tile=64\" "));
  EXPECT_THAT(text, Not(HasSubstr("candidate.finished")));

  CapturedLog debug(log::Level::kDebug);
  LogObserver verbose(debug.logger());
  verbose.CandidateFinished({"job-1", 0, ok});
  EXPECT_THAT(debug.text(),
              HasSubstr(" DEBUG candidate.finished job=job-1 device=0 params=\"tile=16\" "
                        "outcome=ok median_us=12.5\n"));
}

TEST(LogObserverTest, RpcRuleWarnsOnServerFaultsAndIgnoresFastSuccesses) {
  EXPECT_EQ(RuleFor(0, false, 0.001).level, log::Level::kDebug);
  EXPECT_EQ(RuleFor(0, false, 2.0).event, "rpc.slow");
  EXPECT_EQ(RuleFor(0, true, 60.0).event, "rpc.finished");           // streams are long by design
  EXPECT_EQ(RuleFor(13, false, 0.001).level, log::Level::kWarning);  // INTERNAL
  EXPECT_EQ(RuleFor(5, false, 0.001).level, log::Level::kInfo);      // NOT_FOUND
  EXPECT_EQ(RuleFor(1, true, 0.001).level, log::Level::kDebug);      // CANCELLED
  EXPECT_EQ(RuleFor(4, false, 0.001).level, log::Level::kDebug);     // DEADLINE_EXCEEDED
}

TEST(LogObserverTest, RpcPeerIsOnlyComputedWhenTheLineIsWritten) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  int asked = 0;
  auto peer = [&] {
    ++asked;
    return std::string("ipv4:127.0.0.1:5000");
  };
  observer.RpcFinished({"/cutune.v1.Tuner/GetBestConfig", false, 0, "", 0.0001, peer});
  EXPECT_EQ(asked, 0);
  observer.RpcFinished(
      {"/cutune.v1.Tuner/GetBestConfig", false, 5, "unknown kernel family 'x'", 0.0001, peer});
  EXPECT_EQ(asked, 1);
  EXPECT_THAT(
      captured.text(),
      HasSubstr(" INFO rpc.failed method=cutune.v1.Tuner/GetBestConfig code=NOT_FOUND "
                "seconds=0.0001 peer=ipv4:127.0.0.1:5000 error=\"unknown kernel family 'x'\""));
}

TEST(LogObserverTest, DaemonStartNamesVersionAddressesStoreAndDevicesInJson) {
  CapturedLog captured(log::Level::kInfo, log::Format::kJson);
  LogObserver observer(captured.logger());
  observer.DaemonStarted({"0.1.0",
                          "unix:/run/cutune.sock",
                          "127.0.0.1:9464",
                          "/var/lib/cutune.db",
                          {{0, "NVIDIA H200", false}, {1, "", true}},
                          ""});
  std::string line = captured.text();
  ASSERT_FALSE(line.empty());
  line.pop_back();
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["event"], "daemon.started");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["version"], "0.1.0");
  EXPECT_EQ(j["listen"], "unix:/run/cutune.sock");
  EXPECT_EQ(j["metrics_listen"], "127.0.0.1:9464");
  EXPECT_EQ(j["store"], "/var/lib/cutune.db");
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["devices"], "0:NVIDIA H200,1:not started (quarantined)");
  EXPECT_FALSE(j.contains("no_gpu_reason"));
}

TEST(LogObserverTest, AuthRefusalNamesPeerMethodAndReason) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  observer.AuthRefused({"grpc", "ipv4:10.0.0.7:41000", "cutune.v1.Tuner/ImportTable",
                        "PERMISSION_DENIED", "this token is read-only"});
  EXPECT_THAT(captured.text(),
              HasSubstr(" WARNING auth.refused transport=grpc peer=ipv4:10.0.0.7:41000 "
                        "method=cutune.v1.Tuner/ImportTable code=PERMISSION_DENIED "
                        "reason=\"this token is read-only\"\n"));
}

TEST(LogObserverTest, AModelChoiceNamesTheModelItAnswersFromAndWhy) {
  CapturedLog captured;
  LogObserver observer(captured.logger());
  observer.ModelChoiceChanged(
      {"NVIDIA H100 80GB HBM3", "matmul", "f32", "NVIDIA H200", 12, 0.835, 0.97});
  observer.ModelChoiceChanged({"NVIDIA H100 80GB HBM3", "matmul", "f32", "", 0, 0, 0});
  EXPECT_THAT(captured.text(),
              HasSubstr(" INFO model.gives_way model=\"NVIDIA H100 80GB HBM3\" family=matmul "
                        "dtype=f32 answers_from=\"NVIDIA H200\" shapes=12 own=0.835 other=0.97\n"));
  EXPECT_THAT(captured.text(), HasSubstr(" INFO model.own model=\"NVIDIA H100 80GB HBM3\" "
                                         "family=matmul dtype=f32\n"));
}

TEST(MetricsTest, CountsTheSameEventsTheLogShows) {
  Metrics metrics("0.1.0");
  metrics.DeclareLookupRung("exact");
  metrics.DeclareLookupRung("nearest_shape");
  auto peer = [] { return std::string("unix:"); };
  metrics.LookupAnswered({"exact", false, false, 0.0002});
  metrics.LookupAnswered({"exact", true, false, 0.0004});
  metrics.LookupAnswered({"family_default", false, true, 5.0});  // waited: no latency sample
  metrics.RpcFinished({"/cutune.v1.Tuner/GetBestConfig", false, 0, "", 0.0002, peer});
  metrics.RpcFinished({"/cutune.v1.Tuner/GetBestConfig", false, 5, "", 0.0002, peer});
  Measurement fault{{{"tile", 32}}, Outcome::kFault, "", {}, {}, 0, 0, 0, 0};
  metrics.CandidateFinished({"job-1", 0, fault});
  metrics.WorkerRestarted({0, "fault", ""});
  metrics.JobFinished({Job(), "succeeded", 1, 0, 1, std::nullopt, "", 1, ""});
  metrics.TableImported({"ImportTable", 100, 1, 0, 0, 0, ""});
  metrics.AuthRefused({"http", "1.2.3.4:5", "GET /metrics", "UNAUTHENTICATED", "unknown token"});
  metrics.AddCollector([](std::vector<prometheus::Family>& out) {
    out.push_back({"cutune_store_size_bytes", "bytes", prometheus::Type::kGauge, {{"", {}, 4096}}});
  });
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("cutune_build_info{version=\"0.1.0\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_lookups_total{rung=\"exact\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("cutune_lookups_total{rung=\"nearest_shape\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("cutune_lookups_total{rung=\"family_default\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_stale_answers_total 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_lookup_duration_seconds_count 2\n"));
  EXPECT_THAT(text, HasSubstr("cutune_lookup_duration_seconds_bucket{le=\"0.00025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_rpcs_total{service=\"cutune.v1.Tuner\","
                              "method=\"GetBestConfig\",code=\"OK\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("code=\"NOT_FOUND\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_candidates_total{outcome=\"fault\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_candidates_total{outcome=\"ok\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("cutune_worker_restarts_total{gpu=\"0\",reason=\"fault\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_jobs_finished_total{state=\"succeeded\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cutune_table_imports_total{result=\"ok\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr("cutune_auth_refusals_total{transport=\"http\",code=\"UNAUTHENTICATED\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("# TYPE cutune_store_size_bytes gauge\ncutune_store_size_bytes 4096\n"));
}

TEST(FanoutTest, HandsEveryEventToEachObserver) {
  CapturedLog captured;
  LogObserver log(captured.logger());
  Metrics metrics("0.1.0");
  Fanout both({&log, &metrics});
  both.TableImported({"tables/h200.json", 2048, 3, 1, 0, 0, ""});
  EXPECT_THAT(captured.text(), HasSubstr(" INFO table.imported source=tables/h200.json bytes=2048 "
                                         "winners_added=3 winners_replaced=1 winners_kept=0 "
                                         "rows_added=0\n"));
  EXPECT_THAT(metrics.Render(), HasSubstr("cutune_table_imports_total{result=\"ok\"} 1\n"));
}

TEST(SplitMethodTest, SeparatesServiceAndMethod) {
  EXPECT_EQ(SplitMethod("/cutune.v1.Tuner/GetBestConfig"),
            std::make_pair(std::string_view("cutune.v1.Tuner"), std::string_view("GetBestConfig")));
  EXPECT_EQ(SplitMethod("/grpc.health.v1.Health/Watch").first, "grpc.health.v1.Health");
  EXPECT_EQ(SplitMethod("odd").second, "odd");
}

}  // namespace
}  // namespace cutune::observe
