// The tuning tables shipped in tables/ must import into the current code and describe the
// current kernels: a kernel change that makes them stale fails here, until they are measured
// again on the GPU (scripts/gpu-session.sh) and re-exported.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/store/tables.h"

namespace cutune::store {
namespace {

TEST(ShippedTablesTest, ImportAndMatchTheCurrentKernels) {
  std::set<std::string> families;
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) families.insert(std::string(f->name()));
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CUTUNE_TABLES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++tables;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto batch = ParseTable(text.str(), families);
    ASSERT_TRUE(batch.ok()) << entry.path() << ": " << batch.status();
    EXPECT_FALSE(batch->winners.empty()) << entry.path();
    for (const Winner& w : batch->winners) {
      const kernels::KernelFamily* family = kernels::FindFamily(w.family);
      ASSERT_NE(family, nullptr);
      EXPECT_EQ(w.provenance.source_hash, family->source_hash())
          << entry.path() << ": " << w.family << " " << FormatShape(w.shape)
          << " was tuned for another kernel source; measure and export the table again";
      EXPECT_EQ(w.provenance.space_version, family->space_version()) << entry.path();
      EXPECT_FALSE(family->default_space().Violation(w.measurement.params).has_value())
          << FormatParams(w.measurement.params);
      EXPECT_TRUE(family->default_space().Check(w.measurement.params, /*strict=*/true).ok())
          << FormatParams(w.measurement.params);
    }
  }
  EXPECT_GT(tables, 0) << "no table in " << CUTUNE_TABLES_DIR;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shipped tables and every fixture meant to be a valid table pass the daemon's import
// checks, the kernel spaces included (the daemons in the service and CLI tests import them).
TEST(ShippedTablesTest, TablesAndValidFixturesPassTheSpaceCheck) {
  const std::filesystem::path root = CUTUNE_SOURCE_DIR;
  std::vector<std::filesystem::path> files = {root / "tests/client/assets/h200_fixture_slower.json"};
  for (const char* dir : {"tables", "tests/service/assets/tables", "tests/client/assets/tables"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::set<std::string> families;
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) families.insert(std::string(f->name()));
  const EntryValidator validator = {kernels::ValidateProblem, kernels::ValidateParams,
                                    kernels::CanonicalParams};
  for (const std::filesystem::path& file : files) {
    absl::StatusOr<ImportBatch> batch = ParseTable(ReadFile(file), families, validator);
    EXPECT_TRUE(batch.ok()) << file << ": " << batch.status();
  }
  EXPECT_GE(files.size(), 4u);
  // bad_table.json is meant to be refused, for its missing field.
  absl::StatusOr<ImportBatch> bad =
      ParseTable(ReadFile(root / "tests/client/assets/bad_table.json"), families, validator);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("/devices/0/winners/1/time_us: missing required field"));
}

}  // namespace
}  // namespace cutune::store
