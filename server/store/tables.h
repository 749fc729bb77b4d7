// Tuning tables: the JSON files CI stores per GPU model and servers import. Format and merge
// rules are documented in docs/tables.md. Export is deterministic (sorted keys and entries,
// figures rounded to 6 significant digits, one line per winner and per row) so equal data gives
// byte-identical files. Implemented by job: table_export.cc, table_import.cc (parse and
// validate; Store::ApplyImport in store_import.cc applies), table_diff.cc; the JSON below them
// in table_json.h (strict reading) and row_json.h (the row codec's table side).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/limits.h"
#include "server/core/types.h"
#include "server/store/store.h"

namespace cutune::store {

inline constexpr std::string_view kTableFormat = "cutune-table";
// The format versions this cutune reads, kOldestTableVersion to kTableVersion. Each version adds
// to the one before; export writes the lowest version that holds what it exports, so a table
// that uses nothing newer still imports into a cutune that reads only older versions.
inline constexpr int kOldestTableVersion = 1;
inline constexpr int kTableVersionTies = 2;             // winners may list "ties"
inline constexpr int kTableVersionPortfolios = 3;       // devices may hold "portfolios"
inline constexpr int kTableVersionMemberResources = 4;  // portfolios may hold "resources"
inline constexpr int kTableVersionJudged = 5;           // portfolios may hold "judged"
inline constexpr int kTableVersionPortfolioSource = 6;  // portfolios may hold "source_hash"
inline constexpr int kTableVersionTiming = 7;           // winners and sweeps may hold "timing"
inline constexpr int kTableVersion = 7;                 // the newest

// The most a table may have, exported or imported (server/core/limits.h, shared with the gRPC
// message limits of cutuned and its clients).
using ::cutune::kMaxTableBytes;

struct ExportOptions {
  std::string device_model;   // empty: every model in the store
  bool include_rows = false;  // also every finished sweep with all its rows
  size_t max_bytes = kMaxTableBytes;  // lowered only by tests
};

// RESOURCE_EXHAUSTED when the table would be larger than `max_bytes`.
absl::StatusOr<std::string> ExportTable(Store& store, const ExportOptions& options);

struct ImportOptions {
  // Family names the daemon knows ({"transpose", "matmul"}); a table naming another is
  // rejected. Empty: families are not checked.
  std::set<std::string> known_families;
  MergePolicy policy = MergePolicy::kKeepFaster;
  // Asked about the problem of every winner and sweep, and the parameters of every winner and
  // sweep row; empty: nothing is checked against the kernel families.
  EntryValidator validator = {};
};

// Parses and validates a table without touching any store; never throws. Errors are
// INVALID_ARGUMENT naming the JSON pointer (or line and column, for syntax errors) of the
// problem. Text over kMaxTableBytes is refused unread, and nesting deeper than any table needs
// where it starts, before anything deep is built.
absl::StatusOr<ImportBatch> ParseTable(std::string_view json_text,
                                       const std::set<std::string>& known_families,
                                       const EntryValidator& validator = {});

// Validates everything, then applies the table in one transaction: any error changes nothing.
absl::StatusOr<ImportStats> ImportTable(Store& store, std::string_view json_text,
                                        const ImportOptions& options);

// The tuning tables a directory holds: its *.json files, in name order. `cutuned --tables DIR`
// and an offline table directory import them in this order, so their keep-faster merges agree.
// Empty when the directory holds none or cannot be read.
std::vector<std::string> TableFilesIn(const std::string& dir);

// Per key (device model, family, dtype, shape). Where a table holds winners for several kernel
// source hashes of one key, the newest counts.
struct TableDiffEntry {
  // kTie: the winner changed, but to a configuration tied with the old one (server/core/ties.h),
  // which is not a real change: the sweep picked another of equals.
  enum class Change { kSame, kTie, kWinnerChanged, kOnlyInA, kOnlyInB };
  // For kTie, what shows the tie, in this order of preference.
  enum class TieBasis {
    kNone,
    kInTiesOfA,   // B's winner is among the ties A's winner lists
    kInTiesOfB,   // A's winner is among the ties B's winner lists
    kTimesTied,   // the two timings are Tied
  };
  std::string device_model;
  std::string family;
  DType dtype = DType::kF32;
  Shape shape;
  Change change = Change::kSame;
  TieBasis tie_basis = TieBasis::kNone;
  std::optional<Params> params_a;
  std::optional<Params> params_b;
  double time_a_us = 0;
  double time_b_us = 0;
  double time_change_percent = 0;  // (b - a) / a * 100; positive: B is slower
  bool source_hash_changed = false;
  // How each winner's samples were started (Provenance::timing; empty: not recorded).
  std::string timing_a;
  std::string timing_b;
  // Both winners there, timed in two ways (or one way not recorded): their times do not compare.
  bool TimingChanged() const { return params_a && params_b && timing_a != timing_b; }
};

struct TableDiff {
  std::vector<TableDiffEntry> entries;  // sorted by key

  // A key in only one table, or a winner that changed other than to a tie: what makes
  // `cutune table diff` exit 6.
  bool HasChanges() const;
  // Keys present in both whose time grew by more than `threshold_percent`.
  // Keys whose timing changed are not among them (their times do not compare; ToText marks them).
  std::vector<const TableDiffEntry*> Regressions(double threshold_percent) const;
  // One line per key; `cutune table diff --json` prints the TableDiffReport message instead.
  std::string ToText() const;
};

absl::StatusOr<TableDiff> DiffTables(std::string_view json_a, std::string_view json_b);

std::string_view TableChangeName(TableDiffEntry::Change change);  // "same", "tie", ...

}  // namespace cutune::store
