#include "store/postgres/pg_conn.h"

#include "store/postgres/libpq.h"


#include <algorithm>
#include <cstdlib>
#include <vector>

#include "store/storage_full.h"

namespace abacus {

PgParams& PgParams::Add(std::string_view text) {
  if (text.find('\0') != std::string_view::npos && status_.ok()) {
    status_ = InvalidArgument("parameter " + std::to_string(values_.size() + 1) +
                              " holds a NUL byte, which PostgreSQL text cannot store");
  }
  values_.emplace_back(text);
  return *this;
}

PgParams& PgParams::Add(int64_t value) {
  values_.push_back(std::to_string(value));
  return *this;
}

PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) Pq().clear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}

PgResult::~PgResult() {
  if (result_ != nullptr) Pq().clear(result_);
}

int PgResult::rows() const { return result_ ? Pq().ntuples(result_) : 0; }

int64_t PgResult::affected() const {
  const char* n = result_ ? Pq().cmdTuples(result_) : "";
  return *n ? std::strtoll(n, nullptr, 10) : 0;
}

std::string PgResult::Text(int row, int column) const {
  return std::string(Pq().getvalue(result_, row, column),
                     static_cast<size_t>(Pq().getlength(result_, row, column)));
}

int64_t PgResult::Int(int row, int column) const {
  return std::strtoll(Pq().getvalue(result_, row, column), nullptr, 10);
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& conninfo,
                                                         const std::string& name) {
  if (auto pq = LoadLibPq(); !pq.ok()) return pq.status();
  pg_conn* conn = Pq().connectdb(conninfo.c_str());
  if (conn == nullptr) return Unavailable("PostgreSQL " + name + ": out of memory connecting");
  if (Pq().status(conn) != CONNECTION_OK) {
    std::string message = Pq().errorMessage(conn);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    Pq().finish(conn);
    return Unavailable("PostgreSQL " + name + ": cannot connect: " + message);
  }
  std::unique_ptr<PgConnection> out(new PgConnection(conn, name));
  // Quiet NOTICEs (e.g. "relation already exists, skipping") instead of printing them.
  Pq().setNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  ABACUS_RETURN_IF_ERROR(out->Exec("SET client_min_messages = warning"));
  return out;
}

PgConnection::~PgConnection() { Pq().finish(conn_); }

Status PgConnection::Error(const pg_result* result, std::string_view what) const {
  std::string message = result ? Pq().resultErrorMessage(result) : Pq().errorMessage(conn_);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state = result ? Pq().resultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string sqlstate = state ? state : "";
  std::string text = "PostgreSQL " + name_ + ": " + std::string(what) + ": " + message;
  if (!sqlstate.empty()) text += " (SQLSTATE " + sqlstate + ")";
  // Class 53: 53100 disk_full (and 53200 out of memory, 53300 too many connections: unavailable).
  if (sqlstate == "53100") return StorageFullError(std::move(text));
  if (Pq().status(conn_) == CONNECTION_BAD || sqlstate.starts_with("08") ||
      sqlstate.starts_with("57P") || sqlstate.starts_with("53")) {
    return Unavailable(std::move(text));
  }
  if (sqlstate.starts_with("40")) return Aborted(std::move(text));  // serialization, deadlock
  if (sqlstate.starts_with("23")) return Aborted(std::move(text));  // constraint violation
  if (sqlstate.starts_with("22")) return InvalidArgument(std::move(text));  // bad data
  return Internal(std::move(text));
}

Status PgConnection::Exec(std::string_view sql) {
  PgResult result(Pq().exec(conn_, std::string(sql).c_str()));
  ExecStatusType st = result.get() ? Pq().resultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string_view first = sql.substr(0, sql.find_first_of(" \n"));
    return Error(result.get(), first.empty() ? "statement" : first);
  }
  return Status::OK();
}

Result<const std::string*> PgConnection::Prepared(const char* sql) {
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "abacus_" + std::to_string(prepared_.size() + 1);
    PgResult prepared(Pq().prepare(conn_, name.c_str(), sql, 0, nullptr));
    if (!prepared.get() || Pq().resultStatus(prepared.get()) != PGRES_COMMAND_OK) {
      return Error(prepared.get(), "preparing a statement");
    }
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  return &it->second;
}

namespace {

std::vector<const char*> Values(const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.values().size());
  for (const std::string& v : params.values()) values.push_back(v.c_str());
  return values;
}

}  // namespace

