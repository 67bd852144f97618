// The kill -9 durability check shared by the backends that outlive their process (SQLite
// files, PostgreSQL): a child commits through a GroupCommitter and is killed mid-stream; every
// acknowledged commit must be there afterwards.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/group_commit.h"
#include "store/store.h"

namespace abacus::testing_util {

// The child: commits batches through a GroupCommitter from several threads, forever, writing
// "KEY\n" to `fd` after each acknowledged commit. Never returns.
[[noreturn]] inline void CommitUntilKilled(const std::string& url, int fd) {
  auto store = OpenStore(url);
  if (!store.ok()) {
    std::string line = "ERR " + store.status().ToString() + "\n";
    (void)!write(fd, line.data(), line.size());
    _exit(1);
  }
  GroupCommitter committer(**store);
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (true) {
        std::string key = "k" + std::to_string(next++);
        WriteBatch batch;
        batch.Put("crash", key, R"({"key":")" + key + R"("})", 0)
            .AppendEvent("crash", key, "Written", "{}", SystemClock::Get().Now())
            .AppendJournal("crash", R"({"key":")" + key + R"("})", SystemClock::Get().Now());
        Status s = committer.Submit(batch);
        std::string line = s.ok() ? key + "\n" : "ERR " + s.ToString() + "\n";
        if (write(fd, line.data(), line.size()) < 0) _exit(2);  // one write: atomic on a pipe
      }
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

// Forks a child that commits through `url` until it is killed with SIGKILL mid-stream, then
// checks that every commit the child saw acknowledged is in the store, and that batches stayed
// atomic. `url` must name an empty store that survives the child (a file, a database server).
inline void ExpectAcknowledgedCommitsSurviveKill9(const std::string& url) {
  constexpr size_t kAcksBeforeKill = 2000;

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    CommitUntilKilled(url, fds[1]);
  }
  close(fds[1]);

  // 1) Read acknowledgements until enough have arrived, then kill the child mid-stream.
  std::string buffer;
  std::vector<std::string> acked;
  bool killed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char chunk[4096];
  while (true) {
    if (!killed && (acked.size() >= kAcksBeforeKill || std::chrono::steady_clock::now() > deadline)) {
      kill(child, SIGKILL);
      killed = true;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (poll(&pfd, 1, 1000) <= 0) continue;
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // EOF: the child is gone and every line it wrote has been read
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      acked.push_back(buffer.substr(start, nl - start));
    }
    buffer.erase(0, start);
  }
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
      << "child exited early: " << (acked.empty() ? std::string("no output") : acked.back());
  EXPECT_TRUE(buffer.empty()) << "torn line: " << buffer;
  ASSERT_GE(acked.size(), kAcksBeforeKill);

  // 2) Reopen (recovering the WAL) and look for every acknowledged key.
  auto store = OpenStore(url);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::set<std::string> unique;
  size_t missing = 0;
  for (const std::string& key : acked) {
    ASSERT_FALSE(key.starts_with("ERR")) << key;
    EXPECT_TRUE(unique.insert(key).second) << "acknowledged twice: " << key;
    auto record = (*store)->Get("crash", key);
    ASSERT_TRUE(record.ok());
    if (!record->has_value()) {
      ++missing;
      continue;
    }
    EXPECT_EQ((*record)->version, 1);
    EXPECT_EQ((*store)->Events("crash", key)->size(), 1u) << key;
  }
  EXPECT_EQ(missing, 0u) << "acknowledged commits lost after kill -9";

  // 3) Batches stayed atomic: every stored object has exactly one journal entry, no more.
  auto objects = (*store)->List("crash");
  auto journal = (*store)->Journal("crash");
  ASSERT_TRUE(objects.ok() && journal.ok());
  EXPECT_GE(objects->size(), acked.size());  // commits in flight at the kill may have landed
  EXPECT_EQ(journal->size(), objects->size());
  std::set<std::string> journaled;
  for (const JournalRecord& entry : *journal) journaled.insert(entry.json);
  EXPECT_EQ(journaled.size(), journal->size()) << "a journal entry was written twice";
}

}  // namespace abacus::testing_util
