// Tuning tables: deterministic export, byte-identical round trips, validation of malformed
// files (nothing changes, the error names where), merge policies and diffs.
#include "server/store/tables.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using testing::A100;
using testing::H200;
using ::testing::HasSubstr;
using testing::Ok;
using testing::Prov;
using testing::Rejected;
using testing::RunSweep;
using testing::TempDir;
using Json = nlohmann::json;

const std::set<std::string> kFamilies = {"transpose", "matmul"};

std::unique_ptr<Store> OpenStore(const TempDir& dir, const std::string& name) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir.File(name));
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

std::string Export(Store& store, bool rows = true, std::string model = "") {
  absl::StatusOr<std::string> text = ExportTable(store, {std::move(model), rows});
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// Two models, two families, odd figures (1/3 us) so rounding is exercised.
void Populate(Store& store) {
  Measurement third = Ok({{"tile", 32}, {"pad", 1}}, 100.0 / 3.0);
  third.tflops = 1.0 / 7.0;
  RunSweep(store, H200(), "transpose", {8192, 8192}, Prov(),
           {third, Ok({{"tile", 64}, {"pad", 0}}, 41.123456789),
            Rejected({{"tile", 256}, {"pad", 1}}, Outcome::kPruned, "shared memory > 227 KiB")});
  RunSweep(store, H200(), "transpose", {1024, 1024}, Prov(), {Ok({{"tile", 16}, {"pad", 1}}, 3.5)});
  RunSweep(store, H200(), "matmul", {4096, 4096, 4096}, {13000, "13.0", "hash-matmul", 2, ""},
           {Ok({{"bm", 128}, {"bn", 128}}, 2900.0),
            Rejected({{"bm", 256}, {"bn", 256}}, Outcome::kCompileFailed, "error: too big")});
  RunSweep(store, A100(), "transpose", {8192, 8192}, Prov(12080),
           {Ok({{"tile", 32}, {"pad", 1}}, 88.0)});
}

TEST(TablesTest, ExportIsDeterministicAndRoundTripsByteForByte) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  const std::string first = Export(*source);
  EXPECT_EQ(Export(*source), first);

  Json table = Json::parse(first);
  EXPECT_EQ(table["format"], "cutune-table");
  EXPECT_EQ(table["version"], 1);
  ASSERT_EQ(table["devices"].size(), 2u);
  EXPECT_EQ(table["devices"][0]["model"], "NVIDIA A100-SXM4-80GB");  // sorted by model
  const Json& h200 = table["devices"][1]["winners"];
  ASSERT_EQ(h200.size(), 3u);
  // Winners ordered by family, dtype, then shape numerically (1024 before 8192).
  EXPECT_EQ(h200[0]["family"], "matmul");
  EXPECT_EQ(h200[1]["shape"], Json({1024, 1024}));
  EXPECT_EQ(h200[2]["shape"], Json({8192, 8192}));
  EXPECT_EQ(h200[2]["time_us"].get<double>(), 33.3333);  // 6 significant digits
  EXPECT_EQ(h200[2]["params"], Json({{"pad", 1}, {"tile", 32}}));
  EXPECT_EQ(table["devices"][1]["sweeps"][2]["rows"].size(), 3u);

  std::unique_ptr<Store> copy = OpenStore(dir, "copy.db");
  absl::StatusOr<ImportStats> stats =
      ImportTable(*copy, first, {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->winners_added, 4);
  EXPECT_EQ(stats->sweeps_added, 4);
  EXPECT_EQ(stats->rows_added, 7);
  EXPECT_EQ(Export(*copy), first);

  // Winners only, one model.
  std::string h200_only = Export(*source, false, "NVIDIA H200");
  EXPECT_EQ(Json::parse(h200_only)["devices"].size(), 1u);
  EXPECT_FALSE(Json::parse(h200_only)["devices"][0].contains("sweeps"));
  EXPECT_EQ(ExportTable(*source, {"NVIDIA B200", false}).status().code(),
            absl::StatusCode::kNotFound);

  // Re-importing a store's own export is a no-op, even when conflicts are fatal.
  stats = ImportTable(*source, first, {kFamilies, MergePolicy::kFailOnConflict});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->winners_kept, 4);
  EXPECT_EQ(stats->winners_added + stats->winners_replaced, 0);
  EXPECT_EQ(stats->sweeps_skipped, 4);
  EXPECT_EQ(stats->rows_added, 0);

  // The imported table answers lookups on a machine that never ran a sweep.
  LookupQuery q;
  q.device_model = "NVIDIA H200";
  q.cc_major = 9;
  q.family = "transpose";
  q.shape = {8192, 8192};
  q.current = Prov();
  LookupResult hit = copy->Lookup(q);
  EXPECT_EQ(hit.rung, LookupRung::kExact);
  EXPECT_EQ(hit.winner.params, (Params{{"pad", 1}, {"tile", 32}}));
}

struct MalformedCase {
  std::string name;
  std::function<void(Json&)> mutate;
  std::string expected_in_message;
};

