// Every cutune.v1.Tuner RPC over a real loopback channel: listings, lookups, tables, and every
// error code the API promises, each checked with its message.
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"
#include "server/core/version.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

std::string ReadAsset(const std::string& name) {
  std::ifstream in(AssetsDir() / name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

grpc::Status Call(pb::Tuner::Stub& stub, const pb::GetBestConfigRequest& request,
                  pb::GetBestConfigResponse* response = nullptr, const std::string& token = "") {
  pb::GetBestConfigResponse ignored;
  return stub.GetBestConfig(Context(std::chrono::seconds(30), token).get(), request,
                            response ? response : &ignored);
}

grpc::Status Call(pb::Tuner::Stub& stub, const pb::StartTuningRequest& request,
                  pb::StartTuningResponse* response = nullptr, const std::string& token = "") {
  pb::StartTuningResponse ignored;
  return stub.StartTuning(Context(std::chrono::seconds(30), token).get(), request,
                          response ? response : &ignored);
}

// The launch fit the prediction model corrects by (tile coverage x the last wave's busy share)
// describes compute-bound kernels; a memory-bound family's members keep efficiency 1.
TEST(StoreRulesTest, TheLaunchFitIsForComputeBoundFamiliesOnly) {
  const store::StoreOptions options = StoreRules();
  ASSERT_TRUE(options.fit);
  const store::DeviceModel h200{"NVIDIA H200", 9, 0, 132, 0};
  EXPECT_EQ(options.fit("transpose", h200), nullptr) << "memory-bound: efficiency 1, no terms";
  EXPECT_EQ(options.fit("no-such-family", h200), nullptr);
  const predict::FitFn matmul_fit = options.fit("matmul", h200);
  ASSERT_TRUE(matmul_fit);
  const Params matmul = kernels::MatmulFamily().baseline();
  const predict::LaunchFit partial = matmul_fit(matmul, {1000, 1000, 77}, ResourceUsage{});
  EXPECT_GT(partial.efficiency, 0.0);
  EXPECT_LT(partial.efficiency, 1.0);
  EXPECT_FALSE(partial.cost_terms.empty()) << "matmul has a cost model";
  // An unknown architecture still fits, with a block counted as alone on its SM.
  const predict::FitFn unknown = options.fit("matmul", store::DeviceModel{"Fake GPU", 0, 0, 0, 0});
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown(matmul, {1000, 1000, 77}, ResourceUsage{}).cost_terms.empty());
}

TEST(RpcTest, ListDevicesDescribesTheWorkersGpu) {
  TestServer server;
  pb::ListDevicesResponse response;
  ASSERT_TRUE(server.stub().ListDevices(Context().get(), {}, &response).ok());
  ASSERT_THAT(response.devices(), SizeIs(1));
  const pb::Device& d = response.devices(0);
  EXPECT_EQ(d.ordinal(), 0);
  EXPECT_EQ(d.name(), "Fake GPU");
  EXPECT_EQ(d.uuid(), "GPU-fake-0");
  EXPECT_EQ(d.compute_capability(), "9.0");
  EXPECT_EQ(d.total_memory_bytes(), int64_t{80} << 30);
  EXPECT_EQ(d.state(), pb::Device::STATE_READY);
  EXPECT_EQ(d.queued_jobs(), 0);
  EXPECT_EQ(response.nvrtc_version(), compiler::NvrtcVersion());
  EXPECT_EQ(response.no_gpu_reason(), "");
}

TEST(RpcTest, GetServerInfoSaysVersionApiLevelRoleAndGpus) {
  TestServer server;
  pb::GetServerInfoResponse info;
  ASSERT_TRUE(server.stub().GetServerInfo(Context().get(), {}, &info).ok());
  EXPECT_EQ(info.version(), Version());
  EXPECT_EQ(info.api_level(), kApiLevel);
  EXPECT_GE(info.api_level(), 1);
  EXPECT_EQ(info.role(), pb::GetServerInfoResponse::ROLE_ADMIN);  // no tokens: anyone may tune
  EXPECT_FALSE(info.tokens_required());
  EXPECT_EQ(info.gpu_count(), 1);
}

TEST(RpcTest, ListFamiliesGivesParametersDefaultsAndSpaceSizes) {
  TestServer server;
  pb::ListFamiliesResponse response;
  ASSERT_TRUE(server.stub().ListFamilies(Context().get(), {}, &response).ok());
  ASSERT_THAT(response.families(), SizeIs(2));
  const pb::Family& transpose = response.families(0);
  EXPECT_EQ(transpose.name(), "transpose");
  EXPECT_THAT(transpose.dims(), ElementsAre("rows", "cols"));
  EXPECT_EQ(transpose.space_size(), kernels::TransposeFamily().default_space().CartesianSize());
  EXPECT_EQ(transpose.source_hash(), kernels::TransposeFamily().source_hash());
  EXPECT_EQ(transpose.default_params().at("tile"), 32);
  std::vector<std::string> names;
  for (const pb::Parameter& p : transpose.parameters()) names.push_back(p.name());
  EXPECT_THAT(names, Contains("tile"));
  EXPECT_THAT(transpose.constraints(), Contains(HasSubstr("pad and swizzle")));
  EXPECT_EQ(response.families(1).name(), "matmul");
  EXPECT_THAT(response.families(1).dims(), SizeIs(3));
}

TEST(RpcTest, LookupWithNothingTunedIsTheFamilyDefaultReadyToLaunch) {
  TestServer server;
  auto request = Lookup("transpose", {1000, 3000});
  request.set_include_source(true);
  request.set_include_cubin(true);
  pb::GetBestConfigResponse response;
  ASSERT_TRUE(Call(server.stub(), request, &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT);
  EXPECT_EQ(response.job_id(), "");
  for (const auto& [name, value] : kernels::TransposeFamily().baseline()) {
    EXPECT_EQ(response.params().at(name), value) << name;
  }
  EXPECT_THAT(response.compile_options(), Contains("--gpu-architecture=sm_90"));
  EXPECT_THAT(response.compile_options(), Contains("-DCT_TILE=32"));
  // One block per 32x32 tile: ceil(1000 / 32) * ceil(3000 / 32); tile / vec x rows threads.
  EXPECT_THAT(response.geometry().grid(), ElementsAre(32 * 94, 1, 1));
  EXPECT_THAT(response.geometry().block(), ElementsAre(32, 32, 1));
  EXPECT_EQ(response.source_hash(), kernels::TransposeFamily().source_hash());
  EXPECT_EQ(response.source(), std::string(kernels::TransposeFamily().source()));
  EXPECT_EQ(response.cubin().substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(response.time_us(), 0);
}

TEST(RpcTest, InvalidArgumentForBadShapeDtypeAndParameters) {
  TestServer server;
  pb::Tuner::Stub& stub = server.stub();
  EXPECT_THAT(Call(stub, Lookup("", {64, 64})),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "problem.family is required"));
  EXPECT_THAT(Call(stub, Lookup("transpose", {64, 64, 64})),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "expected 2 dimensions (rows, cols), got 3"));
  EXPECT_THAT(Call(stub, Lookup("matmul", {64, 0, 64})),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "dimension N must be positive, got 0"));
  EXPECT_THAT(Call(stub, Lookup("transpose", {int64_t{1} << 31, 2})),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "exceeds the limit of 2^30"));
  EXPECT_THAT(Call(stub, Lookup("transpose", {64, 64}, "f64")),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "unsupported dtype 'f64' (supported: f32)"));

  auto unknown_param = SmallJob(64, 64);
  (*unknown_param.mutable_space()->mutable_values())["tile_size"].add_values(32);
  EXPECT_THAT(Call(stub, unknown_param),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "cannot narrow unknown parameter 'tile_size'"));
  auto bad_value = SmallJob(64, 64);
  (*bad_value.mutable_space()->mutable_values())["tile"].add_values(48);
  EXPECT_THAT(Call(stub, bad_value),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "tile=48 is not in the space (values: 16,32,64)"));
  auto no_values = SmallJob(64, 64);
  (*no_values.mutable_space()->mutable_values())["vec"].clear_values();
  EXPECT_THAT(Call(stub, no_values),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "space override for 'vec' lists no values"));
  auto strategy = SmallJob(64, 64);
  strategy.set_strategy("psychic");
  EXPECT_THAT(Call(stub, strategy),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "unknown strategy 'psychic' (known: brute_force"));
  auto budget = SmallJob(64, 64);
  budget.mutable_budget()->set_max_evaluations(-1);
  EXPECT_THAT(Call(stub, budget),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "budget.max_evaluations must not be negative"));
  auto by_model = SmallJob(64, 64);
  by_model.mutable_device()->set_model("Fake GPU");
  EXPECT_THAT(Call(stub, by_model),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "select it by ordinal or uuid"));

  pb::ListResultsRequest results;
  *results.mutable_problem() = SmallJob(64, 64).problem();
  results.set_limit(-1);
  pb::ListResultsResponse rows;
  EXPECT_THAT(stub.ListResults(Context().get(), results, &rows),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "limit must be >= 0"));
  pb::ImportTableRequest import;
  import.set_json("{not json");
  pb::ImportTableResponse imported;
  EXPECT_THAT(stub.ImportTable(Context().get(), import, &imported),
              HasStatus(grpc::StatusCode::INVALID_ARGUMENT, "table"));
  // Nothing was queued by any of these.
  pb::ListJobsResponse jobs;
  ASSERT_TRUE(stub.ListJobs(Context().get(), {}, &jobs).ok());
  EXPECT_THAT(jobs.jobs(), IsEmpty());
}

