// The running server checks its audit chain in the background and says so in /metrics: an
// entry edited in the database behind its back turns abacus_audit_chain_ok to 0 (the
// AbacusAuditChainBroken alert, packaging/prometheus/abacus-rules.yaml).
#include "server/audit_watch.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "server/control_plane.h"

namespace abacus::server {
namespace {

class AuditWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("abacus-audit-watch-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.clock = &clock_;
    o.audit_check_every = Duration::zero();  // the test runs each check itself
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
    // Three decisions on acme's work, written to the chain before the test reads it.
    for (const char* w : {"w1", "w2", "w3"}) {
      cp_->governance().AppendDecision("scheduler", "admit", "workload", w, "acme", "Pending", "Admitted");
    }
    cp_->governance().FlushAudit();
  }
  void TearDown() override {
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "abacus.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  std::filesystem::path dir_;
  ManualClock clock_;
  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(AuditWatchTest, NothingIsSaidBeforeTheFirstCheck) {
  const std::string metrics = cp_->RenderMetrics();
  EXPECT_NE(metrics.find("# TYPE abacus_audit_chain_ok gauge\n"), std::string::npos);
  EXPECT_EQ(metrics.find("\nabacus_audit_chain_ok "), std::string::npos) << metrics;
}

TEST_F(AuditWatchTest, AWholeChainIsOkAndAnEditedEntryTurnsTheGaugeToZero) {
  AuditWatch::Last l = cp_->audit_watch().CheckNow();
  EXPECT_TRUE(l.ok) << l.reason;
  EXPECT_GE(l.checked, 3);
  EXPECT_NE(cp_->RenderMetrics().find("\nabacus_audit_chain_ok 1\n"), std::string::npos);
  // An operator with file access rewrites the first entry.
  Sql("UPDATE journal SET json = replace(json, 'acme', 'evil') WHERE stream = 'audit' AND seq = 1");
  l = cp_->audit_watch().CheckNow();
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(l.first_bad_seq, 1) << l.reason;
  const std::string metrics = cp_->RenderMetrics();
  EXPECT_NE(metrics.find("\nabacus_audit_chain_ok 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nabacus_audit_chain_last_check_timestamp_seconds "), std::string::npos);
}

TEST_F(AuditWatchTest, TheNewestEntriesRemovedAreFound) {
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq = (SELECT MAX(seq) FROM journal WHERE stream = 'audit')");
  AuditWatch::Last l = cp_->audit_watch().CheckNow();
  EXPECT_FALSE(l.ok);
  EXPECT_NE(l.reason.find("removed"), std::string::npos) << l.reason;
}

// A database rolled back to an older backup holds a whole chain — and one that ends before the
// newest anchor. The background check read only the chain, so abacus_audit_chain_ok stayed 1
// while `abacus audit --verify` said broken (the fifth probe); it checks the anchors too.
TEST_F(AuditWatchTest, ADatabaseRolledBackBehindItsAnchorsTurnsTheGaugeToZero) {
  auto reopen = [&] {
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.clock = &clock_;
    o.audit_check_every = Duration::zero();
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
  };
  cp_.reset();  // anchored at its head as it stops
  const std::filesystem::path backup = dir_ / "abacus.db.backup";
  std::filesystem::copy_file(dir_ / "abacus.db", backup);
  reopen();
  for (const char* w : {"w4", "w5", "w6"}) {
    cp_->governance().AppendDecision("scheduler", "admit", "workload", w, "acme", "Pending", "Admitted");
  }
  cp_.reset();  // anchored past the backup's head
  std::filesystem::copy_file(backup, dir_ / "abacus.db", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(dir_ / "abacus.db-wal");
  std::filesystem::remove(dir_ / "abacus.db-shm");
  reopen();
  AuditWatch::Last l = cp_->audit_watch().CheckNow();
  EXPECT_FALSE(l.ok);
  EXPECT_NE(l.reason.find("was anchored at"), std::string::npos) << l.reason;
  EXPECT_NE(cp_->RenderMetrics().find("\nabacus_audit_chain_ok 0\n"), std::string::npos);
}

}  // namespace
}  // namespace abacus::server
