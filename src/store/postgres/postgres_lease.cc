// The scheduling lease on PostgreSQL (store/lease.h): one row per lease in `leader_lease`,
// taken, renewed or left alone by one statement that states DecideLease's rule in SQL, with the
// database server's clock as the only judge of expiry. A statement runs on a read connection
// (reconnected and retried once after a dropped connection: taking or renewing is idempotent for
// one holder).
#include "store/postgres/pg_conn.h"
#include "store/postgres/postgres_store.h"

namespace abacus {

namespace {

// $1 name, $2 holder, $3 address, $4 ttl in microseconds. The fallback SELECT reads the snapshot
// from before the upsert: the row as another holder keeps it.
constexpr char kAcquire[] =
    "WITH up AS ("
    " INSERT INTO leader_lease AS l (name, holder, address, token, expires_at)"
    " VALUES ($1, $2, $3, 1, clock_timestamp() + $4::float8 * interval '1 microsecond')"
    " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, address = excluded.address,"
    " token = CASE WHEN l.holder = excluded.holder THEN l.token ELSE l.token + 1 END,"
    " expires_at = excluded.expires_at"
    " WHERE l.holder = excluded.holder OR l.expires_at <= clock_timestamp()"
    " RETURNING holder, address, token)"
    " SELECT 1::BIGINT, holder, address, token FROM up"
    " UNION ALL"
    " SELECT 0::BIGINT, holder, address, token FROM leader_lease"
    " WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM up)";
constexpr char kRelease[] =
    "UPDATE leader_lease SET expires_at = clock_timestamp()"
    " WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()";

}  // namespace

Result<LeaseState> PostgresStore::TryAcquireLease(std::string_view name, std::string_view holder,
                                                  std::string_view address, Duration ttl) {
  ABACUS_RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  ABACUS_ASSIGN_OR_RETURN(PgResult r,
                          RunOnReader(kAcquire, PgParams().Add(name).Add(holder).Add(address).Add(ttl.count())));
  // No row: another server created the lease after this statement's snapshot; it holds it.
  if (r.rows() == 0) return LeaseState{};
  return LeaseState{r.Int(0, 0) == 1, r.Text(0, 1), r.Text(0, 2), r.Int(0, 3)};
}

Status PostgresStore::ReleaseLease(std::string_view name, std::string_view holder) {
  return RunOnReader(kRelease, PgParams().Add(name).Add(holder)).status();
}

}  // namespace abacus
