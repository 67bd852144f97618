#include "store/data_folder_lock.h"
#include "store/postgres/pg_conn.h"

namespace abacus {
namespace {

// The advisory lock key: "ABACUS" and 1, as one bigint (classid 0x41424143, objid 0x55530001).
constexpr int64_t kWriterLockKey = 0x4142414355530001LL;
constexpr char kTryExclusive[] = "SELECT pg_try_advisory_lock($1)::int";
constexpr char kTryShared[] = "SELECT pg_try_advisory_lock_shared($1)::int";
constexpr char kHolder[] =
    "SELECT l.pid, COALESCE(host(a.client_addr), 'a local socket') FROM pg_locks l"
    " LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 1094861635 AND l.objid = 1431502849"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND l.pid <> pg_backend_pid() LIMIT 1";

}  // namespace

class PgSessionLock {
 public:
  explicit PgSessionLock(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}

 private:
  std::unique_ptr<PgConnection> conn_;  // the session that holds the lock
};

void PgSessionLockDeleter::operator()(PgSessionLock* lock) const { delete lock; }

Result<PostgresWriterLock> LockPostgresWriters(const std::string& url, bool shared) {
  ABACUS_ASSIGN_OR_RETURN(auto conn, PgConnection::Open(url, "the PostgreSQL store"));
  ABACUS_ASSIGN_OR_RETURN(PgResult got, conn->Query(shared ? kTryShared : kTryExclusive, PgParams().Add(kWriterLockKey)));
  if (got.rows() == 1 && got.Int(0, 0) == 1) return PostgresWriterLock(new PgSessionLock(std::move(conn)));
  std::string holder = "another Abacus server";
  if (auto who = conn->Query(kHolder); who.ok() && who->rows() > 0) {
    holder += " (PostgreSQL backend pid " + who->Text(0, 0) + ", client " + who->Text(0, 1) + ")";
  }
  return FailedPrecondition(std::string("the PostgreSQL store is in use by ") + holder +
                            (shared ? " running without --ha" : "") +
                            ": servers that share one database must all run with --ha (docs/operations.md)");
}

}  // namespace abacus
