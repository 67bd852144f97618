#include "server/ha_lease_keeper.h"

#include <unistd.h>

#include <random>

#include "common/log.h"
#include "common/mutex.h"

namespace abacus::server {

LeaseKeeper::LeaseKeeper(Store& store, const Clock& clock, LeaseKeeperOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

LeaseKeeper::~LeaseKeeper() { Stop(); }

void LeaseKeeper::Tick() {
  const Time start = clock_.Now();
  {
    MutexLock lock(mu_);
    if (start < paused_until_) return;
  }
  auto r = store_.TryAcquireLease(options_.name, options_.holder, options_.address, options_.ttl);
  bool give_back = false;
  {
    MutexLock lock(mu_);
    if (!r.ok()) {
      if (failures_++ == 0) ABACUS_LOG_WARN("lease '{}': {}", options_.name, r.status().ToString());
      // Still a leader only until the last renewal runs out.
      if (leader_ && clock_.Now() >= valid_until_) Update(false, token_, leader_address_);
      return;
    }
    if (failures_ > 0) ABACUS_LOG_INFO("lease '{}': the store answers again", options_.name);
    failures_ = 0;
    if (r->held && clock_.Now() < paused_until_) {
      give_back = true;  // paused while the attempt ran
    } else if (r->held) {
      valid_until_ = start + options_.ttl - options_.renew_every;
      Update(true, r->token, options_.address);
    } else {
      Update(false, r->token, r->holder.empty() ? std::string() : r->address);
    }
  }
  if (give_back) (void)Release();
}

void LeaseKeeper::Update(bool leader, int64_t token, std::string leader_address) {
  if (leader == leader_ && token == token_ && leader_address == leader_address_) return;
  if (leader && !leader_) {
    ABACUS_LOG_INFO("lease '{}': this server leads now (fencing token {})", options_.name, token);
  } else if (!leader && leader_) {
    ABACUS_LOG_WARN("lease '{}': this server no longer leads (leader: {})", options_.name,
                    leader_address.empty() ? "none" : leader_address);
  }
  leader_ = leader;
  token_ = token;
  leader_address_ = std::move(leader_address);
  ++changes_;
  changed_.notify_all();
}

void LeaseKeeper::Start() {
  MutexLock lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    MutexLock lock(mu_);
    while (!stopping_) {
      lock.Unlock();
      Tick();
      lock.Lock();
      lock.WaitFor(wake_, options_.renew_every, [&]() REQUIRES(mu_) { return stopping_; });
    }
  });
}

void LeaseKeeper::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status LeaseKeeper::Release() {
  {
    MutexLock lock(mu_);
    if (!leader_) return Status::OK();
  }
  Status s = store_.ReleaseLease(options_.name, options_.holder);
  MutexLock lock(mu_);
  valid_until_ = Time{};
  Update(false, token_, "");
  return s;
}

void LeaseKeeper::Pause(Duration d) {
  {
    MutexLock lock(mu_);
    paused_until_ = clock_.Now() + d;
  }
  Status s = Release();
  if (!s.ok()) ABACUS_LOG_WARN("lease '{}': releasing: {}", options_.name, s.ToString());
}

LeaseView LeaseKeeper::ViewAt(Time now) const {
  LeaseView v;
  v.leader = leader_ && now < valid_until_;
  v.token = token_;
  v.leader_address = leader_address_;
  v.changes = changes_;
  return v;
}

LeaseView LeaseKeeper::view() const {
  MutexLock lock(mu_);
  return ViewAt(clock_.Now());
}

LeaseView LeaseKeeper::WaitForChange(uint64_t seen_changes, Duration timeout) const {
  MutexLock lock(mu_);
  lock.WaitFor(changed_, timeout, [&]() REQUIRES(mu_) { return changes_ != seen_changes; });
  return ViewAt(clock_.Now());
}

std::string MakeLeaseHolderId() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::random_device rd;
  char suffix[16];
  snprintf(suffix, sizeof(suffix), "%08x", static_cast<unsigned>(rd()));
  return std::string(host[0] ? host : "abacus") + ":" + std::to_string(getpid()) + ":" + suffix;
}

}  // namespace abacus::server