Status PgConnection::Pipeline(std::span<const PgQuery> queries, std::vector<PgResult>& results) {
  constexpr size_t kChunk = 256;  // small enough that neither side's socket buffer fills up
  results.clear();
  results.reserve(queries.size());
  std::vector<const std::string*> names(queries.size(), nullptr);
  for (size_t i = 0; i < queries.size(); ++i) {
    ABACUS_RETURN_IF_ERROR(queries[i].params.status());
    if (queries[i].prepared) {
      ABACUS_ASSIGN_OR_RETURN(names[i], Prepared(queries[i].sql));
    }
  }
  if (Pq().enterPipelineMode(conn_) != 1) return Error(nullptr, "entering pipeline mode");
  Status status;
  for (size_t next = 0; next < queries.size() && status.ok();) {
    const size_t end = std::min(queries.size(), next + kChunk);
    size_t sent = next;
    for (; sent < end; ++sent) {
      const PgQuery& q = queries[sent];
      std::vector<const char*> values = Values(q.params);
      int ok = names[sent] != nullptr
                   ? Pq().sendQueryPrepared(conn_, names[sent]->c_str(), static_cast<int>(values.size()),
                                         values.data(), nullptr, nullptr, 0)
                   : Pq().sendQueryParams(conn_, q.sql, 0, nullptr, nullptr, nullptr, nullptr, 0);
      if (ok != 1) {
        status = Error(nullptr, "sending a pipelined statement");
        break;
      }
    }
    if (Pq().pipelineSync(conn_) != 1 && status.ok()) status = Error(nullptr, "pipeline sync");
    // One result per statement sent (then a NULL that ends it), then the sync point.
    for (size_t i = next; i < sent; ++i) {
      PgResult result(Pq().getResult(conn_));
      if (result.get() == nullptr) {
        if (status.ok()) status = Error(nullptr, "reading a pipelined result");
        break;
      }
      while (pg_result* extra = Pq().getResult(conn_)) Pq().clear(extra);
      ExecStatusType st = Pq().resultStatus(result.get());
      if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (status.ok()) results.push_back(std::move(result));
      } else if (status.ok()) {
        status = st == PGRES_PIPELINE_ABORTED ? Aborted("pipeline aborted")
                                              : Error(result.get(), "query");
      }
    }
    if (Pq().status(conn_) == CONNECTION_OK) {
      PgResult sync(Pq().getResult(conn_));
      if ((!sync.get() || Pq().resultStatus(sync.get()) != PGRES_PIPELINE_SYNC) && status.ok()) {
        status = Error(sync.get(), "pipeline sync result");
      }
    }
    next = end;
  }
  if (Pq().exitPipelineMode(conn_) != 1) {
    // Results were left unread (a broken connection): start a fresh session rather than
    // guess where the protocol stands. The server rolls back the open transaction.
    if (status.ok()) status = Error(nullptr, "leaving pipeline mode");
    (void)Reconnect();
  }
  return status;
}

Result<PgResult> PgConnection::Query(const char* sql, const PgParams& params) {
  ABACUS_RETURN_IF_ERROR(params.status());
  ABACUS_ASSIGN_OR_RETURN(const std::string* name, Prepared(sql));
  std::vector<const char*> values = Values(params);
  PgResult result(Pq().execPrepared(conn_, name->c_str(), static_cast<int>(values.size()),
                                 values.data(), nullptr, nullptr, /*resultFormat=*/0));
  ExecStatusType st = result.get() ? Pq().resultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(result.get(), "query");
  return result;
}

Result<PgResult> PgConnection::Read(const char* sql, const PgParams& params) {
  Result<PgResult> first = Query(sql, params);
  if (first.ok() || Pq().status(conn_) == CONNECTION_OK) return first;
  ABACUS_RETURN_IF_ERROR(Reconnect());
  return Query(sql, params);
}

bool PgConnection::InTransaction() const {
  PGTransactionStatusType st = Pq().transactionStatus(conn_);
  return st == PQTRANS_INTRANS || st == PQTRANS_INERROR || st == PQTRANS_ACTIVE;
}

Status PgConnection::EnsureConnected() {
  if (Pq().status(conn_) == CONNECTION_OK) return Status::OK();
  return Reconnect();
}

Status PgConnection::Reconnect() {
  Pq().reset(conn_);
  prepared_.clear();  // a new session has no prepared statements
  if (Pq().status(conn_) != CONNECTION_OK) return Error(nullptr, "reconnecting");
  Pq().setNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  return Exec("SET client_min_messages = warning");
}

std::string PgConnection::Describe() const {
  std::string host = Pq().host(conn_) ? Pq().host(conn_) : "";
  std::string user = Pq().user(conn_) ? Pq().user(conn_) : "";
  std::string db = Pq().db(conn_) ? Pq().db(conn_) : "";
  std::string port = Pq().port(conn_) ? Pq().port(conn_) : "";
  std::string who = user.empty() ? "" : user + "@";
  if (host.empty() || host.front() == '/') {  // a unix socket folder
    return "postgresql://" + who + "/" + db + (host.empty() ? "" : "?host=" + host);
  }
  return "postgresql://" + who + host + (port.empty() ? "" : ":" + port) + "/" + db;
}

}  // namespace abacus
