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

TEST(RenderTest, ATableNarrowsToAWidthByDroppingThenCuttingColumns) {
  cli::Table table({"name", "description", "a", "b"});
  table.Add({"x", "a rather long description of x", "1", "2"});
  table.DropFirst({3});
  table.Elastic(1, 5);
  EXPECT_EQ(table.Render(), table.Render(0));
  EXPECT_EQ(table.Render(200),
            "name  description                     a  b\n"
            "----  ------------------------------  -  -\n"
            "x     a rather long description of x  1  2\n");
  EXPECT_EQ(table.Render(39),
            "name  description                     a\n"
            "----  ------------------------------  -\n"
            "x     a rather long description of x  1\n");
  EXPECT_EQ(table.Render(25),
            "name  description       a\n"
            "----  ----------------  -\n"
            "x     a rather long d~  1\n");
}

}  // namespace
}  // namespace cutune::testing
