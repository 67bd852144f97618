// The SQLite schema. Only append new migrations; never edit one that has shipped.
// The PostgreSQL backend mirrors every version in postgres_migrations.cc (same logical
// tables; a schema change is one new migration in each list).
#include "store/migration.h"

namespace abacus {

namespace {

constexpr Migration kMigrations[] = {
    {1, "initial", R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE objects (
  kind       TEXT    NOT NULL,
  key        TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  json       TEXT    NOT NULL,
  updated_us INTEGER NOT NULL,
  PRIMARY KEY (kind, key)
);
CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  object_kind TEXT    NOT NULL,
  object_key  TEXT    NOT NULL,
  time_us     INTEGER NOT NULL,
  type        TEXT    NOT NULL,
  json        TEXT    NOT NULL
);
CREATE INDEX events_by_object ON events (object_kind, object_key, seq);
CREATE TABLE journal (
  stream  TEXT    NOT NULL,
  seq     INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  json    TEXT    NOT NULL,
  PRIMARY KEY (stream, seq)
);
)sql"},
    // HA: the scheduling lease and its fencing token (store/lease.h). Expiry in microseconds of
    // the store clock.
    {2, "leader_lease", R"sql(
CREATE TABLE leader_lease (
  name       TEXT    PRIMARY KEY,
  holder     TEXT    NOT NULL,
  address    TEXT    NOT NULL,
  token      INTEGER NOT NULL,
  expires_us INTEGER NOT NULL
);
)sql"},
};

}  // namespace

std::span<const Migration> SqliteMigrations() { return kMigrations; }

}  // namespace abacus