TEST(RpcTest, NotFoundForUnknownFamilyDeviceAndJob) {
  TestServer server;
  pb::Tuner::Stub& stub = server.stub();
  EXPECT_THAT(Call(stub, Lookup("conv2d", {64, 64})),
              HasStatus(grpc::StatusCode::NOT_FOUND,
                        "unknown kernel family 'conv2d' (known: transpose, matmul)"));
  auto by_ordinal = Lookup("transpose", {64, 64});
  by_ordinal.mutable_device()->set_ordinal(3);
  EXPECT_THAT(Call(stub, by_ordinal),
              HasStatus(grpc::StatusCode::NOT_FOUND, "no GPU with ordinal 3 on this host (1 present)"));
  auto by_uuid = SmallJob(64, 64);
  by_uuid.mutable_device()->set_uuid("GPU-nope");
  EXPECT_THAT(Call(stub, by_uuid), HasStatus(grpc::StatusCode::NOT_FOUND, "no GPU with uuid 'GPU-nope'"));
  auto by_model = Lookup("transpose", {64, 64});
  by_model.mutable_device()->set_model("NVIDIA B200");
  EXPECT_THAT(Call(stub, by_model),
              HasStatus(grpc::StatusCode::NOT_FOUND,
                        "no GPU and no tuning data for device model 'NVIDIA B200'"));

  pb::WatchJobRequest watch;
  watch.set_job_id("job-999999-0000");
  auto context = Context();
  auto reader = stub.WatchJob(context.get(), watch);
  pb::JobProgress progress;
  EXPECT_FALSE(reader->Read(&progress));
  EXPECT_THAT(reader->Finish(), HasStatus(grpc::StatusCode::NOT_FOUND, "no job 'job-999999-0000'"));
  pb::CancelJobRequest cancel;
  cancel.set_job_id("job-999999-0000");
  pb::CancelJobResponse cancelled;
  EXPECT_THAT(stub.CancelJob(Context().get(), cancel, &cancelled),
              HasStatus(grpc::StatusCode::NOT_FOUND, "no job 'job-999999-0000'"));
}

