// Compile cache: hits return the same cubin and report, any change of input misses, corrupt
// entries are recompiled, failures are cached and errors are not.
#include "server/compiler/cache.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/test_util.h"

namespace cutune::compiler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::SameUsage;
using testing::StatusIs;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cutune-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    absl::StatusOr<CompileCache> cache = CompileCache::Open(root_ / "nvrtc");
    ASSERT_TRUE(cache.ok()) << cache.status();
    compiler_.emplace(*std::move(cache));
  }
  void TearDown() override { fs::remove_all(root_); }

  CompileResult MustCompile(const CompileRequest& request) {
    absl::StatusOr<CompileResult> result = compiler_->Compile(request);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : CompileResult{};
  }

  // Everything a recompilation reproduces; the log differs in ptxas' "Compile time" lines.
  static void ExpectSameBuild(const CompileResult& a, const CompileResult& b) {
    EXPECT_EQ(a.ok, b.ok);
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.cubin, b.cubin);
    ASSERT_EQ(a.resources.size(), b.resources.size());
    for (const auto& [name, usage] : a.resources) {
      ASSERT_TRUE(b.resources.contains(name)) << name;
      EXPECT_THAT(b.resources.at(name), SameUsage(usage)) << name;
    }
  }

  static void ExpectSame(const CompileResult& a, const CompileResult& b) {
    ExpectSameBuild(a, b);
    EXPECT_EQ(a.log, b.log);
  }

  fs::path root_;
  std::optional<CachingCompiler> compiler_;
};

const CompileRequest kAdd{
    .source = testing::kAddKernel, .options = {"-DUNUSED=1"}, .arch = "sm_90"};

TEST_F(CacheTest, SecondCompileIsServedFromTheCache) {
  CompileResult first = MustCompile(kAdd);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(fs::is_regular_file(compiler_->cache()->EntryPath(first.key)));

  CompileResult second = MustCompile(kAdd);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.compile_ms, 0);
  ExpectSame(first, second);
  EXPECT_GT(second.resources.at("add").registers, 0);
  EXPECT_EQ(compiler_->stats().hits, 1);
  EXPECT_EQ(compiler_->stats().misses, 1);
}

TEST_F(CacheTest, AnotherProcessesCacheInTheSameDirectoryHits) {
  CompileResult first = MustCompile(kAdd);
  absl::StatusOr<CompileCache> reopened = CompileCache::Open(compiler_->cache()->directory());
  ASSERT_TRUE(reopened.ok());
  CachingCompiler other(*std::move(reopened));
  absl::StatusOr<CompileResult> second = other.Compile(kAdd);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  ExpectSame(first, *second);
}

TEST_F(CacheTest, DifferentOptionOrArchMisses) {
  CompileResult base = MustCompile(kAdd);
  CompileRequest option = kAdd;
  option.options = {"-DUNUSED=2"};
  CompileRequest arch = kAdd;
  arch.arch = "sm_80";
  CompileResult with_option = MustCompile(option);
  CompileResult with_arch = MustCompile(arch);
  EXPECT_FALSE(with_option.from_cache);
  EXPECT_FALSE(with_arch.from_cache);
  EXPECT_NE(with_option.key, base.key);
  EXPECT_NE(with_arch.key, base.key);
  EXPECT_NE(with_arch.cubin, base.cubin);
  EXPECT_EQ(compiler_->stats().misses, 3);
  EXPECT_EQ(compiler_->stats().hits, 0);
}

TEST_F(CacheTest, FailedCompilationIsCachedWithItsLog) {
  const CompileRequest broken{.source = testing::kBrokenKernel};
  CompileResult first = MustCompile(broken);
  EXPECT_FALSE(first.ok);
  CompileResult second = MustCompile(broken);
  EXPECT_FALSE(second.ok);
  EXPECT_TRUE(second.from_cache);
  EXPECT_THAT(second.log, HasSubstr("undeclared_thing"));
  ExpectSame(first, second);
}

