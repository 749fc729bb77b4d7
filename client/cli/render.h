// Terminal and machine output for the CLI: aligned tables, a progress bar that appears only on a
// terminal, and one-line errors.
#pragma once

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
  std::string Render() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// One CSV record with RFC 4180 quoting: a field holding a comma, a double quote, a line break
// or leading/trailing space is quoted, its quotes doubled. Records end in "\n" (not RFC 4180's
// CRLF: the files are for diff, grep and spreadsheets alike).
std::string CsvRecord(const std::vector<std::string>& fields);

// "[#######.....]  42/400  10.5%  ETA 3s  best 123.4 us" redrawn in place on a terminal, cut to
// its width (a wrapped line could not be redrawn); silent when stdout is not one (CI logs and
// pipes stay clean). A batch puts its own state before the bar with `prefix`.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();
  void Update(int64_t done, int64_t total, const std::string& suffix,
              const std::string& prefix = "");
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
};

// The bar's line: "PREFIX [####......] 42/400  10.5%  SUFFIX", at most `columns` characters
// (0: no limit).
std::string ProgressLine(int64_t done, int64_t total, const std::string& suffix,
                         const std::string& prefix, size_t columns);
// Columns of the terminal on stderr (where the bar is drawn); 0 when unknown.
size_t TerminalColumns();

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