TEST(TablesTest, MalformedTablesChangeNothingAndSayWhere) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  const Json valid = Json::parse(Export(*source));

  const std::vector<MalformedCase> cases = {
      {"wrong format", [](Json& j) { j["format"] = "kernel-tuner-cache"; }, "table /format"},
      {"newer version", [](Json& j) { j["version"] = kTableVersion + 1; },
       "table /version: unsupported"},
      {"version 0", [](Json& j) { j["version"] = 0; }, "table /version: unsupported"},
      {"missing field", [](Json& j) { j["devices"][1]["winners"][0].erase("time_us"); },
       "/devices/1/winners/0/time_us: missing required field"},
      {"wrong type", [](Json& j) { j["devices"][1]["winners"][2]["time_us"] = "fast"; },
       "/devices/1/winners/2/time_us: expected a number, got \"fast\""},
      {"param not integer", [](Json& j) { j["devices"][0]["winners"][0]["params"]["tile"] = 32.5; },
       "/devices/0/winners/0/params/tile: expected an integer"},
      {"unknown family", [](Json& j) { j["devices"][0]["winners"][0]["family"] = "softmax"; },
       "/devices/0/winners/0/family: unknown kernel family \"softmax\""},
      {"duplicate winner",
       [](Json& j) {
         Json& w = j["devices"][1]["winners"];
         w.push_back(w[1]);
       },
       "/devices/1/winners/3: duplicate winner for transpose 1024x1024 f32"},
      {"duplicate device", [](Json& j) { j["devices"].push_back(j["devices"][0]); },
       "/devices/2/model: device model \"NVIDIA A100-SXM4-80GB\" is listed twice"},
      {"duplicate row",
       [](Json& j) {
         Json& rows = j["devices"][1]["sweeps"][2]["rows"];
         rows.push_back(rows[0]);
       },
       "/devices/1/sweeps/2/rows/3/params: candidate"},
      {"negative time", [](Json& j) { j["devices"][1]["winners"][0]["min_us"] = -1; },
       "/devices/1/winners/0/min_us: expected a number >= 0"},
      {"bad shape", [](Json& j) { j["devices"][1]["winners"][1]["shape"][1] = 0; },
       "/devices/1/winners/1/shape/1: expected a positive integer"},
      {"bad time",
       [](Json& j) { j["devices"][1]["winners"][1]["measured_at"] = "2025-02-30T00:00:00.000Z"; },
       "/devices/1/winners/1/measured_at: expected a UTC time"},
      {"unknown field", [](Json& j) { j["devices"][1]["winners"][1]["tiem_us"] = 1; },
       "/devices/1/winners/1/tiem_us: unknown field"},
      {"unknown outcome",
       [](Json& j) { j["devices"][1]["sweeps"][2]["rows"][1]["outcome"] = "meh"; },
       "/devices/1/sweeps/2/rows/1/outcome: unknown outcome"},
      {"running sweep", [](Json& j) { j["devices"][1]["sweeps"][0]["status"] = "running"; },
       "/devices/1/sweeps/0/status"},
      {"ties in a version-1 table",
       [](Json& j) { j["devices"][1]["winners"][0]["ties"] = Json::array({Json{{"bm", 64}}}); },
       "/devices/1/winners/0/ties: needs table version 2 (this table is version 1)"},
      {"ties not an array",
       [](Json& j) {
         j["version"] = 2;
         j["devices"][1]["winners"][0]["ties"] = 5;
       },
       "/devices/1/winners/0/ties: expected an array of parameter objects, got 5"},
      {"tie is the winner",
       [](Json& j) {
         j["version"] = 2;
         Json& w = j["devices"][1]["winners"][1];
         w["ties"] = Json::array({w["params"]});
       },
       "/devices/1/winners/1/ties/0: is the winner's own configuration"},
      {"tie twice",
       [](Json& j) {
         j["version"] = 2;
         j["devices"][1]["winners"][1]["ties"] =
             Json::array({Json{{"tile", 8}, {"pad", 0}}, Json{{"tile", 8}, {"pad", 0}}});
       },
       "/devices/1/winners/1/ties/1: configuration pad=0,tile=8 is listed twice (first at "
       "/devices/1/winners/1/ties/0)"},
      {"empty tie",
       [](Json& j) {
         j["version"] = 2;
         j["devices"][1]["winners"][1]["ties"] = Json::array({Json::object()});
       },
       "/devices/1/winners/1/ties/0: expected a non-empty object of integers"},
      {"tie not integer",
       [](Json& j) {
         j["version"] = 2;
         j["devices"][1]["winners"][1]["ties"] = Json::array({Json{{"tile", "x"}}});
       },
       "/devices/1/winners/1/ties/0/tile: expected an integer"},
      {"ok row without samples",
       [](Json& j) {
         Json& row = j["devices"][1]["sweeps"][2]["rows"][0];
         ASSERT_EQ(row["outcome"], "ok");
         row["samples"] = 0;
       },
       "/devices/1/sweeps/2/rows/0/samples: must be in [1,"},
  };

  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Store> target =
        OpenStore(dir, "target-" + std::to_string(&c - &cases[0]) + ".db");
    // A winner that the bad table's valid entries would replace: it must survive.
    RunSweep(*target, H200(), "transpose", {8192, 8192}, Prov(),
             {Ok({{"tile", 8}, {"pad", 0}}, 999.0)});
    const std::string before = Export(*target);
    Json bad = valid;
    c.mutate(bad);
    absl::StatusOr<ImportStats> stats =
        ImportTable(*target, bad.dump(2), {kFamilies, MergePolicy::kKeepFaster});
    ASSERT_FALSE(stats.ok());
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument) << stats.status();
    EXPECT_THAT(std::string(stats.status().message()), HasSubstr(c.expected_in_message));
    EXPECT_EQ(Export(*target), before);
  }
}

