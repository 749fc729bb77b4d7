// The store's schema and its migrations. Each shipped version's DDL is kept verbatim so a test
// can build an old database and check that the current code migrates it.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "server/store/sqlite.h"

namespace cutune::store {

inline constexpr int kSchemaVersion = 8;

// The DDL that created a fresh version-1 database (frozen; for migration tests).
std::string_view SchemaV1Ddl();
// The DDL that migrates version `version` - 1 to `version` (1: SchemaV1Ddl), frozen like it, so
// a test can build a database of any older version.
std::string_view SchemaStepDdl(int version);

// Brings the database to kSchemaVersion, one version per transaction. A database newer than
// this code is FAILED_PRECONDITION and left untouched.
absl::Status Migrate(Db& db);

}  // namespace cutune::store
