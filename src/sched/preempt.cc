#include "sched/preempt.h"

#include <algorithm>

namespace abacus::sched {
namespace {

// A preemption needing more victims than this is not attempted (the reason says so); it bounds
// the cost of a search to O(running work in the cohort tree + kMaxCandidates trial evictions).
constexpr size_t kMaxCandidates = 128;

void Evict(PreemptionContext& ctx, WorkloadIndex v) {
  const WorkloadInfo& w = ctx.workloads[v];
  ctx.quota.Remove(w.queue, ctx.usage[v], w.borrowed_only);
  for (const auto& p : w.placements) ctx.cluster.Release(w, p);
}

void Restore(PreemptionContext& ctx, WorkloadIndex v) {
  const WorkloadInfo& w = ctx.workloads[v];
  ctx.quota.Add(w.queue, ctx.usage[v], w.borrowed_only);
  for (const auto& p : w.placements) ctx.cluster.Allocate(w, p);
}

bool Fits(PreemptionContext& ctx, WorkloadIndex preemptor, const std::vector<FlavorId>& flavors,
          const ResourceVector& usage) {
  const WorkloadInfo& w = ctx.workloads[preemptor];
  QuotaCheck q = CheckWorkload(ctx.quota, w, usage);
  if (q.mode != FlavorMode::kFit && q.mode != FlavorMode::kBorrow) return false;
  std::vector<TaskPlacement> placements;
  if (!ctx.placer.Place(w, preemptor, flavors, ctx.reserved_by, &placements, nullptr)) return false;
  for (const auto& p : placements) ctx.cluster.Release(w, p);
  return true;
}

// The highest priority a victim in queue `q` may have for a preemptor of priority `prio` in queue
// `own`: in its own queue strictly lower; in another queue of the cohort tree (reclaim) any
// priority while the preemptor stays within its nominal quota, unless its queue asks for strictly
// lower (reclaimWithinNominal: LowerPriority); strictly lower when the preemptor would borrow.
int32_t ReclaimLimit(const PreemptionContext& ctx, QueueIndex own, QueueIndex q, int32_t prio, bool preemptor_borrows) {
  if (q == own || preemptor_borrows) return prio - 1;
  return ctx.quota.queue(own).reclaim_lower_priority_only ? prio - 1 : INT32_MAX;
}

}  // namespace

VictimSearchResult FindVictims(PreemptionContext& ctx, WorkloadIndex preemptor,
                               const std::vector<FlavorId>& flavors, const ResourceVector& usage) {
  VictimSearchResult out;
  const WorkloadInfo& pw = ctx.workloads[preemptor];
  const int32_t prio = ctx.effective_priority[preemptor];
  if (!pw.can_preempt) {
    out.why_not = "its priority class may not preempt";
    return out;
  }
  // Would the preemptor borrow? Then it may reclaim only from strictly lower priorities.
  bool preemptor_borrows = pw.borrowed_only;
  usage.ForEach([&](ResourceKey r, int64_t amount) {
    if (r.type == ResourceType::kDeviceMemory || !ctx.quota.Limits(pw.queue, r)) return;
    if (ctx.quota.used(pw.queue, r) + amount > ctx.quota.nominal(pw.queue, r)) preemptor_borrows = true;
  });

  // The resources a victim must hold to help: the preemptor's accelerator flavors, or cpu and
  // memory for CPU-only work; and any extended resource it requests.
  std::vector<ResourceKey> needed_keys;
  usage.ForEach([&](ResourceKey r, int64_t) {
    if (r.type == ResourceType::kDeviceMilli) needed_keys.push_back(r);
  });
  if (needed_keys.empty()) needed_keys = {ResourceKey::Cpu(), ResourceKey::Memory()};
  usage.ForEach([&](ResourceKey r, int64_t) {
    if (r.type == ResourceType::kExtended) needed_keys.push_back(r);
  });
  auto holds_needed = [&](WorkloadIndex v) {
    for (ResourceKey r : needed_keys) {
      if (ctx.usage[v].Get(r) > 0) return true;
    }
    return false;
  };

  // 0. Work already stopping (evicting, or chosen as a victim earlier) will free its share:
  //    if that is enough, wait for it instead of preempting more.
  const std::vector<WorkloadIndex>& leaving = ctx.leaving;
  for (WorkloadIndex v : leaving) Evict(ctx, v);
  struct RestoreLeaving {
    PreemptionContext& ctx;
    const std::vector<WorkloadIndex>& leaving;
    ~RestoreLeaving() {
      for (auto it = leaving.rbegin(); it != leaving.rend(); ++it) Restore(ctx, *it);
    }
  } restore_leaving{ctx, leaving};
  if (!leaving.empty() && Fits(ctx, preemptor, flavors, usage)) {
    out.found = true;  // no new victims: what is already stopping suffices
    return out;
  }

  // 1. Candidates.
  struct Ranked {
    VictimCandidate c;
    bool borrowed;
    int32_t priority;
    double factor;  // its queue's fair-share factor (1 when off)
    Time admitted_at;
  };
  std::vector<Ranked> ranked;
  int nonpreemptible = 0, higher = 0;
  // Reserved capacity within nominal quota: lower-priority work of any queue, reserved work
  // excepted, may be evicted to make room (MakeRoom), beside the candidates of the cohort tree.
  const bool reserved_room = pw.reserved && !preemptor_borrows;
  const std::vector<QueueIndex>& tree = ctx.quota.TreeQueues(pw.queue);
  std::vector<uint8_t> in_tree;
  std::vector<QueueIndex> all_queues;
  if (reserved_room) {
    in_tree.assign(ctx.running.size(), 0);
    for (QueueIndex q : tree) in_tree[q] = 1;
    for (QueueIndex q = 0; q < static_cast<QueueIndex>(ctx.running.size()); ++q) all_queues.push_back(q);
  }
  const int32_t room_limit = reserved_room ? prio - 1 : INT32_MIN;
  // The highest priority a regular candidate (reclaim, in-queue) of queue `q` may have; outside
  // the cohort tree there is none (only reserved capacity's MakeRoom reaches there).
  auto limit_of = [&](QueueIndex q) {
    return !reserved_room || in_tree[q] != 0 ? ReclaimLimit(ctx, pw.queue, q, prio, preemptor_borrows) : INT32_MIN;
  };
  for (QueueIndex q : reserved_room ? all_queues : tree) {
    // Whole-queue checks first: other queues give up only borrowed capacity, and a queue whose
    // lowest preemptible priority is too high has no candidate at all.
    const bool same = q == pw.queue;
    const bool tree_queue = !reserved_room || in_tree[q] != 0;
    const int32_t limit = limit_of(q);
    if (ctx.min_preemptible_priority[q] > std::max(limit, room_limit)) continue;  // counted below if nothing is found
    bool queue_borrowing = false;  // regular work above nominal on something the preemptor needs
    if (tree_queue) {
      for (ResourceKey r : needed_keys) queue_borrowing |= ctx.quota.IsOverNominal(q, r);
    }
    if (!same && !queue_borrowing && !reserved_room) {
      bool any_best_effort = false;
      for (WorkloadIndex v : ctx.running[q]) any_best_effort |= ctx.workloads[v].borrowed_only;
      if (!any_best_effort) continue;  // work within its own nominal quota is never reclaimed
    }
    for (WorkloadIndex v : ctx.running[q]) {
      if (ctx.excluded[v]) continue;
      const WorkloadInfo& vw = ctx.workloads[v];
      if (!vw.admitted) continue;  // admitted in this very cycle: one cycle never admits and preempts it
      if (!vw.preemptible) {
        ++nonpreemptible;
        continue;
      }
      const int32_t vprio = ctx.effective_priority[v];
      const bool room = vprio <= room_limit && !vw.reserved;
      if (vprio > limit && !room) {
        ++higher;
        continue;
      }
      if (!holds_needed(v)) continue;
      const bool borrowing = tree_queue && (queue_borrowing || vw.borrowed_only);
      const bool regular = tree_queue && vprio <= limit && (same || borrowing);
      if (!regular && !room) continue;
      const PreemptionReason reason = !regular ? PreemptionReason::kMakeRoom
                                      : same   ? PreemptionReason::kInQueuePriority
                                               : PreemptionReason::kReclaimQuota;
      ranked.push_back({{v, reason}, regular && borrowing, vprio,
                        ctx.fair_factor != nullptr ? (*ctx.fair_factor)[q] : 1.0, vw.admitted_at});
    }
  }
  if (ranked.empty()) {
    // Slow path, only when nothing qualifies: count by cause for the reason.
    nonpreemptible = 0;
    higher = 0;
    const std::vector<QueueIndex>& searched = reserved_room ? all_queues : tree;
    size_t searched_running = 0;
    for (QueueIndex q : searched) searched_running += ctx.running[q].size();
    // Exact counts cost a pass over the searched running work: bounded for huge trees.
    constexpr size_t kMaxCountScan = 2048;
    for (QueueIndex q : searched) {
      if (searched_running > kMaxCountScan) break;
      const int32_t limit = limit_of(q);
      for (WorkloadIndex v : ctx.running[q]) {
        if (ctx.excluded[v]) continue;
        if (!holds_needed(v)) continue;
        if (!ctx.workloads[v].preemptible) {
          ++nonpreemptible;
        } else if (ctx.effective_priority[v] > std::max(limit, room_limit)) {
          ++higher;
        }
      }
    }
    out.why_not = "no preemptible workload of lower priority holds what it needs";
    if (nonpreemptible > 0) out.why_not += " (" + std::to_string(nonpreemptible) + " non-preemptible";
    if (higher > 0) out.why_not += std::string(nonpreemptible > 0 ? ", " : " (") + std::to_string(higher) + " of equal or higher priority";
    if (nonpreemptible > 0 || higher > 0) out.why_not += ")";
    // Name the priority rule that applied to other queues' borrowers (docs/scheduler.md).
    if (reserved_room) {
      out.why_not += "; as reserved capacity it may evict lower-priority work of any queue, but none that is "
                     "not reserved and not already stopping holds what it needs";
    } else if (ctx.quota.TreeQueues(pw.queue).size() > 1) {
      if (preemptor_borrows) {
        out.why_not += "; it would borrow, so it may preempt only lower priority";
      } else if (ctx.quota.queue(pw.queue).reclaim_lower_priority_only) {
        out.why_not += "; queue " + ctx.quota.queue(pw.queue).name +
                       " reclaims its lent nominal quota only from lower priority (reclaimWithinNominal: LowerPriority)";
      } else {
        out.why_not += "; its lent nominal quota is reclaimed from borrowers of any priority, but no borrower "
                       "that is not already stopping holds what it needs";
      }
    }
    return out;
  }
  // 2. Borrowed capacity first, then lowest priority, then the borrower whose queue used the most
  //    over time for its share (lowest fair-share factor), then newest.
  auto better = [&](const Ranked& a, const Ranked& b) {
    bool a_be = ctx.workloads[a.c.workload].borrowed_only, b_be = ctx.workloads[b.c.workload].borrowed_only;
    if (a_be != b_be) return a_be;  // best-effort runs only on borrowed capacity: it goes first
    if (a.borrowed != b.borrowed) return a.borrowed;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.borrowed && a.factor != b.factor) return a.factor < b.factor;
    if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
    return a.c.workload > b.c.workload;
  };
  if (ranked.size() > kMaxCandidates) {
    std::partial_sort(ranked.begin(), ranked.begin() + kMaxCandidates, ranked.end(), better);
    ranked.resize(kMaxCandidates);
  } else {
    std::sort(ranked.begin(), ranked.end(), better);
  }

