// The CLI's output helpers that make no call (client/cli/render.h): CSV records, text tables
// fitted to a terminal's width, the progress bar's lines.
#include "client/cli/render.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::testing {
namespace {

TEST(RenderTest, CsvQuotesOnlyWhatRfc4180Requires) {
  EXPECT_EQ(cli::CsvRecord({"tile", "32", ""}), "tile,32,\n");
  EXPECT_EQ(cli::CsvRecord({"a,b", "say \"hi\"", "two\nlines", " padded"}),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" padded\"\n");
  EXPECT_EQ(cli::CsvRecord({}), "\n");
}

}  // namespace
}  // namespace cutune::testing