TEST(TablesTest, SyntaxErrorsAndRepeatedKeysAreLocated) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir, "s.db");
  absl::StatusOr<ImportStats> stats = ImportTable(
      *store, "{\n  \"format\": \"cutune-table\",\n  \"version\": 1,\n  \"devices\": [,]\n}\n",
      {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("line 4, column 15"));

  stats = ImportTable(*store,
                      R"({"format": "cutune-table", "version": 1,
                          "devices": [{"model": "X", "model": "Y"}]})",
                      {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stats.status().message()),
              HasSubstr("/devices/0/model: key appears twice"));

  stats = ImportTable(*store, "[]", {kFamilies, MergePolicy::kKeepFaster});
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
}

void ExpectInvalid(const absl::Status& status, const std::string& expected_in_message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(expected_in_message));
}

TEST(TablesTest, DeepNestingIsRefusedWhereItStartsWithoutRecursing) {
  // 100000 levels: describing or printing this recursively overflows the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ExpectInvalid(ParseTable(deep, kFamilies).status(), "table /0/0/0/0/0/0/0/0/0/0/0/0/0/0/0");
  ExpectInvalid(ParseTable(deep, kFamilies).status(), "nested more than 64 levels deep");
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir, "s.db");
  ExpectInvalid(ImportTable(*store, deep, {kFamilies, MergePolicy::kKeepFaster}).status(),
                "nested more than 64 levels deep");
  ExpectInvalid(DiffTables(deep, deep).status(), "A: table /0/0/0");

  // Inside a table, the pointer names the member that starts it.
  const std::string in_field = R"({"format": "cutune-table", "version": 1, "devices": [{"model": )" +
                               std::string(5000, '[') + std::string(5000, ']') + "}]}";
  ExpectInvalid(ParseTable(in_field, kFamilies).status(),
                "table /devices/0/model/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0");
  // A table nests 8 levels; 64 are allowed, and a shallower wrong value is only described.
  const std::string shallow = R"({"format": "cutune-table", "version": 1, "devices": [{"model": )" +
                              std::string(60, '[') + std::string(60, ']') + "}]}";
  ExpectInvalid(ParseTable(shallow, kFamilies).status(), "missing required field");
}

TEST(TablesTest, WrongContainersAreDescribedNotPrinted) {
  ExpectInvalid(
      ParseTable(R"({"format": "cutune-table", "version": [1, [2], {"a": 3}]})", kFamilies)
          .status(),
      "table /version: unsupported table version (this cutune reads versions 1 to 7), "
      "got an array of 3 elements");
  ExpectInvalid(ParseTable(R"({"format": "cutune-table", "version": 1,
                               "devices": {"a": [[[]]], "b": 2}})",
                           kFamilies)
                    .status(),
                "table /devices: expected an array, got an object with 2 keys");
  // Scalars are shown, cut at a character boundary: the quote, "a" and 17 two-byte
  // characters are 36 bytes, and the 18th would not fit in 37.
  std::string cut = "got \"a";
  for (int i = 0; i < 17; ++i) cut += "é";
  cut += "...";
  absl::Status long_string =
      ParseTable(R"({"format": "cutune-table", "version": "aééééééééééééééééééééééééé"})",
                 kFamilies)
          .status();
  ExpectInvalid(long_string, cut);
  EXPECT_TRUE(absl::EndsWith(long_string.message(), cut)) << long_string;
}

