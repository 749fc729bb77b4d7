// Hostile input against a real cutuned (a tuning host with the fake worker, the fixture tables
// imported): over a hundred distinct requests across every RPC, as a careless or malicious client
// would send them. Each must get its documented code (docs/api.md, "Errors"), the daemon must
// still answer health afterwards, and nothing it stores may change.
#include <future>
#include <limits>
#include <map>
#include <set>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

namespace health = ::grpc::health::v1;

struct Case {
  std::string name;
  std::function<grpc::Status(Daemon&)> call;
  grpc::StatusCode code;
  std::string substring;  // in the message
};

pb::Problem MakeProblem(const std::string& family, std::vector<int64_t> shape,
                        const std::string& dtype = "") {
  pb::Problem p;
  p.set_family(family);
  for (int64_t d : shape) p.add_shape(d);
  if (!dtype.empty()) p.set_dtype(dtype);
  return p;
}

grpc::Status Get(Daemon& d, const pb::GetBestConfigRequest& request) {
  pb::GetBestConfigResponse response;
  return d.stub().GetBestConfig(Context(std::chrono::seconds(20)).get(), request, &response);
}

grpc::Status GetProblem(Daemon& d, const pb::Problem& problem) {
  pb::GetBestConfigRequest request;
  *request.mutable_problem() = problem;
  return Get(d, request);
}

grpc::Status Start(Daemon& d, const pb::StartTuningRequest& request) {
  pb::StartTuningResponse response;
  return d.stub().StartTuning(Context().get(), request, &response);
}

grpc::Status Watch(Daemon& d, const std::string& job_id) {
  pb::WatchJobRequest request;
  request.set_job_id(job_id);
  auto context = Context();
  auto reader = d.stub().WatchJob(context.get(), request);
  pb::JobProgress progress;
  while (reader->Read(&progress)) {
  }
  return reader->Finish();
}

grpc::Status Cancel(Daemon& d, const std::string& job_id) {
  pb::CancelJobRequest request;
  request.set_job_id(job_id);
  pb::CancelJobResponse response;
  return d.stub().CancelJob(Context().get(), request, &response);
}

grpc::Status Results(Daemon& d, const pb::ListResultsRequest& request) {
  pb::ListResultsResponse response;
  return d.stub().ListResults(Context().get(), request, &response);
}

grpc::Status Export(Daemon& d, const std::string& model) {
  pb::ExportTableRequest request;
  request.set_device_model(model);
  pb::ExportTableResponse response;
  return d.stub().ExportTable(Context().get(), request, &response);
}

grpc::Status Import(Daemon& d, const std::string& json,
                    pb::ImportTableRequest::MergePolicy policy = pb::ImportTableRequest::MERGE_POLICY_KEEP_FASTER) {
  pb::ImportTableRequest request;
  request.set_json(json);
  request.set_policy(policy);
  pb::ImportTableResponse response;
  return d.stub().ImportTable(Context().get(), request, &response);
}

// Bytes sent as the request of `method` without any protobuf encoding.
grpc::Status Raw(Daemon& d, const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(d.channel());
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  auto context = Context(std::chrono::seconds(10));
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), "/cutune.v1.Tuner/" + method, grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// A one-winner table around `winner_fields` (a JSON object's members, without braces), built
// from a valid transpose winner.
std::string TableWith(const std::string& family, const std::string& shape,
                      const std::string& params, const std::string& extra = "") {
  return R"({"format":"cutune-table","version":1,"devices":[{"model":"Hostile GPU","cc_major":9,)"
         R"("cc_minor":0,"sm_count":132,"total_memory_bytes":85899345920,"winners":[{)"
         R"("family":")" + family + R"(","dtype":"f32","shape":)" + shape + R"(,"params":)" + params +
         R"(,"detail":"","resources":{"registers":30,"static_shared_bytes":4224,"stack_bytes":0,)"
         R"("spill_store_bytes":0,"spill_load_bytes":0,"constant_bytes":0},"samples":10,)"
         R"("time_us":)" + (extra.empty() ? std::string("12.5") : extra) +
         R"(,"min_us":12,"rel_spread":0.01,"gbps":100,"tflops":0,"percent_of_reference":90,)"
         R"("compile_ms":5,"reference":{"name":"device copy","time_us":11},)"
         R"("measured_at":"2026-11-29T14:23:55.220Z","source_hash":"abc","space_version":2,)"
         R"("driver_version":13000,"nvrtc_version":"13.0"}]}]})";
}