TEST(RpcTest, EveryFamilysDefaultSpaceFitsTheSweepLimit) {
  // A request can only narrow a family's space, so the default one must be accepted as it is.
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    EXPECT_LE(family->default_space().CartesianSize(), kMaxSpaceCombinations)
        << family->name();
  }
}

TEST(RpcTest, ResourceExhaustedForAProblemLargerThanTheGpusMemory) {
  // Shapes are capped at 2^31 elements per matrix, so only a GPU smaller than the largest valid
  // problem (transpose: 3 x 8 GiB) can be too small; this one has 1 GiB.
  ScopedEnv memory("FAKE_WORKER_MEMORY_MB", "1024");
  TestServer server;
  auto big = SmallJob(16384, 16384);
  EXPECT_THAT(Call(server.stub(), big),
              HasStatus(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "problem needs 3072 MiB of GPU memory; GPU 0 has 1024 MiB"));
  auto lookup = Lookup("transpose", {16384, 16384});
  lookup.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE);
  EXPECT_THAT(Call(server.stub(), lookup),
              HasStatus(grpc::StatusCode::RESOURCE_EXHAUSTED, "problem needs 3072 MiB"));
  pb::ListJobsResponse jobs;
  ASSERT_TRUE(server.stub().ListJobs(Context().get(), {}, &jobs).ok());
  EXPECT_THAT(jobs.jobs(), IsEmpty());
  // A problem that fits is accepted.
  EXPECT_TRUE(Call(server.stub(), SmallJob(256, 256)).ok());
}

