// SQLite RAII wrappers; see sqlite.h.
#include "server/store/sqlite.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace cutune::store {

absl::Status SqliteStatus(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return absl::OkStatus();
  std::string message = absl::StrCat(std::string(what), ": ",
                                     db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return absl::AlreadyExistsError(message);
      }
      return absl::FailedPreconditionError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<Db> Db::Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);  // sqlite3_open_v2 hands out a handle even on failure; it must be closed
  if (rc != SQLITE_OK) return SqliteStatus(raw, rc, absl::StrCat("open ", path));
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Db::~Db() {
  if (db_ != nullptr) {
    int rc = sqlite3_close_v2(db_);
    if (rc != SQLITE_OK) std::fprintf(stderr, "cutune store: close: %s\n", sqlite3_errstr(rc));
  }
}

absl::Status Db::Exec(std::string_view sql) {
  std::string text(sql);
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  return SqliteStatus(db_, rc, absl::StrCat("exec '", text.substr(0, 60), "'"));
}

absl::StatusOr<int64_t> Db::QueryInt(std::string_view sql) {
  absl::StatusOr<Stmt> stmt = Stmt::Prepare(*this, sql);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError(absl::StrCat("no result from '", std::string(sql), "'"));
  return stmt->Int(0);
}

absl::StatusOr<Stmt> Stmt::Prepare(const Db& db, std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  if (rc != SQLITE_OK) {
    return SqliteStatus(db.get(), rc, absl::StrCat("prepare '", std::string(sql), "'"));
  }
  return Stmt(db.get(), raw);
}

Stmt::~Stmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void Stmt::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = SqliteStatus(db_, rc, absl::StrCat("bind parameter ", index));
  }
}

Stmt& Stmt::Bind(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Stmt& Stmt::Bind(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Stmt& Stmt::Bind(int index, std::string_view value) {
  NoteBind(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                             SQLITE_TRANSIENT),
           index);
  return *this;
}

Stmt& Stmt::Bind(int index, std::optional<int64_t> value) {
  if (value.has_value()) return Bind(index, *value);
  NoteBind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

absl::StatusOr<bool> Stmt::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(db_, rc,
                      absl::StrCat("step '", std::string(sqlite3_sql(stmt_)).substr(0, 60), "'"));
}

absl::Status Stmt::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  return absl::OkStatus();
}

std::string Stmt::Text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

absl::StatusOr<Transaction> Transaction::Begin(Db& db) {
  // IMMEDIATE takes the write lock now, so a busy database fails here (after busy_timeout)
  // rather than half way through the work.
  absl::Status status = db.Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) {
    int rc = sqlite3_exec(db_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
      std::fprintf(stderr, "cutune store: rollback: %s\n", sqlite3_errmsg(db_->get()));
    }
  }
}

absl::Status Transaction::Commit() {
  absl::Status status = db_->Exec("COMMIT");
  if (status.ok()) db_ = nullptr;
  return status;
}

absl::StatusOr<ReadSnapshot> ReadSnapshot::Begin(Db& db) {
  absl::Status status = db.Exec("BEGIN");
  if (!status.ok()) return status;
  return ReadSnapshot(&db);
}

ReadSnapshot::~ReadSnapshot() {
  if (db_ != nullptr) sqlite3_exec(db_->get(), "COMMIT", nullptr, nullptr, nullptr);
}

}  // namespace cutune::store