const std::string kTransposeOk =
    R"({"smem":1,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0})";

std::vector<Case> Cases() {
  using C = grpc::StatusCode;
  std::vector<Case> cases;
  auto add = [&](std::string name, std::function<grpc::Status(Daemon&)> call, C code,
                 std::string substring = "") {
    cases.push_back({std::move(name), std::move(call), code, std::move(substring)});
  };
  const std::string mb(1 << 20, 'x');
  const std::string nul_name = std::string("trans") + '\0' + "pose";
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

  // GetBestConfig: the problem.
  auto problem = [&](std::string name, pb::Problem p, C code, std::string sub) {
    add("GetBestConfig " + name, [p](Daemon& d) { return GetProblem(d, p); }, code, sub);
  };
  problem("no family", MakeProblem("", {64, 64}), C::INVALID_ARGUMENT, "problem.family is required");
  problem("unknown family", MakeProblem("fft", {64}), C::NOT_FOUND, "fft");
  problem("1 MB family", MakeProblem(mb, {64}), C::NOT_FOUND, "(1048576 bytes)");
  problem("NUL in family", MakeProblem(nul_name, {64, 64}), C::NOT_FOUND, "trans\\x00pose");
  problem("unicode family", MakeProblem("транспонирование", {64, 64}), C::NOT_FOUND, "");
  problem("emoji family", MakeProblem("🔥", {64, 64}), C::NOT_FOUND, "");
  problem("empty shape", MakeProblem("transpose", {}), C::INVALID_ARGUMENT, "");
  problem("zero dim", MakeProblem("transpose", {0, 64}), C::INVALID_ARGUMENT, "");
  problem("negative dim", MakeProblem("transpose", {-64, 64}), C::INVALID_ARGUMENT, "");
  problem("INT64_MIN dim", MakeProblem("transpose", {kMin, 64}), C::INVALID_ARGUMENT, "");
  problem("INT64_MAX dims", MakeProblem("transpose", {kMax, kMax}), C::INVALID_ARGUMENT, "");
  problem("product overflows", MakeProblem("transpose", {int64_t{1} << 40, int64_t{1} << 40}),
          C::INVALID_ARGUMENT, "");
  problem("matrix over 2^31 elements", MakeProblem("transpose", {int64_t{1} << 16, int64_t{1} << 16}),
          C::INVALID_ARGUMENT, "");
  problem("transpose rank 1", MakeProblem("transpose", {64}), C::INVALID_ARGUMENT, "");
  problem("transpose rank 3", MakeProblem("transpose", {64, 64, 64}), C::INVALID_ARGUMENT, "");
  problem("matmul rank 2", MakeProblem("matmul", {64, 64}), C::INVALID_ARGUMENT, "");
  problem("matmul rank 4", MakeProblem("matmul", {64, 64, 64, 64}), C::INVALID_ARGUMENT, "");
  problem("matmul zero K", MakeProblem("matmul", {64, 64, 0}), C::INVALID_ARGUMENT, "");
  problem("matmul huge M", MakeProblem("matmul", {kMax, 64, 64}), C::INVALID_ARGUMENT, "");
  problem("dtype f64", MakeProblem("matmul", {64, 64, 64}, "f64"), C::INVALID_ARGUMENT,
          "unsupported dtype 'f64'");
  problem("1 MB dtype", MakeProblem("matmul", {64, 64, 64}, mb), C::INVALID_ARGUMENT,
          "(1048576 bytes)");
  problem("NUL dtype", MakeProblem("matmul", {64, 64, 64}, std::string("f32\0", 4)),
          C::INVALID_ARGUMENT, "unsupported dtype");

  // GetBestConfig: device, modes.
  auto device = [&](std::string name, std::function<void(pb::GetBestConfigRequest&)> edit, C code,
                    std::string sub) {
    pb::GetBestConfigRequest r;
    *r.mutable_problem() = MakeProblem("transpose", {4096, 4096});
    edit(r);
    add("GetBestConfig " + name, [r](Daemon& d) { return Get(d, r); }, code, sub);
  };
  device("ordinal 99", [](auto& r) { r.mutable_device()->set_ordinal(99); }, C::NOT_FOUND,
         "no GPU with ordinal 99");
  device("ordinal -1", [](auto& r) { r.mutable_device()->set_ordinal(-1); }, C::NOT_FOUND, "");
  device("ordinal INT32_MIN",
         [](auto& r) { r.mutable_device()->set_ordinal(std::numeric_limits<int32_t>::min()); },
         C::NOT_FOUND, "");
  device("unknown uuid", [](auto& r) { r.mutable_device()->set_uuid("GPU-nope"); }, C::NOT_FOUND,
         "GPU-nope");
  device("1 MB uuid", [&](auto& r) { r.mutable_device()->set_uuid(mb); }, C::NOT_FOUND,
         "(1048576 bytes)");
  device("empty uuid", [](auto& r) { r.mutable_device()->set_uuid(""); }, C::NOT_FOUND, "");
  device("unknown model", [](auto& r) { r.mutable_device()->set_model("NVIDIA Z9000"); },
         C::NOT_FOUND, "NVIDIA Z9000");
  device("1 MB model", [&](auto& r) { r.mutable_device()->set_model(mb); }, C::NOT_FOUND,
         "(1048576 bytes)");
  device("unicode model", [](auto& r) { r.mutable_device()->set_model("Ñvidia Ħ200"); },
         C::NOT_FOUND, "");
  device("unknown on_miss",
         [](auto& r) { r.set_on_miss(static_cast<pb::GetBestConfigRequest::OnMiss>(42)); },
         C::INVALID_ARGUMENT, "unknown on_miss value 42");
  device("negative on_miss",
         [](auto& r) { r.set_on_miss(static_cast<pb::GetBestConfigRequest::OnMiss>(-7)); },
         C::INVALID_ARGUMENT, "unknown on_miss");
  device("tune by model",
         [](auto& r) {
           r.mutable_problem()->set_family("matmul");
           r.mutable_problem()->clear_shape();
           for (int64_t v : {100, 200, 300}) r.mutable_problem()->add_shape(v);
           r.mutable_device()->set_model("Fake GPU");
           r.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE);
         },
         C::INVALID_ARGUMENT, "select it by ordinal");
  device("tune beyond GPU memory",
         [](auto& r) {
           r.mutable_problem()->clear_shape();
           r.mutable_problem()->add_shape(40000);
           r.mutable_problem()->add_shape(40000);
           r.set_on_miss(pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING);
         },
         C::RESOURCE_EXHAUSTED, "MiB of GPU memory");
  device("tune on GPU 5",
         [](auto& r) {
           r.mutable_problem()->clear_shape();
           r.mutable_problem()->add_shape(1000);
           r.mutable_problem()->add_shape(1000);
           r.mutable_device()->set_ordinal(5);
           r.set_on_miss(pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE);
         },
         C::NOT_FOUND, "no GPU with ordinal 5");

  // StartTuning.
  auto start = [&](std::string name, std::function<void(pb::StartTuningRequest&)> edit, C code,
                   std::string sub) {
    pb::StartTuningRequest r = SmallJob(256, 256);
    edit(r);
    add("StartTuning " + name, [r](Daemon& d) { return Start(d, r); }, code, sub);
  };
  start("no problem", [](auto& r) { r.clear_problem(); }, C::INVALID_ARGUMENT, "problem.family");
  start("bad shape", [](auto& r) { r.mutable_problem()->set_shape(0, -1); }, C::INVALID_ARGUMENT, "");
  start("resume with a bad shape", [](auto& r) { r.set_resume(true); r.mutable_problem()->set_shape(0, -1); },
        C::INVALID_ARGUMENT, "");
  start("unknown family", [](auto& r) { r.mutable_problem()->set_family("conv"); }, C::NOT_FOUND, "conv");
  start("unknown strategy", [](auto& r) { r.set_strategy("psychic"); }, C::INVALID_ARGUMENT,
        "unknown strategy 'psychic'");
  start("1 MB strategy", [&](auto& r) { r.set_strategy(mb); }, C::INVALID_ARGUMENT, "(1048576 bytes)");
  start("negative evaluations", [](auto& r) { r.mutable_budget()->set_max_evaluations(-1); },
        C::INVALID_ARGUMENT, "max_evaluations");
  start("INT32_MIN evaluations",
        [](auto& r) { r.mutable_budget()->set_max_evaluations(std::numeric_limits<int32_t>::min()); },
        C::INVALID_ARGUMENT, "max_evaluations");
  start("NaN seconds", [](auto& r) { r.mutable_budget()->set_max_seconds(std::nan("")); },
        C::INVALID_ARGUMENT, "max_seconds");
  start("-NaN seconds", [](auto& r) { r.mutable_budget()->set_max_seconds(-std::nan("")); },
        C::INVALID_ARGUMENT, "max_seconds");
  start("+Inf seconds",
        [](auto& r) { r.mutable_budget()->set_max_seconds(std::numeric_limits<double>::infinity()); },
        C::INVALID_ARGUMENT, "max_seconds");
  start("-Inf seconds",
        [](auto& r) { r.mutable_budget()->set_max_seconds(-std::numeric_limits<double>::infinity()); },
        C::INVALID_ARGUMENT, "max_seconds");
  start("negative seconds", [](auto& r) { r.mutable_budget()->set_max_seconds(-0.5); },
        C::INVALID_ARGUMENT, "max_seconds");
  // Explicit candidates (SmallJob pins tile=32, smem=1, vec=1, swizzle=0, minb=0).
  auto candidate = [](pb::StartTuningRequest& r, std::map<std::string, int64_t> over) {
    std::map<std::string, int64_t> p = {{"minb", 0}, {"pad", 1}, {"rows", 8}, {"smem", 1},
                                        {"swizzle", 0}, {"tile", 32}, {"vec", 1}};
    for (const auto& [k, v] : over) p[k] = v;
    auto& values = *r.add_candidates()->mutable_values();
    for (const auto& [k, v] : p) values[k] = v;
  };
  start("candidate outside the narrowed space",
        [&](auto& r) { candidate(r, {{"tile", 64}}); }, C::INVALID_ARGUMENT, "candidates[0]");
  start("candidate with a zero divisor", [&](auto& r) { candidate(r, {{"tile", 0}}); },
        C::INVALID_ARGUMENT, "candidates[0]");
  start("candidate missing a parameter", [](auto& r) { (*r.add_candidates()->mutable_values())["tile"] = 32; },
        C::INVALID_ARGUMENT, "candidates[0]");
  start("candidate listed twice",
        [&](auto& r) { candidate(r, {}); candidate(r, {}); }, C::INVALID_ARGUMENT, "candidates[1]");
  start("5000 candidates",
        [&](auto& r) { for (int i = 0; i < 5000; ++i) candidate(r, {}); }, C::INVALID_ARGUMENT,
        "at most 4096");
  start("override of unknown parameter",
        [](auto& r) { (*r.mutable_space()->mutable_values())["warp"].add_values(1); },
        C::INVALID_ARGUMENT, "warp");
  start("override with 1 MB name",
        [&](auto& r) { (*r.mutable_space()->mutable_values())[mb].add_values(1); },
        C::INVALID_ARGUMENT, "(1048576 bytes)");
  start("override value outside the space",
        [](auto& r) { (*r.mutable_space()->mutable_values())["tile"].set_values(0, 48); },
        C::INVALID_ARGUMENT, "48");
  start("override value zero",
        [](auto& r) { (*r.mutable_space()->mutable_values())["vec"].set_values(0, 0); },
        C::INVALID_ARGUMENT, "");
  start("override value INT64_MIN",
        [](auto& r) { (*r.mutable_space()->mutable_values())["rows"].set_values(0, kMin); },
        C::INVALID_ARGUMENT, "");
  start("override with no values",
        [](auto& r) { (*r.mutable_space()->mutable_values())["tile"].clear_values(); },
        C::INVALID_ARGUMENT, "lists no values");
  start("override with 10^5 values",
        [](auto& r) {
          auto& list = (*r.mutable_space()->mutable_values())["tile"];
          list.clear_values();
          for (int i = 0; i < 100000; ++i) list.add_values(i);
        },
        C::INVALID_ARGUMENT, "lists 100000 values");
  start("override repeating a value 10^5 times",
        [](auto& r) {
          auto& list = (*r.mutable_space()->mutable_values())["tile"];
          list.clear_values();
          for (int i = 0; i < 100000; ++i) list.add_values(32);
        },
        C::INVALID_ARGUMENT, "");
  start("override repeating a value",
        [](auto& r) {
          auto& list = (*r.mutable_space()->mutable_values())["rows"];
          list.clear_values();
          list.add_values(8);
          list.add_values(8);
        },
        C::INVALID_ARGUMENT, "lists 8 twice");
  start("device by model", [](auto& r) { r.mutable_device()->set_model("Fake GPU"); },
        C::INVALID_ARGUMENT, "not by model");
  start("device ordinal 3", [](auto& r) { r.mutable_device()->set_ordinal(3); }, C::NOT_FOUND,
        "no GPU with ordinal 3");
  start("device unknown uuid", [](auto& r) { r.mutable_device()->set_uuid("x"); }, C::NOT_FOUND, "");
  start("beyond GPU memory",
        [](auto& r) {
          r.mutable_problem()->set_shape(0, 40000);
          r.mutable_problem()->set_shape(1, 40000);
        },
        C::RESOURCE_EXHAUSTED, "MiB of GPU memory");
  start("1 MB idempotency key", [&](auto& r) { r.set_idempotency_key(mb); }, C::INVALID_ARGUMENT,
        "idempotency_key is 1048576 bytes");
  start("matmul space of 10^5 values each",
        [](auto& r) {
          r.mutable_problem()->set_family("matmul");
          r.mutable_problem()->clear_shape();
          for (int64_t v : {64, 64, 64}) r.mutable_problem()->add_shape(v);
          r.clear_space();
          auto& list = (*r.mutable_space()->mutable_values())["bm"];
          for (int i = 1; i <= 100000; ++i) list.add_values(i);
        },
        C::INVALID_ARGUMENT, "");

  // WatchJob, CancelJob, ListResults by job.
  for (auto [name, id] : std::vector<std::pair<std::string, std::string>>{
           {"empty id", ""}, {"unknown id", "job-999999-ffff"}, {"1 MB id", mb},
           {"NUL id", std::string("job\0x", 5)}, {"unicode id", "работа-1"}}) {
    const C code = id.empty() ? C::INVALID_ARGUMENT : C::NOT_FOUND;
    const std::string sub = id.empty() ? "job_id is required" : "no job";
    add("WatchJob " + name, [id](Daemon& d) { return Watch(d, id); }, code, sub);
    add("CancelJob " + name, [id](Daemon& d) { return Cancel(d, id); }, code, sub);
    if (!id.empty()) {
      pb::ListResultsRequest r;
      r.set_job_id(id);
      add("ListResults " + name, [r](Daemon& d) { return Results(d, r); }, C::NOT_FOUND, "no job");
    }
  }

  // ListResults by problem.
  auto results = [&](std::string name, std::function<void(pb::ListResultsRequest&)> edit, C code,
                     std::string sub) {
    pb::ListResultsRequest r;
    *r.mutable_problem() = MakeProblem("transpose", {4096, 4096});
    edit(r);
    add("ListResults " + name, [r](Daemon& d) { return Results(d, r); }, code, sub);
  };
  results("negative limit", [](auto& r) { r.set_limit(-1); }, C::INVALID_ARGUMENT, "limit");
  results("INT32_MIN limit", [](auto& r) { r.set_limit(std::numeric_limits<int32_t>::min()); },
          C::INVALID_ARGUMENT, "limit");
  results("no problem", [](auto& r) { r.clear_problem(); }, C::INVALID_ARGUMENT, "problem.family");
  results("bad shape", [](auto& r) { r.mutable_problem()->set_shape(1, 0); }, C::INVALID_ARGUMENT, "");
  results("unknown model", [](auto& r) { r.mutable_device()->set_model("nope"); }, C::NOT_FOUND, "");
  results("1 MB model", [&](auto& r) { r.mutable_device()->set_model(mb); }, C::NOT_FOUND,
          "(1048576 bytes)");

  // ExportTable.
  add("ExportTable unknown model", [](Daemon& d) { return Export(d, "NVIDIA Z9000"); }, C::NOT_FOUND,
      "NVIDIA Z9000");
  add("ExportTable 1 MB model", [mb](Daemon& d) { return Export(d, mb); }, C::NOT_FOUND,
      "(1048576 bytes)");

  // ImportTable: the JSON itself.
  auto import = [&](std::string name, std::string json, C code, std::string sub) {
    add("ImportTable " + name, [json](Daemon& d) { return Import(d, json); }, code, sub);
  };
  import("empty", "", C::INVALID_ARGUMENT, "not valid JSON");
  import("whitespace", " \n\t ", C::INVALID_ARGUMENT, "not valid JSON");
  import("null", "null", C::INVALID_ARGUMENT, "expected an object");
  import("array", "[]", C::INVALID_ARGUMENT, "expected an object");
  import("number", "42", C::INVALID_ARGUMENT, "expected an object");
  import("string", "\"cutune-table\"", C::INVALID_ARGUMENT, "expected an object");
  import("garbage", "}{][", C::INVALID_ARGUMENT, "not valid JSON");
  import("100000 nested arrays", std::string(100000, '[') + std::string(100000, ']'),
         C::INVALID_ARGUMENT, "");
  import("100000 nested objects", [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"a\":";
    s += "1";
    s += std::string(100000, '}');
    return s;
  }(), C::INVALID_ARGUMENT, "");
  import("nested arrays in devices",
         R"({"format":"cutune-table","version":1,"devices":)" + std::string(50000, '[') +
             std::string(50000, ']') + "}",
         C::INVALID_ARGUMENT, "");
  import("unclosed nesting", std::string(100000, '['), C::INVALID_ARGUMENT, "");
  import("1e400", R"({"format":"cutune-table","version":1e400,"devices":[]})", C::INVALID_ARGUMENT,
         "");
  import("-1e400 time", TableWith("transpose", "[64,64]", kTransposeOk, "-1e400"),
         C::INVALID_ARGUMENT, "");
  import("1e400 time", TableWith("transpose", "[64,64]", kTransposeOk, "1e400"),
         C::INVALID_ARGUMENT, "");
  import("huge integer version", R"({"format":"cutune-table","version":99999999999999999999999,"devices":[]})",
         C::INVALID_ARGUMENT, "/version");
  import("uint64 version", R"({"format":"cutune-table","version":18446744073709551615,"devices":[]})",
         C::INVALID_ARGUMENT, "/version");
  import("version as string", R"({"format":"cutune-table","version":"1","devices":[]})",
         C::INVALID_ARGUMENT, "/version");
  import("wrong format", R"({"format":"kernel-tuner","version":1,"devices":[]})",
         C::INVALID_ARGUMENT, "/format");
  import("format 1 MB", R"({"format":")" + mb + R"(","version":1,"devices":[]})",
         C::INVALID_ARGUMENT, "/format");
  import("devices not an array", R"({"format":"cutune-table","version":1,"devices":{}})",
         C::INVALID_ARGUMENT, "/devices");
  import("duplicate key", R"({"format":"cutune-table","version":1,"version":1,"devices":[]})",
         C::INVALID_ARGUMENT, "appears twice");
  import("truncated", TableWith("transpose", "[64,64]", kTransposeOk).substr(0, 200),
         C::INVALID_ARGUMENT, "not valid JSON");
  import("NUL byte", std::string("{\"format\":\"cutune-table\"\0,\"version\":1}", 38),
         C::INVALID_ARGUMENT, "");
  import("unknown top-level field", R"({"format":"cutune-table","version":1,"devices":[],"x":1})",
         C::INVALID_ARGUMENT, "/x");
  import("NaN token", TableWith("transpose", "[64,64]", kTransposeOk, "NaN"), C::INVALID_ARGUMENT,
         "not valid JSON");
  import("10 MB string", R"({"format":"cutune-table","version":1,"devices":[],"pad":")" +
                             std::string(10 << 20, 'p') + "\"}",
         C::INVALID_ARGUMENT, "");

  // ImportTable: winners outside the family's space.
  auto winner = [&](std::string name, std::string family, std::string shape, std::string params,
                    std::string sub) {
    import("winner " + name, TableWith(family, shape, params), C::INVALID_ARGUMENT, sub);
  };
  winner("vec=0", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":8,"vec":0,"pad":1,"swizzle":0,"minb":0})", "/params");
  winner("tile=0", "transpose", "[64,64]",
         R"({"smem":1,"tile":0,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0})", "/params");
  winner("rows=INT64_MIN", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":-9223372036854775808,"vec":1,"pad":1,"swizzle":0,"minb":0})",
         "/params");
  winner("negative rows", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":-16,"vec":1,"pad":1,"swizzle":0,"minb":0})", "/params");
  winner("params {}", "transpose", "[64,64]", "{}", "/params");
  winner("params missing one", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0})", "/params");
  winner("unknown param", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0,"warp":2})", "/params");
  winner("constraint broken", "transpose", "[64,64]",
         R"({"smem":1,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":1,"minb":0})", "/params");
  winner("params as array", "transpose", "[64,64]", "[1,2,3]", "/params");
  winner("param as string", "transpose", "[64,64]",
         R"({"smem":"1","tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0})", "/params");
  winner("param as float", "transpose", "[64,64]",
         R"({"smem":1.5,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0})", "/params");
  winner("param 2^64", "transpose", "[64,64]",
         R"({"smem":18446744073709551616,"tile":32,"rows":8,"vec":1,"pad":1,"swizzle":0,"minb":0})",
         "");
  winner("matmul bm=0", "matmul", "[64,64,64]", R"({"bm":0})", "/params");
  winner("3-D transpose", "transpose", "[64,64,64]", kTransposeOk, "/shape");
  winner("zero dim", "transpose", "[0,64]", kTransposeOk, "/shape");
  winner("negative dim", "transpose", "[-5,64]", kTransposeOk, "/shape");
  winner("shape of strings", "transpose", R"(["64","64"])", kTransposeOk, "/shape");
  winner("empty shape", "transpose", "[]", kTransposeOk, "/shape");
  winner("unknown family", "fft", "[64]", kTransposeOk, "/family");
  winner("1 MB family", mb, "[64]", kTransposeOk, "/family");
  winner("nested params", "transpose", "[64,64]", std::string(1000, '[') + std::string(1000, ']'),
         "/params");
  import("bad merge policy", TableWith("transpose", "[64,64]", kTransposeOk), C::INVALID_ARGUMENT,
         "");
  cases.back().call = [](Daemon& d) {
    return Import(d, TableWith("transpose", "[64,64]", kTransposeOk),
                  static_cast<pb::ImportTableRequest::MergePolicy>(77));
  };
  cases.back().substring = "unknown merge policy 77";
  import("over the size limit", std::string(70 << 20, ' '), C::RESOURCE_EXHAUSTED, "");

  // Raw bytes that are no protobuf message, to every method.
  for (const std::string method : {"ListDevices", "ListFamilies", "GetBestConfig", "StartTuning",
                                   "WatchJob", "CancelJob", "ListJobs", "ListResults",
                                   "ExportTable", "ImportTable", "GetServerInfo",
                                   "ProfileCandidate"}) {
    add("raw garbage to " + method,
        [method](Daemon& d) { return Raw(d, method, std::string("\xff\xff\xff\xff\xff\xff\x01", 7)); },
        C::INTERNAL, "");
  }
  // A proto3 string field holding invalid UTF-8 does not parse either (a C++ client cannot even
  // send one: it fails to serialize), so these go as raw bytes.
  add("ImportTable with invalid UTF-8 JSON",
      [](Daemon& d) { return Raw(d, "ImportTable", std::string("\x0a\x04{\xff\xfe}", 6)); },
      grpc::StatusCode::INTERNAL, "");
  add("GetBestConfig with invalid UTF-8 family",
      [](Daemon& d) { return Raw(d, "GetBestConfig", std::string("\x0a\x05\x0a\x03\xff\xfe\xfd", 7)); },
      grpc::StatusCode::INTERNAL, "");
  return cases;
}