TEST(TablesTest, NumbersOutOfRangeAreInvalidArgumentAtTheirPointer) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  // Compact, so that the edits below do not depend on the export's layout.
  const std::string valid = Json::parse(Export(*source, /*rows=*/false)).dump();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = valid;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  };
  // The first winner's time (A100, transpose 8192x8192, 88 us), overflowing a double.
  std::string overflow = with("\"time_us\":88.0", "\"time_us\":1e400");
  ExpectInvalid(ParseTable(overflow, kFamilies).status(), "table /devices/0/winners/0/time_us: ");
  ExpectInvalid(ParseTable(overflow, kFamilies).status(), "number overflow parsing '1e400'");
  std::unique_ptr<Store> target = OpenStore(dir, "target.db");
  ExpectInvalid(ImportTable(*target, overflow, {kFamilies, MergePolicy::kKeepFaster}).status(),
                "table /devices/0/winners/0/time_us: ");
  ExpectInvalid(DiffTables(valid, overflow).status(), "B: table /devices/0/winners/0/time_us: ");
  ExpectInvalid(ParseTable("-1e400", kFamilies).status(), "table /: ");

  // Integers beyond int64 are refused by range, never wrapped.
  ExpectInvalid(ParseTable(with("\"version\":1", "\"version\":18446744073709551617"), kFamilies)
                    .status(),
                "table /version: unsupported table version");
  ExpectInvalid(ParseTable(with("\"version\":1", "\"version\":18446744073709551615"), kFamilies)
                    .status(),
                "table /version: unsupported table version");
  ExpectInvalid(
      ParseTable(with("\"shape\":[8192,8192]", "\"shape\":[8192,9223372036854775808]"), kFamilies)
          .status(),
      "table /devices/0/winners/0/shape/1: must be at most 9223372036854775807");
  ExpectInvalid(ParseTable(with("\"tile\":32", "\"tile\":18446744073709551615"), kFamilies).status(),
                "table /devices/0/winners/0/params/tile: must be at most 9223372036854775807");
  ExpectInvalid(
      ParseTable(with("\"cc_major\":8", "\"cc_major\":18446744073709551615"), kFamilies).status(),
      "table /devices/0/cc_major: must be at most 99");
}

TEST(TablesTest, OversizedInputIsRefusedUnread) {
  EXPECT_EQ(kMaxTableBytes, size_t{64} << 20);
  const std::string huge(kMaxTableBytes + 1, ' ');
  ExpectInvalid(ParseTable(huge, kFamilies).status(),
                "the table is 64.0 MiB, more than the 64 MiB a table may have");
  ExpectInvalid(DiffTables(huge, "{}").status(), "A: the table is 64.0 MiB");
}

