#include "server/observe/prometheus.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "server/core/strings.h"

namespace cutune::observe::prometheus {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", LabelName(labels[i].first), "=\"",
                    EscapeLabelValue(labels[i].second), "\"");
  }
  out += '}';
  return out;
}

}  // namespace

std::string MetricName(std::string_view name) {
  if (name.empty()) return std::string(1, '_');
  std::string out(name);
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (!(IsLetter(c) || c == ':' || (i > 0 && IsDigit(c)))) out[i] = '_';
  }
  return out;
}

std::string LabelName(std::string_view name) {
  if (name.empty()) return std::string(1, '_');
  // "__" names belong to Prometheus itself.
  std::string out = name.starts_with("__") ? absl::StrCat("x", ToAbsl(name)) : std::string(name);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!(IsLetter(out[i]) || (i > 0 && IsDigit(out[i])))) out[i] = '_';
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return ShortestText(value);
}

std::string Render(const std::vector<Family>& families) {
  std::string out;
  for (const Family& family : families) {
    const std::string name = MetricName(family.name);
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(family.help), "\n", "# TYPE ", name, " ",
                    ToAbsl(TypeName(family.type)), "\n");
    for (const Sample& sample : family.samples) {
      absl::StrAppend(&out, name, sample.suffix.empty() ? "" : MetricName(sample.suffix),
                      RenderLabels(sample.labels), " ", FormatValue(sample.value), "\n");
    }
  }
  return out;
}

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}

void CounterFamily::Inc(std::initializer_list<std::string_view> values, uint64_t by) {
  std::lock_guard lock(mu_);
  auto it = counts_.find(values);
  if (it == counts_.end()) {
    it = counts_.emplace(std::vector<std::string>(values.begin(), values.end()), 0).first;
  }
  it->second += by;
}

Family CounterFamily::Collect() const {
  Family family{name_, help_, Type::kCounter, {}};
  std::lock_guard lock(mu_);
  for (const auto& [values, count] : counts_) {
    Sample sample;
    for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) {
      sample.labels.emplace_back(label_names_[i], values[i]);
    }
    sample.value = static_cast<double>(count);
    family.samples.push_back(std::move(sample));
  }
  return family;
}

Histogram::Histogram(std::string name, std::string help, std::vector<double> bounds)
    : name_(std::move(name)), help_(std::move(help)), bounds_(std::move(bounds)) {
  if (bounds_.size() > kMaxBuckets || !std::is_sorted(bounds_.begin(), bounds_.end())) {
    std::abort();  // a programming error in a constant, caught by the first test
  }
}

void Histogram::Observe(double value) {
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();  // le: <=
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Family Histogram::Collect() const {
  Family family{name_, help_, Type::kHistogram, {}};
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
    family.samples.push_back({"_bucket", {{"le", le}}, static_cast<double>(cumulative)});
  }
  family.samples.push_back({"_sum", {}, sum_.load(std::memory_order_relaxed)});
  // The +Inf bucket, not count_, so that a scrape racing an Observe stays consistent.
  family.samples.push_back({"_count", {}, static_cast<double>(cumulative)});
  return family;
}

}  // namespace cutune::observe::prometheus
