// Terminal and machine output for the CLI: aligned tables, a progress bar that appears only on a
// terminal, and one-line errors.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace cutune::cli {

// A plain text table: a header row, then rows, columns padded to their widest cell. Numeric
// columns (all cells parse as numbers) are right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // How the table gets narrower for Render(width): first the columns listed here are left out,
  // in this order, until it fits; then the Elastic column's cells are cut (ending in "~").
  void DropFirst(std::vector<size_t> columns) { drop_order_ = std::move(columns); }
  void Elastic(size_t column, size_t min_width) {
    elastic_ = column;
    elastic_min_ = min_width;
  }
  // Every line at most `width` characters when it can be (0: no limit).
  std::string Render(size_t width = 0) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::string RenderColumns(const std::vector<size_t>& columns, size_t elastic_width) const;

  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> drop_order_;
  size_t elastic_ = SIZE_MAX;
  size_t elastic_min_ = 0;
};

// The width text for stdout should fit: the terminal's columns when stdout is one (TIOCGWINSZ,
// else $COLUMNS, else 80); 0 (no limit) for a pipe or a file, whose lines are for programs.
size_t OutputColumns();

// One CSV record with RFC 4180 quoting: a field holding a comma, a double quote, a line break
// or leading/trailing space is quoted, its quotes doubled. Records end in "\n" (not RFC 4180's
// CRLF: the files are for diff, grep and spreadsheets alike).
std::string CsvRecord(const std::vector<std::string>& fields);

// "[#######.....]  42/400  10.5%  ETA 3s  best 123.4 us" on stderr. On a terminal it is redrawn
// in place and cut to the terminal's width (a wrapped line could not be redrawn: "\r" goes back
// to the start of the last row only). When stderr is not a terminal (a CI log, a file) it is a
// plain line now and then instead, without control characters: every kPlainInterval, so that a
// long sweep shows it is alive, and never for a short one. Disabled: silent. A batch puts its own
// state before the bar with `prefix`.
class ProgressBar {
 public:
  static constexpr std::chrono::seconds kPlainInterval{30};
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void Update(int64_t done, int64_t total, const std::string& suffix,
              const std::string& prefix = "");
  void Finish();

 private:
  bool enabled_;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_plain_;
};

// The bar's line: "PREFIX [####......] 42/400  10.5%  SUFFIX", at most `columns` characters
// (0: no limit).
std::string ProgressLine(int64_t done, int64_t total, const std::string& suffix,
                         const std::string& prefix, size_t columns);
// Columns of the terminal on `fd`: TIOCGWINSZ, else $COLUMNS, else 80 (a terminal that does
// not say, as a serial console); 0 when `fd` is not a terminal.
size_t TerminalColumns(int fd);

bool StdoutIsTerminal();

// "error: NOT_FOUND: unknown family 'foo' (known: matmul, transpose)" on stderr; returns the exit
// code matching the status.
// Multi-line messages (compiler logs) are joined with "; " so the error stays one line.
int ReportError(const absl::Status& status);
// The same line with a caller-chosen exit code (a bad table file is 1, not a usage error).
int ReportError(const absl::Status& status, int exit_code);
int ExitCodeFor(const absl::Status& status);
std::string OneLine(std::string_view text);

std::string FormatDouble(double value, int precision);

}  // namespace cutune::cli