TEST(TablesTest, ExportPutsEachWinnerAndRowOnOneLine) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  const std::string text = Export(*source);
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  ASSERT_EQ(lines.back(), "");  // a final newline
  lines.pop_back();
  // The outer structure keeps one member per line, two spaces per level.
  EXPECT_EQ(lines[0], "{");
  EXPECT_EQ(lines[1], "  \"devices\": [");
  EXPECT_EQ(lines[2], "    {");
  EXPECT_EQ(lines[3], "      \"cc_major\": 8,");
  EXPECT_EQ(lines.back(), "}");
  // Every winner (4) and every row (7) is one compact line of its own, keys sorted.
  int entries = 0;
  for (const std::string& line : lines) {
    const size_t start = line.find_first_not_of(' ');
    if (line.compare(start, 14, "{\"compile_ms\":") != 0) continue;
    ++entries;
    std::string entry = line.substr(start);
    if (entry.back() == ',') entry.pop_back();
    Json parsed = Json::parse(entry);
    EXPECT_EQ(parsed.dump(), entry);
  }
  EXPECT_EQ(entries, 4 + 7);
  // Shapes and references stay on their member's line.
  EXPECT_THAT(text, HasSubstr("\n          \"shape\": [8192,8192],\n"));
  EXPECT_THAT(text,
              HasSubstr("\n          \"reference\": {\"name\":\"device copy\",\"time_us\":50.0},\n"));
  EXPECT_EQ(Json::parse(text), Json::parse(Json::parse(text).dump(2)));
  EXPECT_LT(text.size() * 10, Json::parse(text).dump(2).size() * 7);

  // Tables written pretty-printed (the layout before) import to the same data.
  std::unique_ptr<Store> copy = OpenStore(dir, "copy.db");
  absl::StatusOr<ImportStats> stats =
      ImportTable(*copy, Json::parse(text).dump(2), {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(Export(*copy), text);
}

TEST(TablesTest, ExportReplacesInvalidUtf8InStoredText) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  // A compiler message is stored as it came; it need not be UTF-8.
  RunSweep(*source, H200(), "transpose", {1024, 1024}, Prov(),
           {Ok({{"tile", 16}}, 3.5),
            Rejected({{"tile", 64}}, Outcome::kCompileFailed, "error at \xff\xfe here")});
  const std::string text = Export(*source);
  EXPECT_THAT(text, HasSubstr("error at \xef\xbf\xbd\xef\xbf\xbd here"));  // U+FFFD twice
  std::unique_ptr<Store> copy = OpenStore(dir, "copy.db");
  absl::StatusOr<ImportStats> stats = ImportTable(*copy, text, {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(Export(*copy), text);
}

TEST(TablesTest, ExportOverTheSizeLimitIsResourceExhausted) {
  TempDir dir;
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  const size_t size = Export(*source).size();
  ExportOptions options;
  options.include_rows = true;
  options.max_bytes = size - 1;
  absl::StatusOr<std::string> text = ExportTable(*source, options);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(text.status().message()),
              HasSubstr(absl::StrCat("the table is ", size, " bytes, more than the ", size - 1,
                                     " bytes a table may have; export one device model or "
                                     "without rows")));
  options.max_bytes = size;
  EXPECT_TRUE(ExportTable(*source, options).ok());
  EXPECT_EQ(ExportOptions().max_bytes, kMaxTableBytes);
}

// A one-winner table for H200 transpose 8192x8192 with the given figures.
std::string OneWinner(int tile, double time_us, const std::string& measured_at,
                      const std::string& model = "NVIDIA H200", int cc_major = 9) {
  Json w{{"family", "transpose"},
         {"dtype", "f32"},
         {"shape", {8192, 8192}},
         {"params", {{"tile", tile}}},
         {"detail", ""},
         {"resources",
          {{"registers", 32},
           {"static_shared_bytes", 4224},
           {"stack_bytes", 0},
           {"spill_store_bytes", 0},
           {"spill_load_bytes", 0},
           {"constant_bytes", 0}}},
         {"samples", 20},
         {"time_us", time_us},
         {"min_us", time_us},
         {"rel_spread", 0.01},
         {"gbps", 3000},
         {"tflops", 0},
         {"percent_of_reference", 90},
         {"compile_ms", 60},
         {"reference", {{"name", "device copy"}, {"time_us", 150}}},
         {"measured_at", measured_at},
         {"source_hash", "hash-transpose-1"},
         {"space_version", 1},
         {"driver_version", 13000},
         {"nvrtc_version", "13.0"}};
  Json table{{"format", "cutune-table"},
             {"version", 1},
             {"devices",
              {{{"model", model},
                {"cc_major", cc_major},
                {"cc_minor", 0},
                {"sm_count", 132},
                {"total_memory_bytes", 150LL << 30},
                {"winners", {w}}}}}};
  return table.dump();
}

Params WinnerParams(Store& store) {
  absl::StatusOr<std::vector<Winner>> winners = store.ListWinners("NVIDIA H200");
  EXPECT_TRUE(winners.ok());
  EXPECT_EQ(winners->size(), 1u);
  return winners->empty() ? Params{} : winners->front().measurement.params;
}

TEST(TablesTest, TiesTravelInVersion2TablesOnly) {
  TempDir dir;
  // Nothing tied: version 1, no "ties" anywhere (what an older cutune reads).
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  Populate(*source);
  const std::string plain = Export(*source);
  EXPECT_EQ(Json::parse(plain)["version"], 1);
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("ties")));

  // A version-2 table whose winner lists its ties out of order.
  Json table = Json::parse(OneWinner(32, 100.0, "2025-03-01T10:00:00.000Z"));
  table["version"] = 2;
  table["devices"][0]["winners"][0]["ties"] =
      Json::array({Json{{"tile", 64}}, Json{{"tile", 16}}});
  std::unique_ptr<Store> copy = OpenStore(dir, "copy.db");
  ASSERT_TRUE(ImportTable(*copy, table.dump(), {kFamilies, MergePolicy::kKeepFaster}).ok());
  absl::StatusOr<std::vector<Winner>> winners = copy->ListWinners("NVIDIA H200");
  ASSERT_TRUE(winners.ok());
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ(winners->front().ties,
            (std::vector<Params>{{{"tile", 16}}, {{"tile", 64}}}));  // canonical order

  // Exported as version 2, the ties in canonical order on the winner's one line.
  const std::string exported = Export(*copy, false);
  EXPECT_EQ(Json::parse(exported)["version"], 2);
  EXPECT_THAT(exported,
              HasSubstr(R"("tflops":0.0,"ties":[{"tile":16},{"tile":64}],"time_us":100.0})"));
  std::unique_ptr<Store> again = OpenStore(dir, "again.db");
  ASSERT_TRUE(ImportTable(*again, exported, {kFamilies, MergePolicy::kKeepFaster}).ok());
  EXPECT_EQ(Export(*again, false), exported);

  // An empty list is the same as none.
  table["devices"][0]["winners"][0]["ties"] = Json::array();
  absl::StatusOr<ImportBatch> batch = ParseTable(table.dump(), kFamilies);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE(batch->winners[0].ties.empty());
}