TEST(RpcTest, FailedPreconditionOnAHostWithoutAGpu) {
  TempDir dir;
  const std::string no_driver = WriteScript(dir, "worker", "exec " + FakeWorker() + " \"$@\" --fail-start");
  TestServer server(ServerOptions::Worker(no_driver));
  pb::ListDevicesResponse devices;
  ASSERT_TRUE(server.stub().ListDevices(Context().get(), {}, &devices).ok());
  EXPECT_THAT(devices.devices(), IsEmpty());
  EXPECT_THAT(devices.no_gpu_reason(), HasSubstr("no CUDA driver on this host (fake)"));
  EXPECT_THAT(Call(server.stub(), SmallJob(64, 64)),
              HasStatus(grpc::StatusCode::FAILED_PRECONDITION,
                        "this host cannot tune (it serves tables only): "));
  EXPECT_THAT(Call(server.stub(), SmallJob(64, 64)), HasStatus(grpc::StatusCode::FAILED_PRECONDITION, "no CUDA driver"));
  auto wait = Lookup("transpose", {64, 64});
  wait.set_on_miss(pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING);
  EXPECT_THAT(Call(server.stub(), wait),
              HasStatus(grpc::StatusCode::FAILED_PRECONDITION, "this host cannot tune"));
  // Lookups still answer.
  pb::GetBestConfigResponse response;
  ASSERT_TRUE(Call(server.stub(), Lookup("transpose", {64, 64}), &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_FAMILY_DEFAULT);
}

TEST(RpcTest, FailedPreconditionWhenTheWorkerBinaryIsMissing) {
  TestServer server(ServerOptions::Worker("/nonexistent/cutune-worker"));
  EXPECT_THAT(Call(server.stub(), SmallJob(64, 64)),
              HasStatus(grpc::StatusCode::FAILED_PRECONDITION, "cannot start the GPU worker"));
}

TEST(RpcTest, UnavailableForAQuarantinedGpu) {
  TestServer server(ServerOptions::Worker("/bin/false"));
  pb::ListDevicesResponse devices;
  ASSERT_TRUE(server.stub().ListDevices(Context().get(), {}, &devices).ok());
  ASSERT_THAT(devices.devices(), SizeIs(1));
  EXPECT_EQ(devices.devices(0).state(), pb::Device::STATE_QUARANTINED);
  EXPECT_THAT(Call(server.stub(), SmallJob(64, 64)),
              HasStatus(grpc::StatusCode::UNAVAILABLE,
                        "GPU 0 is quarantined: its worker keeps failing to start"));
  auto tune = Lookup("transpose", {64, 64});
  tune.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE);
  EXPECT_THAT(Call(server.stub(), tune), HasStatus(grpc::StatusCode::UNAVAILABLE, "quarantined"));
}

