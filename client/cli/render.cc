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

std::string Table::RenderColumns(const std::vector<size_t>& columns,
                                 size_t elastic_width) const {
  std::vector<size_t> width(columns.size(), 0);
  std::vector<bool> numeric(columns.size(), true);
  auto cell = [&](const std::vector<std::string>& row, size_t i) -> std::string {
    const size_t column = columns[i];
    std::string text = column < row.size() ? row[column] : "";
    if (column == elastic_ && text.size() > elastic_width && elastic_width > 0) {
      text = text.substr(0, elastic_width - 1) + "~";
    }
    return text;
  };
  auto measure = [&](const std::vector<std::string>& row, bool is_header) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string text = cell(row, i);
      width[i] = std::max(width[i], text.size());
      double unused;
      if (!is_header && !text.empty() && !absl::SimpleAtod(text, &unused)) numeric[i] = false;
    }
  };
  measure(header_, true);
  for (const auto& row : rows_) measure(row, false);
  std::string out;
  auto emit = [&](const std::vector<std::string>& texts) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string& text = texts[i];
      std::string pad(width[i] - std::min(width[i], text.size()), ' ');
      if (i) line += "  ";
      line += numeric[i] ? pad + text : text + (i + 1 < width.size() ? pad : "");
    }
    out += line + "\n";
  };
  auto cells = [&](const std::vector<std::string>& row) {
    std::vector<std::string> texts;
    for (size_t i = 0; i < columns.size(); ++i) texts.push_back(cell(row, i));
    return texts;
  };
  emit(cells(header_));
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  emit(rule);
  for (const auto& row : rows_) emit(cells(row));
  return out;
}

namespace {

size_t Widest(const std::string& text) {
  size_t widest = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) widest = std::max(widest, line.size());
  return widest;
}

}  // namespace

std::string Table::Render(size_t width) const {
  std::vector<size_t> columns;
  for (size_t i = 0; i < header_.size(); ++i) columns.push_back(i);
  std::string out = RenderColumns(columns, 0);
  if (width == 0) return out;
  for (size_t drop : drop_order_) {
    if (Widest(out) <= width) return out;
    columns.erase(std::remove(columns.begin(), columns.end(), drop), columns.end());
    out = RenderColumns(columns, 0);
  }
  const size_t over = Widest(out) > width ? Widest(out) - width : 0;
  if (over == 0 || elastic_ == SIZE_MAX ||
      std::find(columns.begin(), columns.end(), elastic_) == columns.end()) {
    return out;
  }
  size_t elastic_width = header_[elastic_].size();
  for (const auto& row : rows_) {
    if (elastic_ < row.size()) elastic_width = std::max(elastic_width, row[elastic_].size());
  }
  const size_t cut = elastic_width > over ? elastic_width - over : 0;
  return RenderColumns(columns, std::max({cut, elastic_min_, size_t{2}}));
}

size_t OutputColumns() { return TerminalColumns(STDOUT_FILENO); }

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

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) == 1),
      last_plain_(std::chrono::steady_clock::now()) {}

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

size_t TerminalColumns(int fd) {
  if (isatty(fd) != 1) return 0;
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  // A terminal that does not say (a serial line, some IDE consoles): the shell may.
  if (const char* columns = std::getenv("COLUMNS")) {
    int value = 0;
    if (absl::SimpleAtoi(columns, &value) && value > 0) return static_cast<size_t>(value);
  }
  return 80;
}

void ProgressBar::Update(int64_t done, int64_t total, const std::string& suffix,
                         const std::string& prefix) {
  if (!enabled_) return;
  if (!terminal_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_plain_ < kPlainInterval) return;
    last_plain_ = now;
    std::fprintf(stderr, "%s\n", ProgressLine(done, total, suffix, prefix, 0).c_str());
    std::fflush(stderr);
    return;
  }
  const std::string line =
      ProgressLine(done, total, suffix, prefix, TerminalColumns(STDERR_FILENO));
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