  // 3. Quick feasibility: with every candidate gone, would it fit? If not, nothing helps.
  for (const Ranked& r : ranked) Evict(ctx, r.c.workload);
  bool possible = Fits(ctx, preemptor, flavors, usage);
  for (auto it = ranked.rbegin(); it != ranked.rend(); ++it) Restore(ctx, it->c.workload);
  if (!possible) {
    out.why_not = "evicting all " + std::to_string(ranked.size()) +
                  " eligible workloads would still not make it fit";
    return out;
  }
  //    Evict in order until it fits.
  std::vector<Ranked> removed;
  bool fits = false;
  for (const Ranked& r : ranked) {
    Evict(ctx, r.c.workload);
    removed.push_back(r);
    if (Fits(ctx, preemptor, flavors, usage)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    for (auto it = removed.rbegin(); it != removed.rend(); ++it) Restore(ctx, it->c.workload);
    out.why_not = "evicting all " + std::to_string(removed.size()) +
                  " eligible workloads would still not make it fit";
    return out;
  }
  // 4. Minimize: give back every victim that is not needed, latest-added first, keeping the
  //    last one (without it, it did not fit).
  std::vector<Ranked> needed{removed.back()};
  for (size_t i = removed.size() - 1; i-- > 0;) {
    Restore(ctx, removed[i].c.workload);
    if (Fits(ctx, preemptor, flavors, usage)) continue;  // not needed
    Evict(ctx, removed[i].c.workload);
    needed.push_back(removed[i]);
  }
  for (const Ranked& r : needed) Restore(ctx, r.c.workload);
  out.found = true;
  for (auto it = needed.rbegin(); it != needed.rend(); ++it) out.victims.push_back(it->c);
  return out;
}

}  // namespace abacus::sched
