// Helpers shared by the store and server tests: a scratch folder, a store that forwards to
// another, and a store whose commits wait at a gate (or are refused) so that a test can decide
// which batches end up in one group, or what a reader sees while a commit is in flight.
#pragma once

#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "store/forwarding_store.h"
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

// The product's ForwardingStore (store/forwarding_store.h): a test overrides what it intercepts.
using ForwardingStore = ::abacus::ForwardingStore;

// A store whose commits wait at a gate while it is closed. `holds` picks the commits the gate
// applies to (null: every commit); a held commit is refused with Unavailable while `Fail` is on.
class GatedStore final : public ForwardingStore {
 public:
  using Holds = std::function<bool(std::span<const WriteBatch* const> batches)>;
  explicit GatedStore(Store& inner, Holds holds = nullptr) : ForwardingStore(inner), holds_(std::move(holds)) {}
  explicit GatedStore(std::unique_ptr<Store> owned, Holds holds = nullptr)
      : ForwardingStore(std::move(owned)), holds_(std::move(holds)) {}

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
  // Refuses (on) or lets through (off) the commits the gate applies to.
  void Fail(bool fail) { failing_.store(fail); }
  // Blocks until `n` CommitGroup calls the gate applies to have arrived (passed or waiting).
  void WaitForArrivals(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrivals_ >= n; });
  }

  void CommitGroup(std::span<const WriteBatch* const> batches,
                   std::span<CommitResult* const> results, std::span<Status> statuses) override {
    if (holds_ && !holds_(batches)) return ForwardingStore::CommitGroup(batches, results, statuses);
    {
      std::unique_lock lock(mu_);
      ++arrivals_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    if (failing_.load()) {
      for (Status& s : statuses) s = Unavailable("test: the gate refuses this commit");
      return;
    }
    ForwardingStore::CommitGroup(batches, results, statuses);
  }
  std::string Describe() const override { return "gated:" + ForwardingStore::Describe(); }

 private:
  Holds holds_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;   // GUARDED_BY(mu_)
  int arrivals_ = 0;   // GUARDED_BY(mu_)
  std::atomic<bool> failing_{false};
};

}  // namespace abacus::testing_util
