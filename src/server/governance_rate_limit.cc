// Governance, rate limits: a token bucket per token, per user and per tenant.
#include "server/governance.h"

#include <algorithm>
#include <cmath>

#include "common/mutex.h"

namespace abacus::server {

using nlohmann::json;
using govern::Action;
using govern::Resource;

RateLimiter::RateLimiter(double rate, double burst)
    : rate_(rate), burst_(burst > 0 ? burst : std::max(1.0, 2 * rate)) {}

double RateLimiter::Take(const std::string& key, SteadyTime now) {
  if (rate_ <= 0) return 0;
  MutexLock lock(mu_);
  if (buckets_.size() > 65536) {
    // Forget buckets that have refilled: they would start full anyway.
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      double refill = std::chrono::duration<double>(now - it->second.last).count() * rate_;
      it = it->second.tokens + refill >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, inserted] = buckets_.try_emplace(key);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = burst_;
  } else {
    double elapsed = std::max(0.0, std::chrono::duration<double>(now - b.last).count());
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
  }
  b.last = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return (1 - b.tokens) / rate_;
}

// ---- rate limits

void Governance::SetRateLimit(double rate, double burst) {
  MutexLock lock(limiter_mu_);
  limiter_ = rate > 0 ? std::make_shared<RateLimiter>(rate, burst) : nullptr;
}

void Governance::SetTenantRateLimit(double rate, double burst) {
  MutexLock lock(limiter_mu_);
  tenant_limiter_ = rate > 0 ? std::make_shared<RateLimiter>(rate, burst) : nullptr;
}

double Governance::Throttle(const Caller& caller, std::string* which) {
  std::shared_ptr<RateLimiter> limiter, tenants;
  {
    MutexLock lock(limiter_mu_);
    limiter = limiter_;
    tenants = tenant_limiter_;
  }
  auto now = std::chrono::steady_clock::now();
  auto refused = [&](double wait, std::string what) {
    if (which != nullptr) *which = std::move(what);
    return wait;
  };
  if (limiter) {
    if (double wait = limiter->Take(caller.RateKey(), now); wait > 0) return refused(wait, caller.Actor());
  }
  // A user's tokens share one bucket of the same size, and the users of a tenant another.
  if (caller.via != Caller::Via::kApiToken || caller.principal.kind != govern::Principal::Kind::kUser) return 0;
  const std::string& user = caller.principal.name;
  if (limiter) {
    if (double wait = limiter->Take("user:" + user, now); wait > 0) {
      return refused(wait, "user " + user + " (all its tokens together)");
    }
  }
  if (tenants) {
    std::set<std::string> scoped;
    for (const auto& b : caller.principal.roles) {
      if (!b.tenant.empty()) scoped.insert(b.tenant);
      if (!b.project.empty()) scoped.insert(b.project.substr(0, b.project.find('/')));
    }
    for (const auto& t : scoped) {
      if (double wait = tenants->Take("tenant:" + t, now); wait > 0) {
        return refused(wait, "tenant " + t + " (all its users together)");
      }
    }
  }
  return 0;
}

}  // namespace abacus::server