TEST(TablesTest, TimingTravelsInVersion7TablesOnly) {
  TempDir dir;
  // Nothing recorded: no "timing" and no version 7 (what an older cutune reads).
  std::unique_ptr<Store> plain = OpenStore(dir, "plain.db");
  Populate(*plain);
  EXPECT_THAT(Export(*plain), ::testing::Not(HasSubstr("timing")));

  Provenance held = Prov();
  held.timing = std::string(kTimingHeld);
  std::unique_ptr<Store> source = OpenStore(dir, "source.db");
  RunSweep(*source, H200(), "transpose", {8192, 8192}, held, {Ok({{"tile", 32}}, 40.0)});
  const std::string exported = Export(*source);
  Json table = Json::parse(exported);
  EXPECT_EQ(table["version"], 7);
  EXPECT_EQ(table["devices"][0]["winners"][0]["timing"], "held");
  EXPECT_EQ(table["devices"][0]["sweeps"][0]["timing"], "held");
  std::unique_ptr<Store> copy = OpenStore(dir, "copy.db");
  ASSERT_TRUE(ImportTable(*copy, exported, {kFamilies, MergePolicy::kKeepFaster}).ok());
  absl::StatusOr<std::vector<Winner>> winners = copy->ListWinners("NVIDIA H200");
  ASSERT_TRUE(winners.ok());
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ(winners->front().provenance.timing, "held");
  absl::StatusOr<std::vector<SweepInfo>> sweeps = copy->ListSweeps();
  ASSERT_TRUE(sweeps.ok());
  ASSERT_EQ(sweeps->size(), 1u);
  EXPECT_EQ(sweeps->front().provenance.timing, "held");
  EXPECT_EQ(Export(*copy), exported);

  // Before version 7, or an unknown method: refused where it is, nothing imported.
  Json old = table;
  old["version"] = 6;
  std::unique_ptr<Store> empty = OpenStore(dir, "empty.db");
  absl::StatusOr<ImportStats> refused =
      ImportTable(*empty, old.dump(), {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("/devices/0/winners/0/timing: needs table version 7"));
  Json odd = table;
  odd["devices"][0]["sweeps"][0]["timing"] = "fast";
  refused = ImportTable(*empty, odd.dump(), {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr(R"(/devices/0/sweeps/0/timing: expected "held" or "idle", got "fast")"));
  absl::StatusOr<std::vector<Winner>> none = empty->ListWinners("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(TablesTest, DiffComparesNoTimesAcrossTimingMethods) {
  Json a = Json::parse(OneWinner(32, 100.0, "2025-03-01T10:00:00.000Z"));
  a["version"] = 7;
  a["devices"][0]["winners"][0]["timing"] = "idle";
  Json b = a;
  b["devices"][0]["winners"][0]["timing"] = "held";
  b["devices"][0]["winners"][0]["time_us"] = 130.0;  // 30% slower, timed another way
  absl::StatusOr<TableDiff> diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_EQ(diff->entries.size(), 1u);
  EXPECT_TRUE(diff->entries[0].TimingChanged());
  EXPECT_EQ(diff->entries[0].timing_a, "idle");
  EXPECT_EQ(diff->entries[0].timing_b, "held");
  EXPECT_TRUE(diff->Regressions(5.0).empty());
  EXPECT_FALSE(diff->HasChanges());  // the same winner
  EXPECT_THAT(diff->ToText(), HasSubstr("| same | tile=32 | 100 -> 130 us (+30.00%) | timing idle "
                                        "-> held: times not compared"));
  // Timed alike, the same 30% is a regression.
  a["devices"][0]["winners"][0]["timing"] = "held";
  diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_FALSE(diff->entries[0].TimingChanged());
  EXPECT_EQ(diff->Regressions(5.0).size(), 1u);
  // A table from before timing was recorded against one that records it: not compared either.
  a["version"] = 6;
  a["devices"][0]["winners"][0].erase("timing");
  diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_TRUE(diff->Regressions(5.0).empty());
  EXPECT_THAT(diff->ToText(), HasSubstr("timing unrecorded -> held: times not compared"));
}

TEST(TablesTest, MergePolicies) {
  TempDir dir;
  const std::string base = OneWinner(32, 170.0, "2025-03-01T10:00:00.000Z");
  const std::string faster_older = OneWinner(64, 160.0, "2025-02-01T10:00:00.000Z");
  const std::string slower_newer = OneWinner(16, 180.0, "2025-04-01T10:00:00.000Z");

  std::unique_ptr<Store> faster = OpenStore(dir, "faster.db");
  ASSERT_TRUE(ImportTable(*faster, base, {kFamilies, MergePolicy::kKeepFaster}).ok());
  absl::StatusOr<ImportStats> s =
      ImportTable(*faster, slower_newer, {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->winners_kept, 1);
  EXPECT_EQ(WinnerParams(*faster), (Params{{"tile", 32}}));
  s = ImportTable(*faster, faster_older, {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->winners_replaced, 1);
  EXPECT_EQ(WinnerParams(*faster), (Params{{"tile", 64}}));

  std::unique_ptr<Store> newer = OpenStore(dir, "newer.db");
  ASSERT_TRUE(ImportTable(*newer, base, {kFamilies, MergePolicy::kKeepNewer}).ok());
  s = ImportTable(*newer, faster_older, {kFamilies, MergePolicy::kKeepNewer});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->winners_kept, 1);
  EXPECT_EQ(WinnerParams(*newer), (Params{{"tile", 32}}));
  s = ImportTable(*newer, slower_newer, {kFamilies, MergePolicy::kKeepNewer});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->winners_replaced, 1);
  EXPECT_EQ(WinnerParams(*newer), (Params{{"tile", 16}}));

  std::unique_ptr<Store> strict = OpenStore(dir, "strict.db");
  ASSERT_TRUE(ImportTable(*strict, base, {kFamilies, MergePolicy::kFailOnConflict}).ok());
  // A table that adds a new model AND conflicts on the existing key: nothing is applied.
  Json mixed = Json::parse(faster_older);
  Json other = Json::parse(OneWinner(8, 300.0, "2025-02-01T10:00:00.000Z", "NVIDIA L40S", 8));
  mixed["devices"].insert(mixed["devices"].begin(), other["devices"][0]);
  s = ImportTable(*strict, mixed.dump(), {kFamilies, MergePolicy::kFailOnConflict});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("conflict at /devices/1/winners/0"));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("tile=32"));
  EXPECT_EQ(WinnerParams(*strict), (Params{{"tile", 32}}));
  absl::StatusOr<std::vector<DeviceModel>> models = strict->ListDeviceModels();
  ASSERT_TRUE(models.ok());
  EXPECT_EQ(models->size(), 1u);  // the L40S was rolled back too
}

TEST(TablesTest, KeepFasterKeepsTheCanonicallyFirstOfATie) {
  // OneWinner's rows have a 1% spread: 170 and 171 are a tie, 160 is not.
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir, "tie.db");
  ASSERT_TRUE(ImportTable(*store, OneWinner(32, 170.0, "2025-03-01T10:00:00.000Z"),
                          {kFamilies, MergePolicy::kKeepFaster})
                  .ok());
  // Faster by 0.6%, but tied and tile=64 comes after tile=32: kept.
  absl::StatusOr<ImportStats> s =
      ImportTable(*store, OneWinner(64, 169.0, "2025-04-01T10:00:00.000Z"),
                  {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->winners_kept, 1);
  EXPECT_EQ(WinnerParams(*store), (Params{{"tile", 32}}));
  // Slower by 0.6%, but tied and tile=16 comes first: replaced.
  s = ImportTable(*store, OneWinner(16, 171.0, "2025-04-01T10:00:00.000Z"),
                  {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->winners_replaced, 1);
  EXPECT_EQ(WinnerParams(*store), (Params{{"tile", 16}}));
  // Faster beyond the tie: replaced whatever the order.
  s = ImportTable(*store, OneWinner(128, 160.0, "2025-04-01T10:00:00.000Z"),
                  {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->winners_replaced, 1);
  EXPECT_EQ(WinnerParams(*store), (Params{{"tile", 128}}));

  // KEEP_NEWER ignores ties: the later measurement wins.
  std::unique_ptr<Store> newer = OpenStore(dir, "newer.db");
  ASSERT_TRUE(ImportTable(*newer, OneWinner(16, 170.0, "2025-03-01T10:00:00.000Z"),
                          {kFamilies, MergePolicy::kKeepNewer})
                  .ok());
  s = ImportTable(*newer, OneWinner(64, 170.5, "2025-04-01T10:00:00.000Z"),
                  {kFamilies, MergePolicy::kKeepNewer});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(WinnerParams(*newer), (Params{{"tile", 64}}));
}

TEST(TablesTest, DiffCallsAWinnerChangedToATiedConfigurationATie) {
  // Four keys, tile=32 at 100 us (1% spread) in A; in B another configuration each time.
  Json a = Json::parse(OneWinner(32, 100.0, "2025-03-01T10:00:00.000Z"));
  a["version"] = 2;
  Json& winners_a = a["devices"][0]["winners"];
  for (int64_t size : {1024, 2048, 4096}) {
    Json w = winners_a[0];
    w["shape"] = {size, size};
    winners_a.push_back(w);
  }
  Json b = a;
  Json& winners_b = b["devices"][0]["winners"];
  for (Json& w : winners_b) w["params"] = {{"tile", 64}};
  // 1024: A lists tile=64 among its ties, though B's time is 10% better.
  winners_a[1]["ties"] = Json::array({Json{{"tile", 64}}});
  winners_b[1]["time_us"] = 90.0;
  // 2048: B lists tile=32 among its ties.
  winners_b[2]["ties"] = Json::array({Json{{"tile", 32}}});
  winners_b[2]["time_us"] = 90.0;
  // 4096: no list, but the times are within the spread.
  winners_b[3]["time_us"] = 100.5;
  // 8192: neither listed nor tied: a real change.
  winners_b[0]["time_us"] = 90.0;

  absl::StatusOr<TableDiff> diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_EQ(diff->entries.size(), 4u);
  using Change = TableDiffEntry::Change;
  using Basis = TableDiffEntry::TieBasis;
  EXPECT_EQ(diff->entries[0].change, Change::kTie);
  EXPECT_EQ(diff->entries[0].tie_basis, Basis::kInTiesOfA);
  EXPECT_EQ(diff->entries[1].change, Change::kTie);
  EXPECT_EQ(diff->entries[1].tie_basis, Basis::kInTiesOfB);
  EXPECT_EQ(diff->entries[2].change, Change::kTie);
  EXPECT_EQ(diff->entries[2].tie_basis, Basis::kTimesTied);
  EXPECT_EQ(diff->entries[3].change, Change::kWinnerChanged);
  EXPECT_EQ(diff->entries[3].tie_basis, Basis::kNone);
  EXPECT_TRUE(diff->HasChanges());  // the 8192 key

  const std::string text = diff->ToText();
  EXPECT_THAT(text, HasSubstr("4 keys: 0 same winner, 3 tied, 1 winner changed, 0 only in A, "
                              "0 only in B\n"));
  EXPECT_THAT(text, HasSubstr("transpose f32 1024x1024 | tie | tile=32 -> tile=64 | "
                              "100 -> 90 us (-10.00%) | in A's ties\n"));
  EXPECT_THAT(text, HasSubstr("2048x2048 | tie | tile=32 -> tile=64 | 100 -> 90 us (-10.00%) | "
                              "in B's ties\n"));
  EXPECT_THAT(text, HasSubstr("4096x4096 | tie | tile=32 -> tile=64 | 100 -> 100.5 us (+0.50%) | "
                              "times tied\n"));
  EXPECT_THAT(text, HasSubstr("8192x8192 | winner_changed | tile=32 -> tile=64 | "
                              "100 -> 90 us (-10.00%)\n"));

  // Without the real change, the tables do not differ.
  winners_b[0] = winners_a[0];
  diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_FALSE(diff->HasChanges());
  // A slower tie still counts as a regression under a threshold it exceeds: the threshold is
  // about time, whatever the configuration.
  EXPECT_EQ(diff->Regressions(0.4).size(), 1u);
  EXPECT_TRUE(diff->Regressions(1.0).empty());
}

TEST(TablesTest, ComputeCapabilityMismatchIsRefused) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir, "s.db");
  ASSERT_TRUE(store->UpsertDevice(H200(), 13000).ok());
  absl::StatusOr<ImportStats> s =
      ImportTable(*store, OneWinner(32, 1.0, "2025-03-01T10:00:00.000Z", "NVIDIA H200", 8),
                  {kFamilies, MergePolicy::kKeepFaster});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("compute capability 8.0"));
}

