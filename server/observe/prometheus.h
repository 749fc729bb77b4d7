// Prometheus text exposition format 0.0.4: metric families rendered as `# HELP` / `# TYPE` lines
// and samples, with names made valid and label values and help text escaped as the format asks.
// Rendering is a pure function of plain data (tested alone); CounterFamily and Histogram are the
// two thread-safe live metrics the daemon keeps, each collected into that data at scrape time.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cutune::observe::prometheus {

// The Content-Type of a scrape's answer.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class Type { kCounter, kGauge, kHistogram };

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  std::string
      suffix;  // after the family's name: "" or, for histograms, "_bucket", "_sum", "_count"
  Labels labels;
  double value = 0;
};

struct Family {
  std::string name;
  std::string help;
  Type type = Type::kGauge;
  std::vector<Sample> samples;
};

// A metric name as the format allows ([a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_').
std::string MetricName(std::string_view name);
// A label name ([a-zA-Z_][a-zA-Z0-9_]*; names starting "__" are reserved, so they get a prefix).
std::string LabelName(std::string_view name);
// A label value inside its quotes: backslash, double quote and line feed escaped.
std::string EscapeLabelValue(std::string_view value);
// HELP text: backslash and line feed escaped.
std::string EscapeHelp(std::string_view help);
// A sample value: integers without exponent, "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// Every family in order, each with its HELP and TYPE lines; ends with a newline.
std::string Render(const std::vector<Family>& families);

// A counter with labels. Inc() finds its series without allocating once the series exists.
class CounterFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);

  // `values` in the order of the label names; a new combination starts at 0.
  void Inc(std::initializer_list<std::string_view> values, uint64_t by = 1);
  // Makes a series visible at 0 before its first event (so rate() sees it from the start).
  void Declare(std::initializer_list<std::string_view> values) { Inc(values, 0); }
  Family Collect() const;

 private:
  struct Less {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(),
          [](std::string_view x, std::string_view y) { return x < y; });
    }
  };
  const std::string name_, help_;
  const std::vector<std::string> label_names_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, uint64_t, Less> counts_;
};

// A histogram of one series (no labels) with fixed upper bounds.
class Histogram {
 public:
  static constexpr size_t kMaxBuckets = 16;
  // `bounds` ascending, at most kMaxBuckets; +Inf is implied.
  Histogram(std::string name, std::string help, std::vector<double> bounds);

  void Observe(double value);
  Family Collect() const;

 private:
  const std::string name_, help_;
  const std::vector<double> bounds_;
  std::array<std::atomic<uint64_t>, kMaxBuckets + 1> buckets_{};  // not cumulative; last: +Inf
  std::atomic<double> sum_{0};
};

}  // namespace cutune::observe::prometheus
