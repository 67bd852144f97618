#include "server/change_feed.h"

#include <algorithm>

#include "common/blocking_region.h"
#include "common/mutex.h"

namespace abacus::server {

ChangeFeed::ChangeFeed(uint64_t first_version, size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)),
      first_version_(first_version),
      last_recorded_(first_version),
      published_(first_version),
      dropped_through_(first_version) {}

void ChangeFeed::Record(std::string kind, std::string key) {
  FeedChange c;
  c.kind = std::move(kind);
  c.key = std::move(key);
  MutexLock lock(mu_);
  AddLocked(std::move(c));
}

void ChangeFeed::RecordEvent(std::string kind, std::string key, std::string type, std::string json, int64_t seq,
                             int64_t time_us) {
  FeedChange c;
  c.kind = std::move(kind);
  c.key = std::move(key);
  c.event_type = std::move(type);
  c.event_json = std::move(json);
  c.event_seq = seq;
  c.event_time_us = time_us;
  MutexLock lock(mu_);
  AddLocked(std::move(c));
}

void ChangeFeed::AddLocked(FeedChange change) {
  change.version = ++last_recorded_;
  changes_.push_back(std::move(change));
  while (changes_.size() > capacity_) {
    dropped_through_ = changes_.front().version;
    changes_.pop_front();
  }
}

void ChangeFeed::Publish() {
  {
    MutexLock lock(mu_);
    if (published_ == last_recorded_) return;
    published_ = last_recorded_;
  }
  published_cv_.notify_all();
}

ChangeFeed::Since ChangeFeed::ChangesSince(uint64_t after) const {
  MutexLock lock(mu_);
  Since out;
  out.version = published_;
  // A version from another server life or one whose changes were dropped: list again.
  out.complete = after >= dropped_through_ && after <= published_ && after >= first_version_;
  if (!out.complete) return out;
  auto it = std::lower_bound(changes_.begin(), changes_.end(), after + 1,
                             [](const FeedChange& c, uint64_t v) { return c.version < v; });
  for (; it != changes_.end() && it->version <= published_; ++it) out.changes.push_back(*it);
  return out;
}

ChangeFeed::Since ChangeFeed::Recent() const {
  MutexLock lock(mu_);
  Since out;
  out.version = published_;
  out.complete = dropped_through_ == first_version_;
  for (const FeedChange& c : changes_) {
    if (c.version > published_) break;
    out.changes.push_back(c);
  }
  return out;
}

uint64_t ChangeFeed::version() const {
  MutexLock lock(mu_);
  return published_;
}

bool ChangeFeed::WaitPast(uint64_t after, std::chrono::steady_clock::time_point deadline) {
  BlockingRegion waiting;  // a watch or a log follow: up to `deadline`
  MutexLock lock(mu_);
  const uint64_t wakes = wakes_;
  lock.WaitUntil(published_cv_, deadline,
                 [&]() REQUIRES(mu_) { return shutdown_ || published_ != after || wakes_ != wakes; });
  return !shutdown_;
}

void ChangeFeed::WakeWaiters() {
  {
    MutexLock lock(mu_);
    ++wakes_;
  }
  published_cv_.notify_all();
}

void ChangeFeed::LimitPlaces(size_t per_caller, size_t total) {
  MutexLock lock(places_mu_);
  per_caller_ = per_caller;
  total_ = total;
}

Result<std::unique_ptr<ChangeFeed::Place>> ChangeFeed::TakePlace(const std::string& caller, bool capped) {
  MutexLock lock(places_mu_);
  size_t& mine = taken_by_[caller];
  if (capped && per_caller_ > 0 && mine >= per_caller_) {
    if (mine == 0) taken_by_.erase(caller);
    return ResourceExhausted(caller + " has " + std::to_string(mine) +
                             " watches and log follows open, the most one caller may hold: close one (or wait for "
                             "one to time out) and ask again");
  }
  if (total_ > 0 && taken_ >= total_) {
    if (mine == 0) taken_by_.erase(caller);
    return ResourceExhausted("the server holds " + std::to_string(taken_) +
                             " watches and log follows open, the most its HTTP threads allow (--http-threads): "
                             "ask again shortly");
  }
  ++mine;
  ++taken_;
  return std::unique_ptr<Place>(new Place(*this, caller));
}

ChangeFeed::Place::~Place() {
  MutexLock lock(feed_.places_mu_);
  --feed_.taken_;
  auto it = feed_.taken_by_.find(caller_);
  if (it != feed_.taken_by_.end() && --it->second == 0) feed_.taken_by_.erase(it);
}

void ChangeFeed::Shutdown() {
  {
    MutexLock lock(mu_);
    shutdown_ = true;
  }
  published_cv_.notify_all();
}

bool ChangeFeed::shut_down() const {
  MutexLock lock(mu_);
  return shutdown_;
}

}  // namespace abacus::server
