// Helpers shared by the store tests: a scratch folder, and a store whose commits wait at a gate
// so that a test can decide which batches end up in one group.
#pragma once

#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>

#include "store/store.h"

namespace abacus::testing_util {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/abacus-store-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Returns the folder, or "" when it could not be created.
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Forwards to another store; while closed, CommitGroup waits at the gate before committing.
class GatedStore final : public Store {
 public:
  explicit GatedStore(Store& inner) : inner_(inner) {}

  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until `n` CommitGroup calls have arrived at the gate (passed or waiting).
  void WaitForArrivals(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrivals_ >= n; });
  }

  void CommitGroup(std::span<const WriteBatch* const> batches,
                   std::span<CommitResult* const> results, std::span<Status> statuses) override {
    {
      std::unique_lock lock(mu_);
      ++arrivals_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    inner_.CommitGroup(batches, results, statuses);
  }
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override {
    return inner_.Get(kind, key);
  }
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override {
    return inner_.List(kind);
  }
  Result<int64_t> Count(std::string_view kind) override { return inner_.Count(kind); }
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key,
                                          int64_t after_seq, size_t limit) override {
    return inner_.Events(kind, key, after_seq, limit);
  }
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq,
                                             size_t limit) override {
    return inner_.Journal(stream, after_seq, limit);
  }
  Result<std::optional<std::string>> GetMeta(std::string_view key) override {
    return inner_.GetMeta(key);
  }
  std::string Describe() const override { return "gated:" + inner_.Describe(); }

 private:
  Store& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;   // GUARDED_BY(mu_)
  int arrivals_ = 0;   // GUARDED_BY(mu_)
};

}  // namespace abacus::testing_util
