// For tests: a PostgreSQL server and fresh databases on it. The server is the one a ctest
// fixture started (scripts/pg-test.sh start $ABACUS_TEST_PG_DIR), or else one this process
// starts with scripts/pg-test.sh in a scratch folder and stops at exit. When the PostgreSQL
// server binaries are absent, available() is false and skip_reason() says why; tests then
// GTEST_SKIP, unless ABACUS_REQUIRE_PG=1 (CI), where they fail instead.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <sys/wait.h>

#include "common/status.h"
#include "store/postgres/pg_conn.h"

#ifndef ABACUS_SOURCE_DIR
#error "pg_test_server.h needs ABACUS_SOURCE_DIR (the repository root) to find scripts/pg-test.sh"
#endif

namespace abacus::testing_util {

class PgTestServer {
 public:
  // Returns the server shared by this process, starting it on first use.
  static PgTestServer& Get() {
    static PgTestServer server;
    return server;
  }

  bool available() const { return !url_.empty(); }
  // Whether the server is missing only because PostgreSQL is not installed (tests skip then).
  bool binaries_absent() const { return absent_; }
  // Why no server is available ("" when one is).
  const std::string& skip_reason() const { return reason_; }
  // Whether a missing server must fail the test instead of skipping it.
  static bool required() {
    const char* v = getenv("ABACUS_REQUIRE_PG");
    return v != nullptr && std::string(v) == "1";
  }
  // The URL of the server's "abacus" database.
  const std::string& url() const { return url_; }

  // Returns the URL of database `name` on this server.
  std::string UrlOf(const std::string& name) const {
    std::string out = url_;
    size_t q = out.find('?');
    size_t slash = out.rfind('/', q == std::string::npos ? out.size() : q);
    size_t end = q == std::string::npos ? out.size() : q;
    return out.replace(slash + 1, end - slash - 1, name);
  }

  // Runs `sql` on the "abacus" database.
  Status Exec(const std::string& sql) const {
    ABACUS_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(url_, "test"));
    return conn->Exec(sql);
  }

  ~PgTestServer() {
    if (own_dir_.empty()) return;
    Script("stop " + own_dir_ + "/cluster");
    std::error_code ignored;
    std::filesystem::remove_all(own_dir_, ignored);
  }

 private:
  PgTestServer() {
    const char* fixture = getenv("ABACUS_TEST_PG_DIR");
    if (fixture != nullptr && *fixture && ReadUrl(std::string(fixture) + "/url")) return;
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/abacus-pg-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      reason_ = "cannot create a scratch folder for PostgreSQL";
      return;
    }
    std::string dir = pattern + "/cluster";
    int code = Script("start " + dir + " >/dev/null 2>" + pattern + "/start.err");
    own_dir_ = pattern;
    if (code == 0 && ReadUrl(dir + "/url")) return;
    std::ifstream err(pattern + "/start.err");
    std::string why((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    absent_ = code == 3;
    reason_ = code == 3 ? "PostgreSQL server binaries are not installed (Debian package "
                          "'postgresql'; scripts/install-deps.sh installs it): " + why
                        : "scripts/pg-test.sh could not start PostgreSQL: " + why;
  }

  static int Script(const std::string& args) {
    std::string cmd = std::string("'") + ABACUS_SOURCE_DIR + "/scripts/pg-test.sh' " + args;
    int status = system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  bool ReadUrl(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line) || line.empty()) return false;
    url_ = line;
    return true;
  }

  std::string url_;
  std::string reason_;
  std::string own_dir_;
  bool absent_ = false;
};

// A fresh, empty database on the test server, dropped on destruction.
class PgTestDatabase {
 public:
  PgTestDatabase() {
    PgTestServer& server = PgTestServer::Get();
    if (!server.available()) {
      status_ = Unavailable(server.skip_reason());
      return;
    }
    static std::atomic<int> counter{0};
    name_ = "t_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
            std::to_string(std::random_device()() % 100000);
    status_ = server.Exec("CREATE DATABASE " + name_);
    if (status_.ok()) url_ = server.UrlOf(name_);
  }
  ~PgTestDatabase() {
    if (!url_.empty()) {
      (void)PgTestServer::Get().Exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    }
  }
  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;

  // OK when the database exists; Unavailable (with the skip reason) when there is no server.
  const Status& status() const { return status_; }
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

 private:
  Status status_;
  std::string name_;
  std::string url_;
};

}  // namespace abacus::testing_util

// In a test body: skips when `db` has no server because PostgreSQL is not installed (fails
// instead with ABACUS_REQUIRE_PG=1, as CI sets); fails on any other error.
#define ABACUS_REQUIRE_PG_DATABASE(db)                                                 \
  do {                                                                                 \
    if (!(db).status().ok()) {                                                         \
      if (::abacus::testing_util::PgTestServer::Get().binaries_absent() &&             \
          !::abacus::testing_util::PgTestServer::required()) {                         \
        GTEST_SKIP() << "PostgreSQL not available: " << (db).status().message();       \
      }                                                                                \
      FAIL() << (db).status().ToString();                                              \
    }                                                                                  \
  } while (0)
