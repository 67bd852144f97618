// LeaseKeeper: one server's hold on the scheduling lease (HA, docs/operations.md "HA pair with
// PostgreSQL"). A thread tries to take or renew the lease in the store every `renew_every`, for
// `ttl`; the keeper remembers the outcome: whether this server leads (under which fencing
// token), and which URL the leader advertised. A leader that cannot renew counts itself a leader
// only until `ttl - renew_every` after the start of its last successful renewal — strictly before
// the store would let another server take over — and the fence on its commits protects the
// ledger even when it is slower than that to notice.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "store/store.h"

namespace abacus::server {

struct LeaseKeeperOptions {
  std::string name = "scheduler";  // the lease
  std::string holder;              // unique per server process (MakeLeaseHolderId)
  std::string address;             // the URL this server advertises to followers and agents
  Duration ttl = std::chrono::seconds(5);
  Duration renew_every = std::chrono::seconds(1);
};

// What a server knows about the lease.
struct LeaseView {
  bool leader = false;         // this server holds the lease now
  int64_t token = 0;           // the fencing token of the current holder, when known
  std::string leader_address;  // the URL the current holder advertised ("": none known)
  uint64_t changes = 0;        // grows whenever leader, token or leader_address change
};

class LeaseKeeper {
 public:
  // `store` and `clock` must outlive the keeper.
  LeaseKeeper(Store& store, const Clock& clock, LeaseKeeperOptions options);
  // Stops the thread (see Stop).
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // One attempt to take or renew the lease (the thread's step; tests call it directly).
  void Tick();
  // Starts the thread that calls Tick every renew_every.
  void Start();
  // Stops and joins the thread; a held lease stays held until it expires (see Release).
  void Stop();
  // Gives the lease up now, when held, so that a follower takes over without waiting for the
  // ttl (graceful shutdown); this server then counts itself a follower.
  Status Release();
  // Releases the lease when held and does not try to take it for `d` (a takeover that failed:
  // another server may do better).
  void Pause(Duration d);

  // Returns the view now: `leader` only while the last renewal is recent enough.
  LeaseView view() const;
  // Blocks until the view changes after `seen_changes`, or `timeout` passes; returns the view.
  LeaseView WaitForChange(uint64_t seen_changes, Duration timeout) const;

  const LeaseKeeperOptions& options() const { return options_; }

 private:
  // Returns the view at `now`.
  LeaseView ViewAt(Time now) const REQUIRES(mu_);
  // Records a new state and wakes waiters when it differs.
  void Update(bool leader, int64_t token, std::string leader_address) REQUIRES(mu_);

  Store& store_;
  const Clock& clock_;
  const LeaseKeeperOptions options_;
  mutable Mutex mu_;
  mutable std::condition_variable changed_;  // the view changed
  std::condition_variable wake_;             // Stop wakes the thread
  bool leader_ GUARDED_BY(mu_) = false;  // the last attempt held the lease
  Time valid_until_ GUARDED_BY(mu_) {};  // leader_ counts until then
  int64_t token_ GUARDED_BY(mu_) = 0;
  std::string leader_address_ GUARDED_BY(mu_);
  uint64_t changes_ GUARDED_BY(mu_) = 0;
  Time paused_until_ GUARDED_BY(mu_) {};
  int failures_ GUARDED_BY(mu_) = 0;  // consecutive failed attempts (for logs)
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Returns a lease holder id unique to this process: "HOST:PID:RANDOM".
std::string MakeLeaseHolderId();

}  // namespace abacus::server
