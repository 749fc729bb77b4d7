#include "server/core/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/temp_dir.h"

namespace cutune::log {
namespace {

using ::testing::HasSubstr;

// 2026-12-01T17:55:12.123Z
const std::chrono::system_clock::time_point kTime =
    std::chrono::system_clock::time_point(std::chrono::milliseconds(1796147712123));

Record Make(std::vector<Field> fields, Level level = Level::kInfo) {
  return Record{kTime, level, "job.finished", std::move(fields)};
}

TEST(LogFormatTest, TimestampIsUtcWithMilliseconds) {
  EXPECT_EQ(FormatTimestamp(kTime), "2026-12-01T17:55:12.123Z");
  EXPECT_EQ(FormatTimestamp(std::chrono::system_clock::time_point()), "1970-01-01T00:00:00.000Z");
}

TEST(LogFormatTest, TextIsLogfmtWithTypedValues) {
  EXPECT_EQ(FormatText(Make({{"job", "job-000001-3f2a"},
                             {"family", std::string("matmul")},
                             {"candidates", 12},
                             {"best_us", 12.5},
                             {"wall_s", 0.1},
                             {"stale", false}})),
            "2026-12-01T17:55:12.123Z INFO job.finished job=job-000001-3f2a family=matmul "
            "candidates=12 best_us=12.5 wall_s=0.1 stale=false");
  EXPECT_EQ(FormatText(Make({}, Level::kWarning)), "2026-12-01T17:55:12.123Z WARNING job.finished");
}

TEST(LogFormatTest, TextQuotesWhatWouldBreakAPair) {
  auto text = [](std::string_view value) {
    std::string line = FormatText(Make({{"v", value}}));
    return line.substr(line.find(" v=") + 3);
  };
  EXPECT_EQ(text(""), "\"\"");
  EXPECT_EQ(text("two words"), "\"two words\"");
  EXPECT_EQ(text("a=b"), "\"a=b\"");
  EXPECT_EQ(text("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(text("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(text("line\nbreak\r\t"), "\"line\\nbreak\\r\\t\"");
  EXPECT_EQ(text(std::string_view("nul\0bell\a", 9)), "\"nul\\x00bell\\x07\"");
  EXPECT_EQ(text("GPU µ"), "\"GPU µ\"");  // UTF-8 stays readable
  EXPECT_EQ(text("unix:/tmp/a.sock"), "unix:/tmp/a.sock");
}

TEST(LogFormatTest, KeysAreReducedToSafeCharacters) {
  EXPECT_EQ(FormatText(Make({{"a key=x", 1}})),
            "2026-12-01T17:55:12.123Z INFO job.finished a_key_x=1");
}

TEST(LogFormatTest, NumbersUseTheShortestExactText) {
  EXPECT_EQ(FormatText(Make({{"x", 1.0 / 3}})).substr(43), "x=0.3333333333333333");
  EXPECT_EQ(FormatText(Make({{"x", 1e-7}})).substr(43), "x=1e-07");
  EXPECT_EQ(FormatText(Make({{"x", uint64_t{18446744073709551}}})).substr(43),
            "x=18446744073709551");
}

TEST(LogFormatTest, JsonIsOneObjectWithTypedFields) {
  const std::string line = FormatJson(Make({{"job", "j1"},
                                            {"candidates", 12},
                                            {"best_us", 12.5},
                                            {"stale", true},
                                            {"nan", std::nan("")}}));
  EXPECT_EQ(line,
            "{\"ts\":\"2026-12-01T17:55:12.123Z\",\"level\":\"info\",\"event\":\"job.finished\","
            "\"job\":\"j1\",\"candidates\":12,\"best_us\":12.5,\"stale\":true,\"nan\":null}");
  const auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["candidates"], 12);
  EXPECT_EQ(parsed["stale"], true);
}

TEST(LogFormatTest, JsonEscapesAnyBytesIntoValidJson) {
  const std::string nasty = std::string("q\"b\\n\nt\tc\x01") + "\xff\xc3(" + "ok é 𝄞";
  const std::string line = FormatJson(Make({{"v", nasty}}));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto parsed = nlohmann::json::parse(line);  // throws on invalid UTF-8 or escapes
  EXPECT_EQ(parsed["v"], "q\"b\\n\nt\tc\x01\xef\xbf\xbd\xef\xbf\xbd(ok é 𝄞");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a UTF-16 surrogate
}

TEST(LogParseTest, LevelsAndFormatsByName) {
  EXPECT_EQ(*ParseLevel("debug"), Level::kDebug);
  EXPECT_EQ(*ParseLevel("warning"), Level::kWarning);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_THAT(ParseLevel("loud").status().message(),
              HasSubstr("unknown log level 'loud' (known: debug, info, warning, error)"));
  EXPECT_THAT(ParseFormat("xml").status().message(), HasSubstr("(known: text, json)"));
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(LoggerTest, FiltersByLevelAndWritesWholeLines) {
  cutune::testing::TempDir dir;
  const std::string path = dir.File("log");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  {
    Logger logger(Format::kJson, Level::kInfo, fd);
    EXPECT_FALSE(logger.Enabled(Level::kDebug));
    logger.Debug("hidden");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&logger, t] {
        for (int i = 0; i < 200; ++i) {
          logger.Info("tick", {{"thread", t}, {"i", i}, {"pad", std::string(300, 'x')}});
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  close(fd);
  std::istringstream lines(ReadAll(path));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    const auto parsed = nlohmann::json::parse(line);  // a torn line would not parse
    EXPECT_EQ(parsed["event"], "tick");
    ++count;
  }
  EXPECT_EQ(count, 800);
}

}  // namespace
}  // namespace cutune::log
