// Compile pool: parallel results equal serial ones; the destructor finishes queued work.
#include "server/compiler/pool.h"

#include <stdlib.h>

#include <filesystem>
#include <future>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/test_util.h"

namespace cutune::compiler {
namespace {

using testing::SameUsage;

std::vector<CompileRequest> Requests(int count) {
  std::vector<CompileRequest> requests;
  for (int i = 0; i < count; ++i) {
    // Different constants give different cubins, so a mix-up between futures would show.
    requests.push_back({.source = absl::StrCat(testing::kAddKernel,
                                               "extern \"C\" __global__ void scale(float* a) { "
                                               "a[threadIdx.x] *= ",
                                               i, ".5f; }\n"),
                        .arch = i % 2 == 0 ? "sm_90" : "sm_80"});
  }
  requests.push_back({.source = testing::kBrokenKernel});
  requests.push_back({.source = testing::kAddKernel, .options = {"--no-such-option"}});
  return requests;
}

TEST(CompilePoolTest, ManySubmissionsMatchSerialResults) {
  const std::vector<CompileRequest> requests = Requests(12);
  CachingCompiler serial_compiler;
  std::vector<absl::StatusOr<CompileResult>> serial;
  for (const CompileRequest& request : requests) serial.push_back(serial_compiler.Compile(request));

  CachingCompiler pooled_compiler;
  CompilePool pool(pooled_compiler, 4);
  EXPECT_EQ(pool.threads(), 4);
  std::vector<std::future<absl::StatusOr<CompileResult>>> futures;
  for (const CompileRequest& request : requests) futures.push_back(pool.Submit(request));

  for (size_t i = 0; i < requests.size(); ++i) {
    absl::StatusOr<CompileResult> pooled = futures[i].get();
    ASSERT_EQ(pooled.status().code(), serial[i].status().code()) << i;
    if (!pooled.ok()) continue;
    EXPECT_EQ(pooled->ok, serial[i]->ok) << i;
    EXPECT_EQ(pooled->key, serial[i]->key) << i;
    EXPECT_EQ(pooled->cubin, serial[i]->cubin) << i;
    ASSERT_EQ(pooled->resources.size(), serial[i]->resources.size()) << i;
    for (const auto& [name, usage] : serial[i]->resources) {
      EXPECT_THAT(pooled->resources.at(name), SameUsage(usage)) << i << " " << name;
    }
  }
  EXPECT_FALSE(serial[12]->ok);
  EXPECT_FALSE(serial[13].ok());
}

TEST(CompilePoolTest, DestructorFinishesQueuedWork) {
  std::vector<std::future<absl::StatusOr<CompileResult>>> futures;
  CachingCompiler compiler;
  {
    CompilePool pool(compiler, 2);
    for (const CompileRequest& request : Requests(6)) futures.push_back(pool.Submit(request));
  }
  for (auto& future : futures) {
    ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  }
  EXPECT_EQ(compiler.stats().misses, 8);
}

TEST(CompilePoolTest, ConcurrentWritersOfOneEntryLeaveAWholeEntry) {
  std::string dir = (std::filesystem::temp_directory_path() / "cutune-pool-test-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    absl::StatusOr<CompileCache> cache = CompileCache::Open(dir);
    ASSERT_TRUE(cache.ok()) << cache.status();
    CachingCompiler compiler(*std::move(cache));
    const CompileRequest request{.source = testing::kAddKernel};
    {
      CompilePool pool(compiler, 4);
      std::vector<std::future<absl::StatusOr<CompileResult>>> futures;
      for (int i = 0; i < 8; ++i) futures.push_back(pool.Submit(request));
      for (auto& future : futures) {
        absl::StatusOr<CompileResult> result = future.get();
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_TRUE(result->ok);
      }
    }
    EXPECT_EQ(compiler.stats().corrupt, 0);
    absl::StatusOr<CompileResult> after = compiler.Compile(request);
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->from_cache);
  }
  std::filesystem::remove_all(dir);
}

TEST(CompilePoolTest, DefaultsToHardwareThreads) {
  CachingCompiler compiler;
  CompilePool pool(compiler);
  EXPECT_EQ(pool.threads(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace cutune::compiler