class AuthTest : public ::testing::Test {
 protected:
  AuthTest() : server_(ServerOptions::Auth(Authorizer::FromTokens({"admin-secret"}, {"read-secret"}))) {}
  TestServer server_;
};

TEST_F(AuthTest, UnauthenticatedWithoutAKnownBearerToken) {
  pb::Tuner::Stub& stub = server_.stub();
  pb::ListDevicesResponse devices;
  EXPECT_THAT(stub.ListDevices(Context().get(), {}, &devices),
              HasStatus(grpc::StatusCode::UNAUTHENTICATED,
                        "missing 'authorization: Bearer <token>' metadata"));
  EXPECT_THAT(stub.ListDevices(Context(std::chrono::seconds(5), "guess").get(), {}, &devices),
              HasStatus(grpc::StatusCode::UNAUTHENTICATED, "unknown token"));
  EXPECT_THAT(stub.ListDevices(Context(std::chrono::seconds(5), "admin-secre").get(), {}, &devices),
              HasStatus(grpc::StatusCode::UNAUTHENTICATED, "unknown token"));
  auto basic = Context();
  basic->AddMetadata("authorization", "Basic YWRtaW4tc2VjcmV0");
  EXPECT_THAT(stub.ListDevices(basic.get(), {}, &devices),
              HasStatus(grpc::StatusCode::UNAUTHENTICATED, "must be 'Bearer <token>'"));
  // Every RPC checks, before validating anything.
  pb::ListFamiliesResponse families;
  EXPECT_EQ(stub.ListFamilies(Context().get(), {}, &families).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call(stub, Lookup("nope", {})).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call(stub, SmallJob(64, 64)).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::ListJobsResponse jobs;
  EXPECT_EQ(stub.ListJobs(Context().get(), {}, &jobs).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::CancelJobRequest cancel;
  pb::CancelJobResponse cancelled;
  EXPECT_EQ(stub.CancelJob(Context().get(), cancel, &cancelled).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::ListResultsResponse rows;
  EXPECT_EQ(stub.ListResults(Context().get(), {}, &rows).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::ExportTableResponse exported;
  EXPECT_EQ(stub.ExportTable(Context().get(), {}, &exported).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::ImportTableResponse imported;
  EXPECT_EQ(stub.ImportTable(Context().get(), {}, &imported).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::GetServerInfoResponse info;
  EXPECT_THAT(stub.GetServerInfo(Context().get(), {}, &info),
              HasStatus(grpc::StatusCode::UNAUTHENTICATED, "missing 'authorization"));
  auto context = Context();
  auto reader = stub.WatchJob(context.get(), {});
  pb::JobProgress progress;
  EXPECT_FALSE(reader->Read(&progress));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthTest, ReadTokenLooksUpButMayNotTuneCancelOrImport) {
  pb::Tuner::Stub& stub = server_.stub();
  const std::string read = "read-secret";
  pb::GetBestConfigResponse response;
  EXPECT_TRUE(Call(stub, Lookup("transpose", {64, 64}), &response, read).ok());
  pb::ExportTableResponse exported;
  EXPECT_TRUE(stub.ExportTable(Context(std::chrono::seconds(5), read).get(), {}, &exported).ok());
  constexpr std::string_view kDenied = "this token is read-only";
  EXPECT_THAT(Call(stub, SmallJob(64, 64), nullptr, read),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, kDenied));
  auto tune = Lookup("transpose", {64, 64});
  tune.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE);
  EXPECT_THAT(Call(stub, tune, nullptr, read), HasStatus(grpc::StatusCode::PERMISSION_DENIED, kDenied));
  tune.set_on_miss(pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING);
  EXPECT_THAT(Call(stub, tune, nullptr, read), HasStatus(grpc::StatusCode::PERMISSION_DENIED, kDenied));
  pb::CancelJobRequest cancel;
  cancel.set_job_id("job-1");
  pb::CancelJobResponse cancelled;
  EXPECT_THAT(stub.CancelJob(Context(std::chrono::seconds(5), read).get(), cancel, &cancelled),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, kDenied));
  pb::ImportTableRequest import;
  import.set_json(ReadAsset("tables/fixture_h200.json"));
  pb::ImportTableResponse imported;
  EXPECT_THAT(stub.ImportTable(Context(std::chrono::seconds(5), read).get(), import, &imported),
              HasStatus(grpc::StatusCode::PERMISSION_DENIED, kDenied));

  pb::GetServerInfoResponse info;
  ASSERT_TRUE(stub.GetServerInfo(Context(std::chrono::seconds(5), read).get(), {}, &info).ok());
  EXPECT_EQ(info.role(), pb::GetServerInfoResponse::ROLE_READ);
  EXPECT_TRUE(info.tokens_required());

  // The admin token may do all of it.
  const std::string admin = "admin-secret";
  ASSERT_TRUE(stub.GetServerInfo(Context(std::chrono::seconds(5), admin).get(), {}, &info).ok());
  EXPECT_EQ(info.role(), pb::GetServerInfoResponse::ROLE_ADMIN);
  pb::StartTuningResponse started;
  ASSERT_TRUE(Call(stub, SmallJob(64, 64), &started, admin).ok());
  cancel.set_job_id(started.job_id());
  EXPECT_TRUE(stub.CancelJob(Context(std::chrono::seconds(5), admin).get(), cancel, &cancelled).ok());
  EXPECT_TRUE(stub.ImportTable(Context(std::chrono::seconds(5), admin).get(), import, &imported).ok());
  EXPECT_EQ(imported.winners_added(), 2);
}

// The shipped H200 table carries portfolios: a table server answers a shape outside its grid
// with PREDICTED, says how good the answer is expected to be, and labels where its figures were
// measured; a grid shape stays EXACT, measured at the asked shape.
// Imports tables/nvidia-h200.json, the shipped H200 table.
void ImportShipped(pb::Tuner::Stub& stub, pb::ImportTableResponse* imported) {
  std::ifstream in(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json");
  std::stringstream text;
  text << in.rdbuf();
  pb::ImportTableRequest import;
  import.set_json(text.str());
  ASSERT_TRUE(stub.ImportTable(Context().get(), import, imported).ok());
}

TEST(RpcTest, TheShippedTableAnswersUntunedShapesPredicted) {
  TestServer server;
  pb::Tuner::Stub& stub = server.stub();
  pb::ImportTableResponse imported;
  ASSERT_NO_FATAL_FAILURE(ImportShipped(stub, &imported));
  EXPECT_GT(imported.winners_added(), 100);

  for (const auto& [family, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"matmul", {3000, 5000, 2000}}, {"matmul", {24, 3000, 9000}}, {"transpose", {5000, 5000}}}) {
    auto lookup = Lookup(family, shape);
    lookup.mutable_device()->set_model("NVIDIA H200");
    pb::GetBestConfigResponse response;
    ASSERT_TRUE(Call(stub, lookup, &response).ok());
    EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_PREDICTED) << family;
    EXPECT_GE(response.expected_slowdown(), 1.0);
    EXPECT_GT(response.predicted_time_us(), 0);
    EXPECT_FALSE(response.measured_at_asked_shape());
    EXPECT_THAT(response.tuned_shape(), SizeIs(shape.size()));
    EXPECT_GT(response.time_us(), 0) << "the member's time at tuned_shape";
    EXPECT_FALSE(response.params().empty());
    EXPECT_FALSE(response.compile_options().empty());
  }
  auto exact = Lookup("matmul", {4096, 4096, 4096});
  exact.mutable_device()->set_model("NVIDIA H200");
  pb::GetBestConfigResponse response;
  ASSERT_TRUE(Call(stub, exact, &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_EXACT);
  EXPECT_TRUE(response.measured_at_asked_shape());
  EXPECT_EQ(response.expected_slowdown(), 0);
}

// Every answer says how to launch it, as fields: the arguments in order with their extents,
// the attribute a large dynamic shared memory needs, and split-K's one-module-per-stream rule.
TEST(RpcTest, EveryAnswerCarriesItsLaunchContract) {
  TestServer server;
  pb::Tuner::Stub& stub = server.stub();
  pb::ImportTableResponse imported;
  ASSERT_NO_FATAL_FAILURE(ImportShipped(stub, &imported));

  int split = 0, answers = 0;
  for (const auto& [family, path] : std::vector<std::pair<std::string, std::string>>{
           {"matmul", "/grid/matmul.txt"}, {"transpose", "/grid/transpose.txt"}}) {
    std::ifstream grid(std::string(CUTUNE_TABLES_DIR) + path);
    std::string line;
    while (std::getline(grid, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<int64_t> shape;
      for (absl::string_view d : absl::StrSplit(line.substr(0, line.find('#')), 'x', absl::SkipWhitespace())) {
        int64_t v = 0;
        ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &v)) << line;
        shape.push_back(v);
      }
      auto lookup = Lookup(family, shape);
      lookup.mutable_device()->set_model("NVIDIA H200");
      pb::GetBestConfigResponse r;
      ASSERT_TRUE(Call(stub, lookup, &r).ok()) << line;
      ++answers;
      EXPECT_EQ(r.problem().family(), family);
      EXPECT_THAT(r.problem().shape(), ElementsAreArray(shape));
      EXPECT_EQ(r.problem().dtype(), "f32");
      const pb::LaunchContract& c = r.launch();
      EXPECT_EQ(c.kernel(), "cutune_kernel");
      EXPECT_EQ(c.pointer_alignment(), 16u);
      ASSERT_EQ(c.arguments_size(), family == "matmul" ? 6 : 4);
      EXPECT_EQ(c.arguments(0).role(), pb::KernelArgument::ROLE_INPUT);
      EXPECT_EQ(c.arguments(0).type(), "const float*");
      EXPECT_EQ(c.arguments(0).element_type(), "f32");
      if (family == "matmul") {
        EXPECT_THAT(c.arguments(0).extent(), ElementsAre("M", "K"));
        EXPECT_THAT(c.arguments(1).extent(), ElementsAre("K", "N"));
        EXPECT_EQ(c.arguments(2).role(), pb::KernelArgument::ROLE_OUTPUT);
        EXPECT_EQ(c.arguments(2).type(), "float*");
        EXPECT_THAT(c.arguments(2).extent(), ElementsAre("M", "N"));
        EXPECT_EQ(c.arguments(5).role(), pb::KernelArgument::ROLE_DIMENSION);
        EXPECT_EQ(c.arguments(5).type(), "int");
        EXPECT_THAT(c.arguments(5).extent(), ElementsAre("K"));
      } else {
        EXPECT_THAT(c.arguments(1).extent(), ElementsAre("cols", "rows"));
      }
      // Split-K and stream-K modules hand partial sums over in their own memory.
      const auto param = [&](const char* name) {
        return r.params().contains(name) ? r.params().at(name) : 0;
      };
      const bool splits = param("splitk") > 1 || param("sk") > 0;
      split += splits;
      EXPECT_EQ(c.concurrency(), splits ? pb::LaunchContract::CONCURRENCY_ONE_MODULE_PER_STREAM
                                        : pb::LaunchContract::CONCURRENCY_ANY)
          << line;
      const bool big = r.geometry().dynamic_shared_bytes() > 48 * 1024;
      ASSERT_EQ(c.function_attributes_size(), big ? 1 : 0) << line;
      if (big) {
        EXPECT_EQ(c.function_attributes(0).name(), "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES");
        EXPECT_EQ(c.function_attributes(0).driver_attribute(), 8);
        EXPECT_EQ(c.function_attributes(0).value(), r.geometry().dynamic_shared_bytes());
      }
    }
  }
  EXPECT_GT(answers, 100);
  EXPECT_GT(split, 0) << "the grid has split-K winners; the rule is checked on them";
  // No H200 grid winner needs more than 48 KiB today; kernels' ContractTest checks the rule.

  pb::ListFamiliesResponse families;
  ASSERT_TRUE(stub.ListFamilies(Context().get(), {}, &families).ok());
  for (const pb::Family& f : families.families()) {
    EXPECT_EQ(f.launch().kernel(), "cutune_kernel");
    EXPECT_EQ(f.launch().arguments_size(), f.name() == "matmul" ? 6 : 4) << f.name();
    EXPECT_EQ(f.launch().concurrency(), pb::LaunchContract::CONCURRENCY_ANY) << f.name();
  }
}

TEST(RpcTest, TablesImportExportAndAnswerLookupsByModel) {
  TestServer server;
  pb::Tuner::Stub& stub = server.stub();
  pb::ImportTableRequest import;
  import.set_json(ReadAsset("tables/fixture_h200.json"));
  pb::ImportTableResponse imported;
  ASSERT_TRUE(stub.ImportTable(Context().get(), import, &imported).ok());
  EXPECT_EQ(imported.winners_added(), 2);
  ASSERT_TRUE(stub.ImportTable(Context().get(), import, &imported).ok());
  EXPECT_EQ(imported.winners_added(), 0);
  EXPECT_EQ(imported.winners_kept(), 2);

  // A conflicting winner for the same key: refused under FAIL_ON_CONFLICT, nothing changes.
  std::string conflicting = import.json();
  const std::string from = "\"time_us\":36.1";
  ASSERT_NE(conflicting.find(from), std::string::npos);
  conflicting.replace(conflicting.find(from), from.size(), "\"time_us\":30.5");
  pb::ImportTableRequest conflict;
  conflict.set_json(conflicting);
  conflict.set_policy(pb::ImportTableRequest::MERGE_POLICY_FAIL_ON_CONFLICT);
  EXPECT_THAT(stub.ImportTable(Context().get(), conflict, &imported),
              HasStatus(grpc::StatusCode::ALREADY_EXISTS, "/devices/0/winners/0"));

  auto lookup = Lookup("transpose", {8192, 8192});
  lookup.mutable_device()->set_model("NVIDIA H200");
  pb::GetBestConfigResponse response;
  ASSERT_TRUE(Call(stub, lookup, &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_EXACT);
  EXPECT_EQ(response.device_model(), "NVIDIA H200");
  EXPECT_EQ(response.params().at("tile"), 64);
  EXPECT_EQ(response.params().at("rows"), 8);
  EXPECT_DOUBLE_EQ(response.time_us(), 131.07);
  EXPECT_THAT(response.stale(), Contains(HasSubstr("kernel source hash differs")));
  EXPECT_THAT(response.geometry().block(), ElementsAre(64, 8, 1));

  lookup = Lookup("transpose", {4096, 5000});
  lookup.mutable_device()->set_model("NVIDIA H200");
  ASSERT_TRUE(Call(stub, lookup, &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_NEAREST_SHAPE);
  EXPECT_THAT(response.tuned_shape(), ElementsAre(4096, 4096));
  EXPECT_NEAR(response.shape_distance(), std::log2(5000.0 / 4096.0), 1e-9);

  // The local GPU ("Fake GPU", sm_90) has nothing of its own: the H200's winner, same architecture.
  lookup = Lookup("transpose", {8192, 8192});
  ASSERT_TRUE(Call(stub, lookup, &response).ok());
  EXPECT_EQ(response.rung(), pb::GetBestConfigResponse::RUNG_SAME_ARCHITECTURE);
  EXPECT_EQ(response.device_model(), "NVIDIA H200");

  pb::ExportTableRequest export_request;
  export_request.set_device_model("NVIDIA H200");
  pb::ExportTableResponse exported;
  ASSERT_TRUE(stub.ExportTable(Context().get(), export_request, &exported).ok());
  EXPECT_EQ(exported.json(), import.json());  // deterministic: byte-identical round trip
  export_request.set_device_model("NVIDIA B200");
  EXPECT_THAT(stub.ExportTable(Context().get(), export_request, &exported),
              HasStatus(grpc::StatusCode::NOT_FOUND, "no device model 'NVIDIA B200'"));
}

}  // namespace
}  // namespace cutune::service::testing
