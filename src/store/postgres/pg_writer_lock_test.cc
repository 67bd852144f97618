#include <gtest/gtest.h>

#include "store/data_folder_lock.h"
#include "store/postgres/pg_test_server.h"

namespace abacus {
namespace {

using testing_util::PgTestDatabase;

TEST(PgWriterLockTest, OneExclusiveHolderOrSharedHoldersPerDatabase) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  auto first = LockPostgresWriters(db.url(), /*shared=*/false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = LockPostgresWriters(db.url(), false);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("the PostgreSQL store is in use by another Abacus server"), std::string::npos)
      << second.status().message();
  EXPECT_FALSE(LockPostgresWriters(db.url(), /*shared=*/true).ok());  // an HA leader: refused too
  first->reset();  // the connection closed: the lock is free
  auto leader_a = LockPostgresWriters(db.url(), true);
  auto leader_b = LockPostgresWriters(db.url(), true);
  EXPECT_TRUE(leader_a.ok() && leader_b.ok());  // HA leaders share it (the lease decides)
  EXPECT_FALSE(LockPostgresWriters(db.url(), false).ok());
}

}  // namespace
}  // namespace abacus
