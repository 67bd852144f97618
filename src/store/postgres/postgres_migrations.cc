// The PostgreSQL schema: the same logical tables and versions as the SQLite schema
// (sqlite_migrations.cc), in PostgreSQL's dialect. Only append new migrations; never edit one
// that has shipped.
//
// Differences from SQLite, each for a reason:
// - Text columns that are ordered or compared use COLLATE "C" (byte order), so List and every
//   ordering match SQLite and the in-memory store whatever the database's locale.
// - Event seqs come from a counter row updated in the committing transaction, not from a
//   SEQUENCE: a sequence does not roll back, and a rolled-back batch must not consume seqs.
// - Journal seqs come from one head row per stream, also updated in the transaction: the row
//   lock keeps each stream dense (1, 2, 3, ...) even with concurrent writers.
// - The meta table takes future store-level rows such as a lease and a fencing token (HA).
// - abacus_version_conflict() raises SQLSTATE AB001: the pipelined fast path of a group commit
//   turns a failed version check into an error, so that the COMMIT sent behind it never runs.
// - leader_lease.expires_at is a TIMESTAMPTZ judged by the database server's clock (one clock for
//   every Abacus server); SQLite keeps microseconds of its store clock. abacus_check_fence()
//   raises SQLSTATE AB002 for the same reason as AB001, and locks the lease row FOR SHARE so
//   that a takeover (an UPDATE of that row) waits until the fenced transaction has finished.
#include "store/postgres/postgres_store.h"

namespace abacus {

namespace {

constexpr Migration kMigrations[] = {
    {1, "initial", R"sql(
CREATE TABLE meta (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE objects (
  kind       TEXT COLLATE "C" NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  version    BIGINT NOT NULL,
  json       TEXT   NOT NULL,
  updated_us BIGINT NOT NULL,
  PRIMARY KEY (kind, key)
);
CREATE TABLE events (
  seq         BIGINT PRIMARY KEY,
  object_kind TEXT COLLATE "C" NOT NULL,
  object_key  TEXT COLLATE "C" NOT NULL,
  time_us     BIGINT NOT NULL,
  type        TEXT   NOT NULL,
  json        TEXT   NOT NULL
);
CREATE INDEX events_by_object ON events (object_kind, object_key, seq);
CREATE TABLE journal (
  stream  TEXT COLLATE "C" NOT NULL,
  seq     BIGINT NOT NULL,
  time_us BIGINT NOT NULL,
  json    TEXT   NOT NULL,
  PRIMARY KEY (stream, seq)
);
CREATE TABLE seq_counters (
  name  TEXT COLLATE "C" PRIMARY KEY,
  value BIGINT NOT NULL
);
INSERT INTO seq_counters (name, value) VALUES ('events', 0);
CREATE TABLE journal_heads (
  stream   TEXT COLLATE "C" PRIMARY KEY,
  last_seq BIGINT NOT NULL
);
CREATE FUNCTION abacus_version_conflict() RETURNS BIGINT LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'version conflict' USING ERRCODE = 'AB001';
END
$fn$;
)sql"},
    {2, "leader_lease", R"sql(
CREATE TABLE leader_lease (
  name       TEXT COLLATE "C" PRIMARY KEY,
  holder     TEXT NOT NULL,
  address    TEXT NOT NULL,
  token      BIGINT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
CREATE FUNCTION abacus_check_fence(lease TEXT, expected BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $fn$
DECLARE
  current BIGINT;
BEGIN
  SELECT token INTO current FROM leader_lease WHERE name = lease FOR SHARE;
  IF current IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'fenced: lease token % is no longer current', expected USING ERRCODE = 'AB002';
  END IF;
  RETURN current;
END
$fn$;
)sql"},
};

}  // namespace

std::span<const Migration> PostgresMigrations() { return kMigrations; }

}  // namespace abacus
