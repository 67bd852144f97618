// The scheduling lease on SQLite (store/lease.h): one row per lease in `leader_lease`, read and
// written in an IMMEDIATE transaction, so that processes sharing the file take turns. Expiry
// uses the store clock. A single server (`abacus up`, `abacus server` without --ha) never asks.
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"

namespace abacus {

namespace {

constexpr char kReadLease[] = "SELECT holder, address, token, expires_us FROM leader_lease WHERE name = ?";
constexpr char kWriteLease[] =
    "INSERT INTO leader_lease (name, holder, address, token, expires_us) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, address = excluded.address,"
    " token = excluded.token, expires_us = excluded.expires_us";
constexpr char kLeaseToken[] = "SELECT token FROM leader_lease WHERE name = ?";

}  // namespace

Result<std::optional<LeaseRow>> SqliteStore::ReadLease(std::string_view name) {
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, writer_->Query(kReadLease));
  q.Bind(name);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::optional<LeaseRow>();
  return std::optional<LeaseRow>(LeaseRow{q.ColumnText(0), q.ColumnText(1), q.ColumnInt(2), q.ColumnInt(3)});
}

Status SqliteStore::WriteLease(std::string_view name, const LeaseRow& row) {
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, writer_->Query(kWriteLease));
  return q.Bind(name).Bind(row.holder).Bind(row.address).Bind(row.token).Bind(row.expires_us).Run();
}

Status SqliteStore::CheckBatchFence(const LeaseFence& fence) {
  ABACUS_ASSIGN_OR_RETURN(SqliteQuery q, writer_->Query(kLeaseToken));
  q.Bind(fence.name);
  ABACUS_ASSIGN_OR_RETURN(bool row, q.Step());
  return CheckFence(fence, row ? std::optional<int64_t>(q.ColumnInt(0)) : std::nullopt);
}

Result<LeaseState> SqliteStore::TryAcquireLease(std::string_view name, std::string_view holder,
                                                std::string_view address, Duration ttl) {
  ABACUS_RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  LeaseState state;
  ABACUS_RETURN_IF_ERROR(InWriteTransaction([&]() REQUIRES(write_mu_) -> Status {
    ABACUS_ASSIGN_OR_RETURN(std::optional<LeaseRow> current, ReadLease(name));
    std::optional<LeaseRow> next = DecideLease(current, holder, address, ToMicros(clock_.Now()), ttl, state);
    return next ? WriteLease(name, *next) : Status::OK();
  }));
  return state;
}

Status SqliteStore::ReleaseLease(std::string_view name, std::string_view holder) {
  return InWriteTransaction([&]() REQUIRES(write_mu_) -> Status {
    ABACUS_ASSIGN_OR_RETURN(std::optional<LeaseRow> current, ReadLease(name));
    std::optional<LeaseRow> next = ReleasedLease(current, holder, ToMicros(clock_.Now()));
    return next ? WriteLease(name, *next) : Status::OK();
  });
}

}  // namespace abacus
