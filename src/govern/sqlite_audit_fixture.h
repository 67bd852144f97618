// SqliteAuditFixture: a gtest fixture with an audit log in a real SQLite store under a fresh
// temporary folder, and raw SQL to tamper with it behind the log's back (audit tests).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "govern/audit.h"
#include "store/store.h"

namespace abacus::govern {

class SqliteAuditFixture : public ::testing::Test {
 protected:
  // Makes the folder and store, then appends record(1..count) through a log, `step` apart.
  void SetUpLog(int count, const std::function<AuditRecord(int)>& record, Duration step = Duration::zero()) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/abacus-audit-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/abacus.db";
    OpenedLog opened = OpenLog();
    ASSERT_NE(opened.log, nullptr);
    for (int i = 1; i <= count; ++i) {
      ASSERT_TRUE(opened.log->Append(record(i)).ok());
      clock_.Advance(step);
    }
    head_ = opened.log->head();
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  // Runs `sql` on the database file directly.
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  struct OpenedLog {
    std::unique_ptr<Store> store;
    std::unique_ptr<AuditLog> log;  // over `store`; null when opening failed
  };
  // Opens the log afresh over the file, as a new server would (a null log, with a test failure,
  // when it cannot).
  OpenedLog OpenLog() {
    OpenedLog out;
    auto store = OpenStore("sqlite://" + path_, {&clock_});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return out;
    out.store = std::move(*store);
    auto log = AuditLog::Open(*out.store, clock_);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    if (log.ok()) out.log = std::move(*log);
    return out;
  }

  ManualClock clock_;
  std::string dir_, path_;
  AuditHead head_;  // after SetUpLog
};

}  // namespace abacus::govern