TEST_F(CacheTest, ErrorsAreNotCached) {
  const CompileRequest bad{.source = testing::kAddKernel, .options = {"--no-such-option"}};
  EXPECT_THAT(compiler_->Compile(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unrecognized option")));
  EXPECT_FALSE(fs::exists(compiler_->cache()->EntryPath(ContentKey(bad))));
  EXPECT_THAT(compiler_->Compile(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unrecognized option")));
}

void Overwrite(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(CacheTest, CorruptEntriesAreRecompiled) {
  CompileResult first = MustCompile(kAdd);
  const fs::path entry = compiler_->cache()->EntryPath(first.key);
  const std::string intact = ReadAll(entry);
  ASSERT_GT(intact.size(), first.cubin.size());
  std::string flipped = intact;
  flipped[flipped.size() / 2] ^= 0x40;  // inside the cubin: only the checksum notices
  const std::string corruptions[] = {"", "garbage", intact.substr(0, intact.size() / 2), flipped};
  int64_t expected_corrupt = 0;
  for (const std::string& corruption : corruptions) {
    Overwrite(entry, corruption);
    CompileResult again = MustCompile(kAdd);
    EXPECT_FALSE(again.from_cache);
    ExpectSameBuild(first, again);
    EXPECT_EQ(compiler_->stats().corrupt, ++expected_corrupt);
    CompileResult rewritten = MustCompile(kAdd);
    EXPECT_TRUE(rewritten.from_cache);
    ExpectSame(again, rewritten);
  }
}

TEST_F(CacheTest, EntryUnderAnotherKeyIsNotServed) {
  CompileResult first = MustCompile(kAdd);
  CompileRequest other = kAdd;
  other.options = {"-DUNUSED=3"};
  const fs::path other_entry = compiler_->cache()->EntryPath(ContentKey(other));
  fs::create_directories(other_entry.parent_path());
  fs::copy_file(compiler_->cache()->EntryPath(first.key), other_entry);
  EXPECT_FALSE(MustCompile(other).from_cache);
  EXPECT_EQ(compiler_->stats().corrupt, 1);
}

TEST_F(CacheTest, NoTemporaryFilesAreLeft) {
  MustCompile(kAdd);
  MustCompile({.source = testing::kBrokenKernel});
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root_)) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }
}

TEST_F(CacheTest, OpenFailsWhereNoDirectoryCanBeMade) {
  Overwrite(root_ / "file", "x");
  EXPECT_THAT(CompileCache::Open(root_ / "file" / "nvrtc"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("cache directory")));
}

TEST(CachingCompilerTest, WithoutCacheNeverHits) {
  CachingCompiler compiler;
  EXPECT_EQ(compiler.cache(), nullptr);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<CompileResult> result = compiler.Compile(kAdd);
    ASSERT_TRUE(result.ok());
    EXPECT_FALSE(result->from_cache);
  }
}

// Restores the variables DefaultCacheDirectory reads.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* value = getenv(name)) saved_ = value;
  }
  ~ScopedEnv() {
    if (saved_) {
      setenv(name_, saved_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  void Set(const char* value) { setenv(name_, value, 1); }
  void Unset() { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

TEST(DefaultCacheDirectoryTest, Precedence) {
  ScopedEnv cutune("CUTUNE_CACHE_DIR");
  ScopedEnv xdg("XDG_CACHE_HOME");
  ScopedEnv home("HOME");
  cutune.Set("/tmp/cutune-explicit");
  xdg.Set("/tmp/xdg");
  home.Set("/tmp/home");
  EXPECT_EQ(DefaultCacheDirectory().value(), fs::path("/tmp/cutune-explicit"));
  cutune.Set("");
  EXPECT_EQ(DefaultCacheDirectory().value(), fs::path("/tmp/xdg/cutune/nvrtc"));
  xdg.Set("relative/xdg");
  EXPECT_EQ(DefaultCacheDirectory().value(), fs::path("/tmp/home/.cache/cutune/nvrtc"));
  cutune.Unset();
  xdg.Unset();
  home.Unset();
  EXPECT_THAT(DefaultCacheDirectory(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("CUTUNE_CACHE_DIR")));
}

}  // namespace
}  // namespace cutune::compiler
