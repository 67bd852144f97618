// ChangeFeed: what changed in the server's state, for watches (GET …?watch=1&resourceVersion=N,
// docs/api.md). Every committed write records the objects it touched and the events it appended
// (ControlPlane::Commit); the scheduling loop publishes them once the ledger holds them, so a
// woken watcher that reads the ledger sees the change. Versions are the feed's own, starting at
// the server's start time in microseconds (like AssignmentBoard), so a version from a previous
// server life is older than every change held and the watcher lists again. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace abacus::server {

struct FeedChange {
  uint64_t version = 0;
  std::string kind;  // store kind: "workload", "node", a tenancy kind
  std::string key;   // the object's key (a workload id, a node name)
  // An appended event about (kind, key): its type (empty: the object itself changed), details
  // (JSON text, parsed only when a watcher reads it), store seq and time.
  std::string event_type, event_json;
  int64_t event_seq = 0, event_time_us = 0;
};

class ChangeFeed {
 public:
  // `capacity`: how many changes are kept for watchers that fall behind.
  explicit ChangeFeed(uint64_t first_version, size_t capacity = 1 << 16);

  // Notes that (kind, key) changed; watchers see it after the next Publish.
  void Record(std::string kind, std::string key);
  // Notes an event appended about (kind, key) (type, details JSON, store seq, time).
  void RecordEvent(std::string kind, std::string key, std::string type, std::string json, int64_t seq, int64_t time_us);
  // Makes every change recorded so far visible and wakes the watchers; no-op when none is new.
  void Publish();

  struct Since {
    uint64_t version = 0;            // the newest published version
    bool complete = true;            // false: changes after `after` were dropped (or `after` is
                                     // not of this feed); the watcher lists everything again
    std::vector<FeedChange> changes;  // published changes after `after`, oldest first
  };
  // The published changes after version `after`.
  Since ChangesSince(uint64_t after) const;
  // Every published change still kept (complete: none was dropped yet).
  Since Recent() const;
  // The newest published version.
  uint64_t version() const;
  // Returns when a version after `after` is published, at `deadline`, or at Shutdown; true
  // unless the feed is shut down.
  bool WaitPast(uint64_t after, std::chrono::steady_clock::time_point deadline);
  // Wakes every watcher waiting now without a new version (a credential was revoked or changed:
  // each asks whether its caller still stands, then waits on or answers 401).
  void WakeWaiters();
  // A long poll's place (a watch or a log follow): held while it waits, given back when destroyed.
  class Place {
   public:
    ~Place();
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

   private:
    friend class ChangeFeed;  // only TakePlace makes one: each gives back what it took
    Place(ChangeFeed& feed, std::string caller) : feed_(feed), caller_(std::move(caller)) {}
    ChangeFeed& feed_;
    std::string caller_;
  };
  // At most `per_caller` long polls of one caller and `total` of all callers wait at once (0: no
  // limit): each holds an HTTP thread, and the agents' heartbeats and every other request need
  // some (the sixth probe: 110 watches of one viewer token filled the 96 threads, the agents
  // went silent, their nodes NotReady and a running training was killed). HttpServer sets them.
  void LimitPlaces(size_t per_caller, size_t total);
  // A place for one more long poll of `caller` (a user's name, or a bootstrap credential's);
  // ResourceExhausted naming the limit when every place is taken or, `capped`, when `caller`
  // holds `per_caller` already. (The admin token is not capped per caller: it may do anything.)
  Result<std::unique_ptr<Place>> TakePlace(const std::string& caller, bool capped);
  // Wakes every watcher; later waits return at once.
  void Shutdown();
  bool shut_down() const;

 private:
  void AddLocked(FeedChange change) REQUIRES(mu_);
  const size_t capacity_;
  mutable Mutex mu_;
  std::condition_variable published_cv_;
  uint64_t first_version_;         // versions start after this one
  uint64_t last_recorded_ GUARDED_BY(mu_);
  uint64_t published_ GUARDED_BY(mu_);
  uint64_t dropped_through_ GUARDED_BY(mu_);  // the newest version no longer kept
  std::deque<FeedChange> changes_ GUARDED_BY(mu_);  // oldest first
  bool shutdown_ GUARDED_BY(mu_) = false;
  uint64_t wakes_ GUARDED_BY(mu_) = 0;  // WakeWaiters calls so far
  Mutex places_mu_;
  size_t per_caller_ GUARDED_BY(places_mu_) = 0, total_ GUARDED_BY(places_mu_) = 0;  // 0: no limit
  size_t taken_ GUARDED_BY(places_mu_) = 0;
  std::map<std::string, size_t> taken_by_ GUARDED_BY(places_mu_);
};

}  // namespace abacus::server
