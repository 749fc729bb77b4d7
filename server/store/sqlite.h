// Small RAII wrappers over the SQLite C API: a connection, a prepared statement and a
// transaction. Errors come back as absl::Status with codes chosen by what the caller can do
// about them (busy: retry later; constraint: the request conflicts with stored data).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cutune::store {

// Maps an SQLite result code to a status. `what` says which operation failed.
absl::Status SqliteStatus(sqlite3* db, int rc, std::string_view what);

class Db {
 public:
  Db() = default;
  static absl::StatusOr<Db> Open(const std::string& path, int flags);
  Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  sqlite3* get() const { return db_; }
  // Runs one or more statements that return no rows of interest.
  absl::Status Exec(std::string_view sql);
  // Runs a statement returning a single integer (PRAGMA user_version, COUNT(*), ...).
  absl::StatusOr<int64_t> QueryInt(std::string_view sql);

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  static absl::StatusOr<Stmt> Prepare(const Db& db, std::string_view sql);
  Stmt(Stmt&& other) noexcept
      : db_(other.db_),
        stmt_(std::exchange(other.stmt_, nullptr)),
        bind_status_(std::move(other.bind_status_)) {}
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Parameters are 1-based, as in SQLite. A failed bind is reported by the next Step().
  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, int value) { return Bind(index, int64_t{value}); }
  Stmt& Bind(int index, double value);
  Stmt& Bind(int index, std::string_view value);
  Stmt& Bind(int index, const std::string& value) { return Bind(index, std::string_view(value)); }
  Stmt& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Stmt& Bind(int index, std::optional<int64_t> value);

  // true: a row is available; false: done.
  absl::StatusOr<bool> Step();
  // Steps a statement that must not return rows.
  absl::Status Run();
  // Ends a statement stepped to a row early; COMMIT fails while any statement is mid-result.
  void Reset() { sqlite3_reset(stmt_); }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void NoteBind(int rc, int index);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  absl::Status bind_status_;
};

// BEGIN IMMEDIATE on construction via Begin(); rolls back in the destructor unless committed,
// so every early return on error leaves the database as it was.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Db& db);
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  absl::Status Commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_ = nullptr;
};

// A read snapshot: BEGIN (deferred) ... COMMIT, so several SELECTs see one consistent state.
class ReadSnapshot {
 public:
  static absl::StatusOr<ReadSnapshot> Begin(Db& db);
  ReadSnapshot(ReadSnapshot&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  ReadSnapshot& operator=(ReadSnapshot&&) = delete;
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot();

 private:
  explicit ReadSnapshot(Db* db) : db_(db) {}
  Db* db_ = nullptr;
};

}  // namespace cutune::store
