#include "store/lease.h"

namespace abacus {

std::optional<LeaseRow> DecideLease(const std::optional<LeaseRow>& current, std::string_view holder,
                                    std::string_view address, int64_t now_us, Duration ttl,
                                    LeaseState& state) {
  const bool free = !current || current->expires_us <= now_us;
  const bool mine = current && current->holder == holder;
  if (!free && !mine) {
    state = LeaseState{false, current->holder, current->address, current->token};
    return std::nullopt;
  }
  LeaseRow next;
  next.holder = std::string(holder);
  next.address = std::string(address);
  next.token = !current ? 1 : mine ? current->token : current->token + 1;
  next.expires_us = now_us + ttl.count();
  state = LeaseState{true, next.holder, next.address, next.token};
  return next;
}

std::optional<LeaseRow> ReleasedLease(const std::optional<LeaseRow>& current, std::string_view holder,
                                      int64_t now_us) {
  if (!current || current->holder != holder || current->expires_us <= now_us) return std::nullopt;
  LeaseRow next = *current;
  next.expires_us = now_us;
  return next;
}

Status CheckFence(const LeaseFence& fence, std::optional<int64_t> current_token) {
  if (current_token && *current_token == fence.token) return Status::OK();
  return FailedPrecondition("fenced: lease token " + std::to_string(fence.token) + " is no longer current (lease '" +
                            fence.name + "' is at " +
                            (current_token ? "token " + std::to_string(*current_token) : std::string("no token")) +
                            ")");
}

Status ValidateLeaseRequest(std::string_view name, std::string_view holder, Duration ttl) {
  if (name.empty()) return InvalidArgument("lease: empty name");
  if (holder.empty()) return InvalidArgument("lease '" + std::string(name) + "': empty holder");
  if (ttl <= Duration::zero()) return InvalidArgument("lease '" + std::string(name) + "': ttl must be positive");
  return Status::OK();
}

}  // namespace abacus
