#include "server/core/files.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/temp_dir.h"

namespace cutune {
namespace {

TEST(FilesTest, ReadsEveryByte) {
  testing::TempDir dir;
  const std::string bytes("line 1\n\0binary\xff", 15);
  std::ofstream(dir.File("f"), std::ios::binary) << bytes;
  absl::StatusOr<std::string> read = ReadFile(dir.File("f"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, bytes);
}

TEST(FilesTest, MissingFileIsNotFoundAndNamed) {
  testing::TempDir dir;
  absl::StatusOr<std::string> read = ReadFile(dir.File("missing"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), ::testing::HasSubstr("cannot read '" + dir.File("missing")));
}

}  // namespace
}  // namespace cutune
