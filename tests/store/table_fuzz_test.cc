// The table parser against mutated tables and random bytes, from a fixed seed and CI-sized:
// whatever the input, ParseTable and DiffTables return (never throw, never crash) OK or a
// refusal with a message; what they accept imports and answers lookups that can be launched.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "kernels/family.h"
#include "nlohmann/json.hpp"
#include "server/store/tables.h"
#include "tests/store/test_util.h"

namespace cutune::store {
namespace {

using Json = nlohmann::json;

constexpr int kMutations = 2000;
constexpr int kRandomInputs = 300;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Valid tables in every layout the parser sees: as shipped (pretty-printed) and compact.
std::vector<std::string> Seeds() {
  const std::filesystem::path root = CUTUNE_SOURCE_DIR;
  std::vector<std::string> seeds;
  for (const char* file : {"tests/client/assets/tables/h200_fixture.json",
                           "tests/client/assets/h200_fixture_slower.json",
                           "tests/service/assets/tables/fixture_h200.json",
                           "tables/nvidia-h200.json"}) {
    std::string text = ReadFile(root / file);
    EXPECT_FALSE(text.empty()) << file;
    if (text.empty()) continue;
    seeds.push_back(text);
    seeds.push_back(Json::parse(text).dump());
  }
  return seeds;
}

// `depth` nested arrays around a 1.
Json Deep(int depth) {
  Json j = 1;
  for (int i = 0; i < depth; ++i) j = Json::array({std::move(j)});
  return j;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // One to three edits of the parsed table, so the input gets past the syntax and into the
  // checks: a leaf replaced by a hostile value, removed, or its container given a stray member.
  std::string MutateStructure(const std::string& text) {
    Json j = Json::parse(text);
    const std::vector<Json> values = {
        0, -1, 1, 3, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
        std::numeric_limits<uint64_t>::max(), 1e308, -1e-308, 0.5, "", "x",
        std::string(3000, 'y'), "2025-02-30T00:00:00.000Z", "running", "conv", nullptr, true,
        Json::array(), Json::object(), Json::array({64, 64, 64}), Json::array({0, 64}),
        Json::object({{"vec", 0}}), Deep(100), Deep(30)};
    const int edits = 1 + static_cast<int>(Below(3));
    for (int e = 0; e < edits; ++e) {
      const Json flat = j.flatten();
      if (flat.empty()) break;
      auto leaf = flat.begin();
      std::advance(leaf, Below(flat.size()));
      const Json::json_pointer at(leaf.key());
      if (!j.contains(at)) continue;
      switch (Below(3)) {
        case 0:
          j[at] = values[Below(values.size())];
          break;
        case 1: {
          Json& parent = j[at.parent_pointer()];
          if (parent.is_object()) parent.erase(at.back());
          if (parent.is_array()) parent.erase(parent.begin() + Below(parent.size()));
          break;
        }
        case 2: {
          Json& parent = j[at.parent_pointer()];
          if (parent.is_object()) parent["stray"] = values[Below(values.size())];
          if (parent.is_array()) parent.push_back(parent.empty() ? Json(1) : parent[0]);
          break;
        }
      }
    }
    return Below(2) == 0 ? j.dump() : j.dump(2);
  }

  size_t Below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::string RandomBytes(size_t n) {
    std::string out(n, '\0');
    for (char& c : out) c = static_cast<char>(Below(256));
    return out;
  }

  // One to four edits of `text`, each of a kind that has broken JSON parsers.
  std::string Mutate(std::string text) {
    static const std::vector<std::string> kInserts = {
        std::string(200, '[') + std::string(200, ']'),
        std::string(100000, '['),
        std::string(3000, '{') ,
        "1e400", "-1e400", "1e-400", "18446744073709551616", "-9223372036854775809",
        "99999999999999999999999999999", "-0", "0.0", "NaN", "Infinity",
        "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\xc3\x28\"", "\"\xf0\x9f\x98\x80\"", "\"\xff\xfe\"",
        std::string("\"\0\"", 3), std::string(1, '\0'), "\"\\u0000\"",
        "null", "true", "[]", "{}", "\"\"", "[1,2,3]", "{\"a\":1}", "0", "-1",
        "9223372036854775807", "-9223372036854775808", "4294967296",
        ",", ":", "\"", "\\", "]", "}", "\"params\": {}", "\"vec\": 0", "\"tile\": 0",
        "\"shape\": [64,64,64]", "\"family\": \"conv\"", "\"version\": 2",
        "\"ties\": [{\"tile\": 32}]", "\"ties\": [{}]", "\"version\": 3",
        std::string(5000, 'x'), "\xef\xbb\xbf"};
    const int edits = 1 + static_cast<int>(Below(4));
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = Below(text.size());
      const size_t span = 1 + Below(std::min<size_t>(64, text.size() - at));
      switch (Below(8)) {
        case 0:  // flip bits of one byte
          text[at] = static_cast<char>(text[at] ^ (1 << Below(8)));
          break;
        case 1:  // truncate
          text.resize(at);
          break;
        case 2:  // delete a span
          text.erase(at, span);
          break;
        case 3:  // duplicate a span
          text.insert(at, text.substr(at, span));
          break;
        case 4:  // insert something hostile
          text.insert(at, kInserts[Below(kInserts.size())]);
          break;
        case 5: {  // replace a number with something else
          const size_t digit = text.find_first_of("0123456789", at);
          if (digit == std::string::npos) break;
          const size_t end = text.find_first_not_of("0123456789.eE+-", digit);
          text.replace(digit, (end == std::string::npos ? text.size() : end) - digit,
                       kInserts[Below(kInserts.size())]);
          break;
        }
        case 6:  // random bytes
          text.insert(at, RandomBytes(1 + Below(16)));
          break;
        case 7: {  // a value of the wrong type after a key
          const size_t colon = text.find(':', at);
          if (colon == std::string::npos) break;
          text.insert(colon + 1, kInserts[Below(kInserts.size())] + ",");
          break;
        }
      }
    }
    return text;
  }