TEST(TablesTest, DiffReportsChangedWinnersTimesAndOneSidedKeys) {
  Json a = Json::parse(OneWinner(32, 100.0, "2025-03-01T10:00:00.000Z"));
  Json b = a;
  Json& wb = b["devices"][0]["winners"][0];
  wb["time_us"] = 110.0;  // same winner, 10% slower
  Json changed = a["devices"][0]["winners"][0];
  changed["shape"] = {4096, 4096};
  a["devices"][0]["winners"].push_back(changed);
  changed["params"] = {{"tile", 64}};
  changed["time_us"] = 80.0;
  changed["source_hash"] = "hash-transpose-2";
  b["devices"][0]["winners"].push_back(changed);
  Json only_a = a["devices"][0]["winners"][0];
  only_a["shape"] = {1024, 1024};
  a["devices"][0]["winners"].push_back(only_a);
  Json only_b = a["devices"][0]["winners"][0];
  only_b["shape"] = {2048, 2048};
  b["devices"][0]["winners"].push_back(only_b);

  absl::StatusOr<TableDiff> diff = DiffTables(a.dump(), b.dump());
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_EQ(diff->entries.size(), 4u);
  // Sorted by key: 1024, 2048, 4096, 8192.
  EXPECT_EQ(diff->entries[0].change, TableDiffEntry::Change::kOnlyInA);
  EXPECT_EQ(diff->entries[1].change, TableDiffEntry::Change::kOnlyInB);
  const TableDiffEntry& swapped = diff->entries[2];
  EXPECT_EQ(swapped.change, TableDiffEntry::Change::kWinnerChanged);
  EXPECT_EQ(swapped.params_b, (Params{{"tile", 64}}));
  EXPECT_DOUBLE_EQ(swapped.time_change_percent, -20.0);
  EXPECT_TRUE(swapped.source_hash_changed);
  const TableDiffEntry& slower = diff->entries[3];
  EXPECT_EQ(slower.change, TableDiffEntry::Change::kSame);
  EXPECT_EQ(slower.time_change_percent, 10.0);  // six significant digits

  std::vector<const TableDiffEntry*> regressions = diff->Regressions(5.0);
  ASSERT_EQ(regressions.size(), 1u);
  EXPECT_EQ(regressions[0]->shape, (Shape{8192, 8192}));
  EXPECT_TRUE(diff->Regressions(15.0).empty());

  const std::string text = diff->ToText();
  EXPECT_THAT(text, HasSubstr("4 keys: 1 same winner, 0 tied, 1 winner changed, 1 only in A, "
                              "1 only in B"));
  EXPECT_THAT(text, HasSubstr("transpose f32 4096x4096 | winner_changed | tile=32 -> tile=64 | "
                              "100 -> 80 us (-20.00%) | source changed"));
  EXPECT_THAT(text, HasSubstr("8192x8192 | same | tile=32 | 100 -> 110 us (+10.00%)"));
  EXPECT_FALSE(diff->entries[0].params_b.has_value());
  EXPECT_EQ(swapped.tie_basis, TableDiffEntry::TieBasis::kNone);
  EXPECT_TRUE(diff->HasChanges());

  absl::StatusOr<TableDiff> bad = DiffTables(a.dump(), "{}");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("B: table /format"));
}

}  // namespace
}  // namespace cutune::store
