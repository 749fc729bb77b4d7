// Text tables, the progress bar and one-line errors for the CLI.
#include "client/cli/render.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/cli/exit_codes.h"
#include "server/core/strings.h"

namespace cutune::cli {

bool StdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

std::string FormatDouble(double value, int precision) {
  return absl::StrFormat("%.*f", precision, value);
}

std::string Table::Render() const {
  std::vector<size_t> width(header_.size(), 0);
  std::vector<bool> numeric(header_.size(), true);
  auto measure = [&](const std::vector<std::string>& row, bool is_header) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
      double unused;
      if (!is_header && !row[i].empty() && !absl::SimpleAtod(row[i], &unused)) numeric[i] = false;
    }
  };
  measure(header_, true);
  for (const auto& row : rows_) measure(row, false);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
      if (i) line += "  ";
      line += numeric[i] ? pad + cell : cell + (i + 1 < width.size() ? pad : "");
    }
    out += line + "\n";
  };
  emit(header_);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  emit(rule);
  for (const auto& row : rows_) emit(row);
  return out;
}

std::string CsvRecord(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& field = fields[i];
    if (i) out += ',';
    const bool quote = field.find_first_of(",\"\r\n") != std::string::npos ||
                       (!field.empty() && (field.front() == ' ' || field.back() == ' '));
    if (!quote) {
      out += field;
      continue;
    }
    out += '"';
    for (char c : field) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled) {}

ProgressBar::~ProgressBar() { Finish(); }

std::string ProgressLine(int64_t done, int64_t total, const std::string& suffix,
                         const std::string& prefix, size_t columns) {
  constexpr int kWidth = 30;
  const double fraction = total > 0 ? static_cast<double>(done) / total : 0;
  const int filled = std::clamp(static_cast<int>(fraction * kWidth), 0, kWidth);
  std::string bar(filled, '#');
  bar += std::string(kWidth - filled, '.');
  std::string line = absl::StrFormat("%s[%s] %d/%d %5.1f%%  %s", prefix.empty() ? "" : prefix + " ",
                                     bar, done, total, 100 * fraction, suffix);
  // One line that fits: the terminal would wrap a longer one, and "\r" redraws only the last row.
  if (columns > 0 && line.size() > columns - 1) line.resize(columns - 1);
  return line;
}

size_t TerminalColumns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 0;
}

void ProgressBar::Update(int64_t done, int64_t total, const std::string& suffix,
                         const std::string& prefix) {
  if (!enabled_) return;
  const std::string line = ProgressLine(done, total, suffix, prefix, TerminalColumns());
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (enabled_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    default:
      return kExitFailure;
  }
}

std::string OneLine(std::string_view text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n', absl::SkipWhitespace())) {
    if (!out.empty()) out += "; ";
    out += std::string(absl::StripAsciiWhitespace(line));
  }
  return out;
}

int ReportError(const absl::Status& status) { return ReportError(status, ExitCodeFor(status)); }

int ReportError(const absl::Status& status, int exit_code) {
  std::cerr << "error: " << absl::StatusCodeToString(status.code()) << ": "
            << OneLine(ToStd(status.message())) << "\n";
  return exit_code;
}

}  // namespace cutune::cli
