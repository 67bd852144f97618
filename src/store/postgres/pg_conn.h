// Thin RAII wrappers over libpq: a connection with a cache of prepared statements, a result,
// and text-format parameters. Errors become Status values naming the database (never the
// password) and PostgreSQL's SQLSTATE. Not thread-safe; PostgresStore guards each connection.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace abacus {

// The parameters of one statement, in order, as text (libpq's text format).
class PgParams {
 public:
  // Adds a text parameter. Text holding a NUL byte cannot travel as text: Add records an
  // InvalidArgument that the query reports.
  PgParams& Add(std::string_view text);
  PgParams& Add(int64_t value);

  const std::vector<std::string>& values() const { return values_; }
  const Status& status() const { return status_; }

 private:
  std::vector<std::string> values_;
  Status status_;
};

// Owns one PGresult.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* result) : result_(result) {}
  PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  // Returns the number of rows returned.
  int rows() const;
  // Returns the number of rows an INSERT/UPDATE/DELETE touched.
  int64_t affected() const;
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;
  pg_result* get() const { return result_; }

 private:
  pg_result* result_ = nullptr;
};

// One statement of a pipeline: `sql` (static storage; prepared once per connection) with its
// parameters. Statements without parameters (BEGIN) may be passed with prepared = false.
struct PgQuery {
  const char* sql;
  PgParams params;
  bool prepared = true;
};

class PgConnection {
 public:
  // Connects to the libpq connection string or URI `conninfo`. Unavailable when the server
  // cannot be reached, naming `name` (a description without the password).
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& conninfo,
                                                    const std::string& name);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one or more statements without parameters (schema, BEGIN, COMMIT, SAVEPOINT).
  Status Exec(std::string_view sql);
  // Runs `sql` (prepared once per connection; `sql` must have static storage duration: the
  // cache is keyed by its address) with `params`, returning its rows.
  Result<PgResult> Query(const char* sql, const PgParams& params = {});
  // Query for reads outside a transaction: when the connection turns out to be dropped (a
  // server restart, a failover), reconnects and runs the query once more.
  Result<PgResult> Read(const char* sql, const PgParams& params = {});
  // Runs `queries` in libpq pipeline mode: they are sent without waiting for each other's
  // results (one round trip per 256 statements instead of one each), and fills `results` with
  // one result per query, in order. Returns the first error; the statements after it did not
  // run, and an open transaction is left aborted (the caller rolls it back).
  Status Pipeline(std::span<const PgQuery> queries, std::vector<PgResult>& results);
  // Returns whether a transaction is open (or failed and not yet rolled back).
  bool InTransaction() const;
  // Reconnects when the connection was lost. OK when it is usable.
  Status EnsureConnected();

  // Returns "postgresql://USER@HOST:PORT/DB" (no password) for this connection.
  std::string Describe() const;

 private:
  explicit PgConnection(pg_conn* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  // Opens a new session on the same connection settings.
  Status Reconnect();
  // Returns the name of the prepared statement for `sql`, preparing it on first use.
  Result<const std::string*> Prepared(const char* sql);
  // Returns the Status of a failed `result` (may be null) during `what`.
  Status Error(const pg_result* result, std::string_view what) const;

  pg_conn* conn_;
  std::string name_;
  std::unordered_map<const char*, std::string> prepared_;  // sql -> statement name
};

}  // namespace abacus