 private:
  std::mt19937_64 rng_;
};

struct Tally {
  int ok = 0;
  int refused = 0;
};

void ExpectAnswered(const absl::Status& status, const std::string& what, Tally& tally) {
  if (status.ok()) {
    ++tally.ok;
    return;
  }
  ++tally.refused;
  EXPECT_TRUE(status.code() == absl::StatusCode::kInvalidArgument ||
              status.code() == absl::StatusCode::kResourceExhausted)
      << what << ": " << status;
  EXPECT_FALSE(status.message().empty()) << what;
  EXPECT_LE(status.message().size(), 2000u) << what;  // fits a gRPC status
}

// An accepted table imports, and its winners answer lookups whose launch can be computed (a
// zero divisor in the parameters would kill the process here).
void ImportAndLaunch(const std::string& text, const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ImportOptions options;
  options.known_families = {"transpose", "matmul"};
  options.validator = {kernels::ValidateProblem, kernels::ValidateParams,
                                    kernels::CanonicalParams};
  absl::StatusOr<ImportStats> stats = ImportTable(**store, text, options);
  // A table can parse but still conflict with the store: another compute capability for a
  // model listed twice under different names is impossible here, so only OK is expected.
  ASSERT_TRUE(stats.ok()) << stats.status();
  absl::StatusOr<std::vector<Winner>> winners = (*store)->ListWinners("");
  ASSERT_TRUE(winners.ok());
  for (const Winner& w : *winners) {
    const kernels::KernelFamily* family = kernels::FindFamily(w.family);
    ASSERT_NE(family, nullptr);
    const LookupQuery q{.device_model = w.device.name,
                        .family = w.family,
                        .shape = w.shape,
                        .current = {},
                        .family_default = family->baseline()};
    LookupResult answer = (*store)->Lookup(q);
    EXPECT_GT(family->Geometry(answer.winner.params, w.shape, 132).block[0], 0u);
  }
}

TEST(TableFuzzTest, MutatedTablesAreAnsweredNeverThrownOrCrashedOn) {
  const auto began = std::chrono::steady_clock::now();
  const std::vector<std::string> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  testing::TempDir dir;
  const std::set<std::string> families = {"transpose", "matmul"};
  const EntryValidator validator = {kernels::ValidateProblem, kernels::ValidateParams,
                                    kernels::CanonicalParams};
  Mutator mutator(20261201);
  Tally parsed, validated, diffed;
  int imports = 0;
  for (int i = 0; i < kMutations; ++i) {
    const std::string& seed = seeds[mutator.Below(seeds.size())];
    const std::string text = i % 2 == 0 ? mutator.Mutate(seed) : mutator.MutateStructure(seed);
    const std::string what = "mutation " + std::to_string(i);
    try {
      ExpectAnswered(ParseTable(text, {}).status(), what, parsed);
      absl::StatusOr<ImportBatch> batch = ParseTable(text, families, validator);
      ExpectAnswered(batch.status(), what, validated);
      ExpectAnswered(DiffTables(seed, text).status(), what, diffed);
      // Importing is slower (SQLite commits): every accepted mutation up to a bound.
      if (batch.ok() && imports < 100) {
        ImportAndLaunch(text, dir.File("import-" + std::to_string(imports++) + ".db"));
      }
    } catch (...) {
      ADD_FAILURE() << what << " threw";
    }
  }
  // The mutations reach both sides: some still parse, most are refused.
  EXPECT_GT(parsed.ok, 20);
  EXPECT_GT(parsed.refused, kMutations / 2);
  EXPECT_GT(imports, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  // How long it took is printed, not asserted: a shared machine's load decides it.
  std::printf("%d mutations: %d parsed, %d valid for the kernels, %d imported; %.1f s\n",
              kMutations, parsed.ok, validated.ok, imports, seconds);
}

TEST(TableFuzzTest, RandomBytesAreRefusedWithAMessage) {
  Mutator mutator(7);
  Tally tally;
  for (int i = 0; i < kRandomInputs; ++i) {
    std::string text = mutator.RandomBytes(mutator.Below(4096));
    // Half start like a table, so the parser gets past the first byte.
    if (i % 2 == 0) text = R"({"format": "cutune-table", "version": 1, "devices": [)" + text;
    const std::string what = "random input " + std::to_string(i);
    try {
      ExpectAnswered(ParseTable(text, {}).status(), what, tally);
      ExpectAnswered(DiffTables(text, text).status(), what, tally);
    } catch (...) {
      ADD_FAILURE() << what << " threw";
    }
  }
  EXPECT_EQ(tally.ok, 0);
}

}  // namespace
}  // namespace cutune::store