// What a client can see of the daemon's state: every table row and winner, the jobs, the GPUs.
std::string Fingerprint(Daemon& d) {
  pb::ExportTableRequest request;
  request.set_include_rows(true);
  pb::ExportTableResponse table;
  grpc::Status s = d.stub().ExportTable(Context().get(), request, &table);
  pb::ListJobsResponse jobs;
  grpc::Status j = d.stub().ListJobs(Context().get(), {}, &jobs);
  return absl::StrCat(s.error_code(), table.json(), "\njobs ", j.error_code(), " ",
                      jobs.jobs_size());
}

TEST(HostileTest, EveryRpcAnswersHostileInputWithItsCodeAndNothingChanges) {
  TempDir dir;
  auto daemon = Daemon::Start({"--db", dir.File("hostile.db"), "--worker", FakeWorker(), "--tables",
                               (AssetsDir() / "tables").string()},
                              {"FAKE_WORKER_MEMORY_MB=4096"});
  ASSERT_NE(daemon, nullptr);
  auto health_stub = health::Health::NewStub(daemon->channel());
  const std::string before = Fingerprint(*daemon);
  ASSERT_THAT(before, ::testing::HasSubstr("NVIDIA H200"));

  const std::vector<Case> cases = Cases();
  std::set<std::string> names;
  int crashes = 0, changed = 0, wrong = 0;
  for (const Case& c : cases) {
    ASSERT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
    const grpc::Status status = c.call(*daemon);
    if (status.error_code() != c.code ||
        status.error_message().find(c.substring) == std::string::npos) {
      ++wrong;
      ADD_FAILURE() << c.name << ": got " << status.error_code() << " \""
                    << status.error_message().substr(0, 300) << "\", want " << c.code << " \""
                    << c.substring << "\"";
    }
    EXPECT_LE(status.error_message().size(), 20000u) << c.name;
    health::HealthCheckRequest request;
    request.set_service("cutune.v1.Tuner");
    health::HealthCheckResponse response;
    grpc::Status h = health_stub->Check(Context(std::chrono::seconds(5)).get(), request, &response);
    if (!h.ok() || response.status() != health::HealthCheckResponse::SERVING) {
      ++crashes;
      FAIL() << c.name << ": the daemon stopped answering health (" << h.error_message()
             << "); its log:\n" << daemon->log();
    }
    if (Fingerprint(*daemon) != before) {
      ++changed;
      ADD_FAILURE() << c.name << ": the stored state changed";
    }
  }
  std::cerr << "hostile requests: " << cases.size() << " tried, " << cases.size() - wrong
            << " with the documented code, " << crashes << " crashes, " << changed
            << " state changes\n";
  EXPECT_GE(cases.size(), 100u);
}

}  // namespace
}  // namespace cutune::service::testing
