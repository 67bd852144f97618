// The event-mode driver (sim/events.h, docs/simulator.md §5): virtual time, the server's
// incremental cycle kinds over an incrementally kept snapshot, preemptor claims, aging steps.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "common/check.h"
#include "sched/apply_cycle.h"
#include "sched/cycle_kind.h"
#include "sched/order.h"
#include "sim/events.h"
#include "sim/events_rules.h"
#include "sim/scenario.h"

namespace abacus::sim {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

Time At(int64_t s) { return ScenarioEpoch() + Duration(s * kMicrosPerSecond); }

DurationStats Stats(std::vector<double> v) {
  DurationStats s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  auto pct = [&](double p) {
    // Nearest rank.
    size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(k, 1, v.size()) - 1];
  };
  s.p50 = pct(0.50);
  s.p95 = pct(0.95);
  s.p99 = pct(0.99);
  s.max = v.back();
  return s;
}

// Returns whether quota can never admit `w` in queue `q`, whatever else runs: best-effort work
// (borrowed capacity only) in a queue without a cohort, asking for something the queue limits —
// QuotaState::Check answers NoFit for it without looking at usage, and without quota no victim
// search succeeds. A StrictFIFO queue is left alone: such a head blocks the queue behind it.
bool NeverAdmissible(const sched::WorkloadInfo& w, const sched::QueueInfo& q) {
  if (!w.borrowed_only || q.cohort != sched::kNone || q.strategy == sched::QueueingStrategy::kStrictFifo) return false;
  auto limited = [&](ResourceKey r) {
    return std::any_of(q.quotas.begin(), q.quotas.end(), [&](const sched::QuotaInfo& e) { return e.resource == r; });
  };
  for (const auto& g : w.groups) {
    if (g.replicas <= 0) continue;
    if (g.task.needs_devices()) return true;  // device quota is always limited
    if (g.task.cpu_milli > 0 && limited(ResourceKey::Cpu())) return true;
    if (g.task.memory_bytes > 0 && limited(ResourceKey::Memory())) return true;
  }
  return false;
}

// Same-instant order: completions free capacity before stops, requeues and arrivals are seen;
// the health rule settles and device faults apply after completions (a workload that ends at a
// fault's instant finished) and before arrivals (which see the device out of service).
enum class EventType : uint8_t {
  kFinish = 0, kStopped = 1, kRequeue = 2, kSettle = 3, kHealth = 4, kArrive = 5, kAging = 6, kTimer = 7
};

struct Event {
  int64_t t;
  EventType type;
  int32_t job;    // kSettle: the node; kHealth: the fault event's index
  int32_t epoch;  // admission (finish, stop, requeue) or pending stint (aging) count: stale ones are ignored
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (type != o.type) return type > o.type;
    return job > o.job;
  }
};

enum class Phase : uint8_t {
  kFuture,    // not arrived
  kPending,   // waiting in its queue
  kRunning,   // admitted
  kEvicting,  // preempted, in its grace period: still holds its capacity
  kHeld,      // stopped, but its capacity is held for its preemptor until the other victims stop
  kDone,
};

struct JobState {
  Phase phase = Phase::kFuture;
  int32_t slot = -1;       // slot in the snapshot's admitted workloads
  int32_t epoch = 0;       // admissions so far
  int32_t wait_gen = 0;    // pending stints so far
  bool never = false;      // NeverAdmissible: pending, but kept out of the cycles
  int32_t claim = -1;      // as a victim: the preemptor its capacity is held for
  int64_t started_s = 0;   // start of the current run
  std::optional<int64_t> remaining_s;  // run time left
  bool borrowing = false;
  int64_t device_milli = 0;  // accelerator milli held while running
  int64_t cpu_milli = 0, gpu_milli = 0, npu_milli = 0;
  std::vector<std::array<int64_t, 3>> pool_use;  // {pool, device milli, cpu milli} while running
};

// A waiting job in its queue, in the server's bounded-cycle order (sched/cycle_kind.h), the
// id's rank among all ids standing for the id.
struct PendingKey {
  sched::BoundedOrderKey<int32_t> order;
  int32_t job;
  bool operator<(const PendingKey& o) const { return order < o.order; }
};

// A preemptor's victims; their capacity is held for it until none is stopping any more.
struct Claim {
  std::vector<int32_t> victims;
  int32_t stopping = 0;
};

class Driver {
 public:
  Driver(const EventInput& input, const EventSimOptions& options);
  EventSimResult Run();

 private:
  void Arrive(int32_t j, int64_t t);
  void Finish(int32_t j, int64_t t);
  void Stopped(int32_t j, int64_t t, bool checkpointed = true);
  void Aging(int32_t j, int64_t t);
  void Enqueue(int32_t j, int64_t t);
  void Requeue(int32_t j, int64_t t);
  void AccountRun(int32_t j, int64_t t);
  void AddByDay(GroupReport& q, int64_t from_s, int64_t to_s, int64_t device_milli);
  void FreeCapacity(int32_t j, int64_t t);
  void ResolveClaim(int32_t preemptor, int64_t t);
  void EndClaim(int32_t preemptor, int64_t t);
  // A cycle of the server's `kind` (sched/cycle_kind.h), or a nominated one (`nominated`: the
  // preemptors whose victims all stopped, alone, before the server's cycle of the instant).
  std::vector<int32_t> Tail(sched::CycleKind kind, bool nominated);
  void RunCycle(sched::CycleKind kind, bool nominated, std::vector<int32_t> tail, int64_t t);
  void Admit(int32_t j, sched::WorkloadInfo w, const sched::Admission& a, int64_t t);
  void Preempt(const sched::Preemption& p, int64_t t);
  void Describe();
  void Summarize();
  // Device faults (fault_schedule.h) through the server's health rule (sched/health_rule.h).
  void Health(int32_t e, int64_t t);
  bool Settle(int32_t node, int64_t t);
  sched::NodeHealth& HealthOf(int32_t node);
  void ApplyHealth(int32_t node, const sched::HealthOutcome& outcome, int64_t t, bool settled);
  void ArmSettle(int32_t node, int64_t t, bool settled);
  void LoseAttempt(int32_t j, int64_t t);
  void Log(int64_t t, int32_t node, HealthChange::Kind kind, int32_t device = -1, std::string detail = {}) {
    r_.faults.log.push_back({t, snap_.nodes[node].name, kind, device, std::move(detail)});
  }
  PendingKey Key(int32_t j) const {
    return {{proto_[j].priority, At(in_.jobs[j].submit_s), rank_[j]}, j};
  }
  void CountPreemptible(const sched::WorkloadInfo& w, int delta) {
    if (!w.preemptible) return;
    if ((preemptible_[w.priority] += delta) == 0) preemptible_.erase(w.priority);
  }

  const EventInput& in_;
  const EventSimOptions& o_;
  EventSimResult r_;
  sched::Snapshot snap_;                      // nodes, queues, cohorts; workloads = the admitted ones
  std::vector<int32_t> slot_job_;             // admitted slot → job
  std::vector<sched::WorkloadInfo> proto_;    // each job's pending form (submitted set)
  std::vector<int32_t> rank_;
  std::unordered_map<std::string, int32_t> job_of_;
  std::vector<JobState> js_;
  std::vector<std::set<PendingKey>> pending_;  // per queue, in bounded-cycle order
  std::vector<int32_t> never_;                 // NeverAdmissible jobs that arrived
  std::vector<int32_t> fresh_;                 // arrived since the last regular cycle
  std::vector<int32_t> nominate_;              // preemptors whose victims all stopped at this instant
  std::vector<uint8_t> in_tail_;
  std::unordered_map<int32_t, Claim> claims_;  // by preemptor
  std::vector<int32_t> holding_;               // gangs holding nodes after the last cycle that tried them
  std::map<int32_t, int32_t> preemptible_;     // priority → admitted, not evicting, preemptible workloads
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  bool full_ = false, freed_ = false;
  bool truncated_since_full_ = false, timer_armed_ = false;
  int64_t instant_ = -1, rounds_ = 0;  // the current virtual instant and the rounds run at it
  int64_t dropped_ = 0;                // preemptions not applied at the current instant (loop guard)
  int64_t processed_ = 0;
  int64_t used_cpu_ = 0, used_gpu_ = 0, used_npu_ = 0;
  // Fair share that remembers (sched/fair_share.h): usage as the server's ledger keeps it.
  sched::UsageHistory history_;
  bool fair_ = false;
  std::vector<int32_t> node_pool_;                           // node → index into r_.pools
  std::vector<int64_t> pool_used_device_, pool_used_cpu_;    // allocated now, per pool
  std::vector<double> pool_device_area_, pool_cpu_area_;     // milli × seconds, per pool
  int32_t pending_count_ = 0, running_count_ = 0;
  std::vector<std::vector<double>> queueing_, completion_;
  std::vector<GroupReport> qrep_;
  ReplayRuleTally rules_;  // the trace's placement rules and extended capacity, from the replay's own starts
  int64_t first_arrival_ = 0;
  std::unordered_map<int32_t, sched::NodeHealth> health_;  // the nodes a fault event touched
  std::unordered_map<int32_t, int64_t> settle_armed_;      // node → the time of its queued settle event
  std::vector<int32_t> device_base_;                       // node → its first device's slot in down_since_
  std::vector<int64_t> down_since_;                        // device → out of service since (-1: in service)
};

Driver::Driver(const EventInput& input, const EventSimOptions& options)
    : in_(input),
      o_(options),
      snap_(input.cluster),
      history_(options.config.fair_share_half_life),
      fair_(options.config.fair_share_half_life.count() > 0),
      rules_(input.cluster.nodes) {
  snap_.workloads.clear();
  const size_t n = in_.jobs.size();
  js_.resize(n);
  in_tail_.assign(n, 0);
  r_.jobs.resize(n);
  proto_.reserve(n);
  std::vector<int32_t> by_id(n);
  for (size_t j = 0; j < n; ++j) {
    r_.jobs[j].id = in_.jobs[j].workload.id;
    proto_.push_back(in_.jobs[j].workload);
    if (!o_.placement_rules) {
      for (auto& g : proto_.back().groups) {  // the "before": rules and requests only counted, not honoured
        g.rules = {};
        g.task.extended.clear();
      }
    }
    proto_.back().submitted = At(in_.jobs[j].submit_s);
    proto_.back().admitted = false;
    job_of_[in_.jobs[j].workload.id] = static_cast<int32_t>(j);
    by_id[j] = static_cast<int32_t>(j);
    const int32_t q = proto_.back().queue;
    ABACUS_CHECK(q >= 0 && q < static_cast<int32_t>(snap_.queues.size()), "workload in unknown queue");
    js_[j].never = NeverAdmissible(proto_.back(), snap_.queues[q]);
  }
  std::sort(by_id.begin(), by_id.end(), [&](int32_t a, int32_t b) { return proto_[a].id < proto_[b].id; });
  rank_.resize(n);
  for (size_t i = 0; i < n; ++i) rank_[by_id[i]] = static_cast<int32_t>(i);
  pending_.resize(snap_.queues.size());

  std::map<std::string, int32_t> pool_index;
  for (const auto& node : snap_.nodes) pool_index.emplace(node.pool, 0);
  for (auto& [name, index] : pool_index) {
    index = static_cast<int32_t>(r_.pools.size());
    r_.pools.push_back({name, 0, 0, 0, 0, 0, 0});
  }
  for (const auto& node : snap_.nodes) {
    PoolUtilization& pool = r_.pools[pool_index[node.pool]];
    node_pool_.push_back(pool_index[node.pool]);
    ++pool.nodes;
    pool.cpu_milli += node.cpu_milli;
    for (const auto& d : node.devices) pool.device_milli += d.healthy ? 1000 : 0;
  }
  pool_used_device_.assign(r_.pools.size(), 0);
  pool_used_cpu_.assign(r_.pools.size(), 0);
  pool_device_area_.assign(r_.pools.size(), 0);
  pool_cpu_area_.assign(r_.pools.size(), 0);
  for (const auto& node : snap_.nodes) {
    r_.cpu_milli += node.cpu_milli;
    for (const auto& d : node.devices) {
      if (!d.healthy) continue;
      (Flavor::FromId(d.flavor).kind() == DeviceKind::kNpu ? r_.npu_milli : r_.gpu_milli) += 1000;
    }
  }
  const size_t nq = snap_.queues.size();
  queueing_.resize(nq);
  completion_.resize(nq);
  qrep_.resize(nq);
  for (size_t q = 0; q < nq; ++q) {
    qrep_[q].name = snap_.queues[q].name;
    qrep_[q].tenant = snap_.queues[q].tenant;
  }
  for (size_t j = 0; j < n; ++j) events_.push({in_.jobs[j].submit_s, EventType::kArrive, static_cast<int32_t>(j), 0});
  first_arrival_ = events_.empty() ? 0 : events_.top().t;
  if (!o_.faults.empty()) {
    for (const auto& node : snap_.nodes) {
      device_base_.push_back(static_cast<int32_t>(down_since_.size()));
      down_since_.resize(down_since_.size() + node.devices.size(), -1);
    }
    for (size_t e = 0; e < o_.faults.size(); ++e) {
      ABACUS_CHECK(o_.faults[e].node >= 0 && static_cast<size_t>(o_.faults[e].node) < snap_.nodes.size(),
                   "fault event on an unknown node");
      events_.push({o_.faults[e].t_s, EventType::kHealth, static_cast<int32_t>(e), 0});
    }
  }
}

// ------------------------------------------------------------------ events

void Driver::Enqueue(int32_t j, int64_t t) {
  JobState& st = js_[j];
  st.phase = Phase::kPending;
  ++st.wait_gen;
  ++pending_count_;
  if (st.never) {
    never_.push_back(j);
    return;
  }
  pending_[proto_[j].queue].insert(Key(j));
  // The next aging step, while below the ceiling.
  const sched::WorkloadInfo& w = proto_[j];
  const int64_t period = w.max_queue_wait.count();
  if (w.aging_step > 0 && period > 0 && sched::EffectivePriority(w, At(t)) < std::max(w.priority, w.priority_ceiling)) {
    const int64_t waited = std::max<int64_t>(0, (t - in_.jobs[j].submit_s) * kMicrosPerSecond);
    const int64_t next_us = in_.jobs[j].submit_s * kMicrosPerSecond + (waited / period + 1) * period;
    events_.push({(next_us + kMicrosPerSecond - 1) / kMicrosPerSecond, EventType::kAging, j, st.wait_gen});
  }
}

void Driver::Arrive(int32_t j, int64_t t) {
  js_[j].remaining_s = in_.jobs[j].duration_s;
  ++qrep_[proto_[j].queue].submitted;
  Enqueue(j, t);
  if (!js_[j].never) fresh_.push_back(j);
}

void Driver::AddByDay(GroupReport& q, int64_t from_s, int64_t to_s, int64_t device_milli) {
  constexpr int64_t kDay = 86400;
  for (int64_t a = from_s; a < to_s;) {
    const int64_t day = (a - r_.start_s) / kDay;
    const int64_t b = std::min(to_s, r_.start_s + (day + 1) * kDay);
    if (day >= 0) {
      if (q.device_hours_by_day.size() <= static_cast<size_t>(day)) q.device_hours_by_day.resize(day + 1, 0);
      q.device_hours_by_day[day] += static_cast<double>(device_milli) / 1000.0 * static_cast<double>(b - a) / 3600.0;
    }
    a = b;
  }
}

void Driver::AccountRun(int32_t j, int64_t t) {
  JobState& st = js_[j];
  const double hours = static_cast<double>(t - st.started_s) / 3600.0;
  GroupReport& q = qrep_[proto_[j].queue];
  AddByDay(q, st.started_s, t, st.device_milli);
  q.device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
  if (st.borrowing) q.borrowed_device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
  --running_count_;
}

void Driver::FreeCapacity(int32_t j, int64_t t) {
  JobState& st = js_[j];
  if (fair_) sched::StopWorkload(history_, snap_.queues[proto_[j].queue].name, snap_.workloads[st.slot], At(t));
  used_cpu_ -= st.cpu_milli;
  used_gpu_ -= st.gpu_milli;
  used_npu_ -= st.npu_milli;
  for (const auto& [pool, device, cpu] : st.pool_use) {
    pool_used_device_[pool] -= device;
    pool_used_cpu_[pool] -= cpu;
  }
  st.pool_use.clear();
  rules_.Stop(j);
  const int32_t s = st.slot;
  const int32_t last = static_cast<int32_t>(snap_.workloads.size()) - 1;
  if (s != last) {
    snap_.workloads[s] = std::move(snap_.workloads[last]);
    slot_job_[s] = slot_job_[last];
    js_[slot_job_[s]].slot = s;
  }
  snap_.workloads.pop_back();
  slot_job_.pop_back();
  st.slot = -1;
}

void Driver::Requeue(int32_t j, int64_t t) {
  // The victim checkpointed and stopped: it waits again with its original submit time and the
  // run time it had left. Like the server's FinishPreemptions, a requeue asks for a full cycle.
  FreeCapacity(j, t);
  Enqueue(j, t);
  full_ = true;
}

void Driver::Finish(int32_t j, int64_t t) {
  JobState& st = js_[j];
  const bool evicting = st.phase == Phase::kEvicting;
  if (!evicting) CountPreemptible(snap_.workloads[st.slot], -1);
  AccountRun(j, t);
  FreeCapacity(j, t);
  st.phase = Phase::kDone;
  r_.jobs[j].finish_s = t;
  const int32_t q = proto_[j].queue;
  completion_[q].push_back(static_cast<double>(t - in_.jobs[j].submit_s));
  ++qrep_[q].completed;
  freed_ = true;
  if (evicting && st.claim >= 0) {
    const int32_t p = st.claim;
    st.claim = -1;
    if (--claims_[p].stopping == 0) ResolveClaim(p, t);
  }
}

void Driver::Stopped(int32_t j, int64_t t, bool checkpointed) {
  JobState& st = js_[j];
  AccountRun(j, t);
  if (st.remaining_s && checkpointed) st.remaining_s = std::max<int64_t>(0, *st.remaining_s - (t - st.started_s));
  if (st.claim < 0) {
    Requeue(j, t);
    return;
  }
  // Its preemptor still waits for other victims: keep this capacity for it.
  st.phase = Phase::kHeld;
  if (--claims_[st.claim].stopping == 0) ResolveClaim(st.claim, t);
}

void Driver::ResolveClaim(int32_t preemptor, int64_t t) {
  auto it = claims_.find(preemptor);
  if (it == claims_.end()) return;
  Claim c = std::move(it->second);
  claims_.erase(it);
  for (int32_t v : c.victims) {
    if (js_[v].claim != preemptor) continue;
    js_[v].claim = -1;
    if (js_[v].phase == Phase::kHeld) Requeue(v, t);
  }
  // The preemptor is offered what they gave back before anyone else (a nominated cycle).
  if (js_[preemptor].phase == Phase::kPending) nominate_.push_back(preemptor);
}

void Driver::EndClaim(int32_t preemptor, int64_t t) {
  // The preemptor was admitted: its victims no longer hold anything for it.
  auto it = claims_.find(preemptor);
  if (it == claims_.end()) return;
  for (int32_t v : it->second.victims) {
    if (js_[v].claim != preemptor) continue;
    js_[v].claim = -1;
    if (js_[v].phase == Phase::kHeld) events_.push({t, EventType::kRequeue, v, js_[v].epoch});
  }
  claims_.erase(it);
}

void Driver::Aging(int32_t j, int64_t t) {
  const sched::WorkloadInfo& w = proto_[j];
  const int32_t now = sched::EffectivePriority(w, At(t));
  const int32_t before = sched::EffectivePriority(w, At(t) - Duration(1));
  if (now != before) {
    // A step changes a decision only if it can make a victim of something running (newly
    // eligible priorities lie in [before, now]), or reorders a queue whose head matters.
    bool matters = pending_[w.queue].size() > 1 &&
                   (snap_.queues[w.queue].strategy == sched::QueueingStrategy::kStrictFifo ||
                    (w.gang && o_.config.enable_gang_reservation));
    if (w.can_preempt && o_.config.enable_preemption) {
      auto victim = preemptible_.lower_bound(before);
      matters |= victim != preemptible_.end() && victim->first <= now;
    }
    if (matters) {
      full_ = true;
      ++r_.cycle_kinds.aging_steps;
    }
  }
  // The following step (Enqueue's rule, from this instant).
  const int64_t period = w.max_queue_wait.count();
  if (now < std::max(w.priority, w.priority_ceiling)) {
    const int64_t waited = (t - in_.jobs[j].submit_s) * kMicrosPerSecond;
    const int64_t next_us = in_.jobs[j].submit_s * kMicrosPerSecond + (waited / period + 1) * period;
    events_.push({(next_us + kMicrosPerSecond - 1) / kMicrosPerSecond, EventType::kAging, j, js_[j].wait_gen});
  }
}

// ------------------------------------------------------------------ cycles

std::vector<int32_t> Driver::Tail(sched::CycleKind kind, bool nominated) {
  std::vector<int32_t> tail;
  auto add = [&](int32_t j) {
    if (in_tail_[j] || js_[j].phase != Phase::kPending || (js_[j].never && o_.incremental)) return;
    in_tail_[j] = 1;
    tail.push_back(j);
  };
  if (nominated) {
    for (int32_t j : nominate_) add(j);
  } else {
    // The server's rule for which waiting workloads each kind tries (sched/cycle_kind.h).
    const sched::CycleScope scope = sched::ScopeOf(kind, o_.bounded_per_queue);
    for (const auto& queue : pending_) {
      size_t taken = 0;
      for (auto it = queue.begin(); it != queue.end() && taken < scope.per_queue; ++it, ++taken) add(it->job);
      if (kind == sched::CycleKind::kBounded && queue.size() > scope.per_queue) truncated_since_full_ = true;
    }
    if (kind == sched::CycleKind::kFull && !o_.incremental) {
      for (int32_t j : never_) add(j);
    }
    std::set<int32_t> strict;
    if (scope.arrivals) {
      for (int32_t j : fresh_) {
        add(j);
        const int32_t q = proto_[j].queue;
        if (scope.strict_fifo_mates && snap_.queues[q].strategy == sched::QueueingStrategy::kStrictFifo) strict.insert(q);
      }
    }
    for (int32_t q : strict) {
      for (const PendingKey& k : pending_[q]) add(k.job);
    }
  }
  // Gangs holding nodes are in every cycle, so that their holds persist (sched types.h, holding).
  for (int32_t j : holding_) add(j);
  for (int32_t j : tail) in_tail_[j] = 0;
  return tail;
}

void Driver::RunCycle(sched::CycleKind kind, bool nominated, std::vector<int32_t> tail, int64_t t) {
  // The snapshot: the admitted workloads (kept between cycles) and this cycle's waiting ones in
  // submission order, as the server's BuildSnapshot lists them.
  std::sort(tail.begin(), tail.end(), [&](int32_t a, int32_t b) {
    const int64_t sa = in_.jobs[a].submit_s, sb = in_.jobs[b].submit_s;
    return sa != sb ? sa < sb : rank_[a] < rank_[b];
  });
  const size_t admitted = snap_.workloads.size();
  for (int32_t j : tail) snap_.workloads.push_back(proto_[j]);
  snap_.now = At(t);
  if (fair_) sched::SetFairShare(history_, &snap_);
  sched::SchedulerConfig cfg = o_.config;
  cfg.detailed_reasons = false;
  sched::CycleResult cr = sched::Schedule(snap_, cfg);
  ++r_.cycles;
  if (nominated) {
    ++r_.cycle_kinds.nominated;
  } else {
    switch (kind) {
      case sched::CycleKind::kFresh: ++r_.cycle_kinds.fresh; break;
      case sched::CycleKind::kBounded: ++r_.cycle_kinds.bounded; break;
      case sched::CycleKind::kFull: ++r_.cycle_kinds.full; break;
    }
  }
  // Past the loop guard, this instant's preemptions are dropped (counted for the warning).
  std::erase_if(cr.preemptions, [&](const sched::Preemption& p) {
    ABACUS_CHECK(static_cast<size_t>(p.victim) < admitted, "preempted a waiting workload");
    if (snap_.workloads[p.victim].evicting) return true;
    if (rounds_ > o_.max_rounds_per_instant) {
      ++dropped_;
      return true;
    }
    return false;
  });
  // The decisions on the snapshot, by the rule every driver applies (sched/apply_cycle.h).
  sched::ApplyCycle(cr, &snap_);
  std::vector<std::pair<int32_t, sched::WorkloadInfo>> started;
  for (const sched::Admission& a : cr.admissions) {
    ABACUS_CHECK(static_cast<size_t>(a.workload) >= admitted, "admitted an admitted workload");
    started.emplace_back(tail[a.workload - admitted], std::move(snap_.workloads[a.workload]));
  }
  snap_.workloads.resize(admitted);
  // Every holder is in every cycle (Tail): this cycle's reservations are the holds from now on.
  for (int32_t j : holding_) proto_[j].holding = false;
  holding_.clear();
  for (const sched::Reservation& res : cr.reservations) {
    auto it = job_of_.find(res.workload_id);
    if (it == job_of_.end()) continue;
    proto_[it->second].holding = true;
    holding_.push_back(it->second);
  }
  for (size_t i = 0; i < started.size(); ++i) Admit(started[i].first, std::move(started[i].second), cr.admissions[i], t);
  for (const sched::Preemption& p : cr.preemptions) Preempt(p, t);
}

void Driver::Admit(int32_t j, sched::WorkloadInfo w, const sched::Admission& a, int64_t t) {
  JobState& st = js_[j];
  pending_[w.queue].erase(Key(j));  // `w` was admitted by sched::ApplyCycle
  if (fair_) sched::StartWorkload(history_, snap_.queues[w.queue].name, w, At(t));
  CountPreemptible(w, +1);
  st.slot = static_cast<int32_t>(snap_.workloads.size());
  snap_.workloads.push_back(std::move(w));
  slot_job_.push_back(j);
  st.phase = Phase::kRunning;
  ++st.epoch;
  st.started_s = t;
  st.borrowing = a.borrowing;
  st.cpu_milli = st.gpu_milli = st.npu_milli = st.device_milli = 0;
  st.pool_use.clear();
  for (const auto& p : a.placements) {
    st.cpu_milli += p.cpu_milli;
    int64_t device = 0;
    for (const auto& d : p.devices) {
      const FlavorId f = snap_.nodes[p.node].devices[d.device].flavor;
      (Flavor::FromId(f).kind() == DeviceKind::kNpu ? st.npu_milli : st.gpu_milli) += d.milli;
      st.device_milli += d.milli;
      device += d.milli;
    }
    const int32_t pool = node_pool_[p.node];
    st.pool_use.push_back({pool, device, p.cpu_milli});
    pool_used_device_[pool] += device;
    pool_used_cpu_[pool] += p.cpu_milli;
  }
  used_cpu_ += st.cpu_milli;
  used_gpu_ += st.gpu_milli;
  used_npu_ += st.npu_milli;
  --pending_count_;
  ++running_count_;
  const int32_t q = proto_[j].queue;
  if (a.borrowing) ++qrep_[q].borrowing_admissions;
  rules_.Start(j, in_.jobs[j].workload, a.placements);  // what the trace asks, where the replay put it
  JobOutcome& out = r_.jobs[j];
  if (!out.first_start_s) {
    out.first_start_s = t;
    queueing_[q].push_back(static_cast<double>(t - in_.jobs[j].submit_s));
    for (const auto& p : a.placements) {
      out.first_nodes.push_back(snap_.nodes[p.node].name);
      out.first_devices.push_back(static_cast<int32_t>(p.devices.size()));
    }
  }
  if (st.remaining_s) events_.push({t + *st.remaining_s, EventType::kFinish, j, st.epoch});
  EndClaim(j, t);
}

void Driver::Preempt(const sched::Preemption& p, int64_t t) {
  // The victim is evicting already (sched::ApplyCycle): here, the driver's bookkeeping.
  const int32_t j = slot_job_[p.victim];
  const sched::WorkloadInfo& w = snap_.workloads[p.victim];
  CountPreemptible(w, -1);
  js_[j].phase = Phase::kEvicting;
  ++r_.jobs[j].preemptions;
  ++qrep_[w.queue].preempted;
  if (p.reason == sched::PreemptionReason::kReclaimQuota) ++qrep_[w.queue].reclaimed;
  events_.push({t + std::max<int64_t>(0, p.grace_seconds), EventType::kStopped, j, js_[j].epoch});
  if (o_.preemptor_claims) {
    auto by = job_of_.find(p.preemptor_id);
    if (by != job_of_.end()) {
      Claim& c = claims_[by->second];
      c.victims.push_back(j);
      ++c.stopping;
      js_[j].claim = by->second;
    }
  }
}

// ------------------------------------------------------------------ device faults

sched::NodeHealth& Driver::HealthOf(int32_t node) {
  auto it = health_.find(node);
  if (it == health_.end()) it = health_.emplace(node, sched::HealthOfSnapshotNode(snap_.nodes[node])).first;
  return it->second;
}

void Driver::Health(int32_t e, int64_t t) {
  const FaultEvent& f = o_.faults[e];
  ++r_.faults.events;
  sched::NodeHealth& h = HealthOf(f.node);
  sched::HealthOutcome outcome;
  switch (f.kind) {
    case FaultEvent::Kind::kFault:
    case FaultEvent::Kind::kRecover: {
      sched::DeviceHealthReport report;
      report.health = f.kind == FaultEvent::Kind::kFault ? DeviceHealth::kUnhealthy : DeviceHealth::kHealthy;
      report.reason = f.reason;
      outcome = sched::ApplyHealthReports(h, {{f.device, report}}, At(t), o_.health);
      break;
    }
    case FaultEvent::Kind::kUncordon:
      // An operator's uncordon, as `abacus uncordon` and the scenario runner do it.
      sched::ClearHealthOnUncordon(h);
      if (h.cordon != sched::CordonHolder::kOther) {
        h.cordon = sched::CordonHolder::kNone;
        h.cordon_since = Time{};
        snap_.nodes[f.node].state = NodeState::kReady;
      }
      ++r_.faults.operator_uncordons;
      Log(t, f.node, HealthChange::Kind::kOperatorUncordon);
      full_ = true;
      break;
  }
  ApplyHealth(f.node, outcome, t, /*settled=*/false);
}

bool Driver::Settle(int32_t node, int64_t t) {
  if (auto armed = settle_armed_.find(node); armed != settle_armed_.end() && armed->second == t) settle_armed_.erase(armed);
  sched::NodeHealth& h = HealthOf(node);
  const Time due = sched::NextHealthDeadline(h, o_.health);
  if (ToMicros(due) == 0 || due > At(t)) {
    ArmSettle(node, t, /*settled=*/false);
    return false;
  }
  const sched::HealthOutcome outcome = sched::SettleHealth(h, At(t), o_.health);
  ApplyHealth(node, outcome, t, /*settled=*/true);
  return outcome.changed();
}

void Driver::ArmSettle(int32_t node, int64_t now, bool settled) {
  // The server settles every second; the driver wakes at the rule's next deadline instead. A
  // cordon whose deadline passed right after settling waits on its devices (it ends only once
  // every one is healthy): on their probations, or on a report (the next fault event re-arms).
  const sched::NodeHealth& h = HealthOf(node);
  Time due = sched::NextHealthDeadline(h, o_.health);
  if (settled && ToMicros(due) != 0 && due <= At(now)) {
    sched::NodeHealth devices_only = h;
    devices_only.cordon = sched::CordonHolder::kNone;
    due = sched::NextHealthDeadline(devices_only, o_.health);
    if (due <= At(now)) return;
  }
  if (ToMicros(due) == 0) return;
  const int64_t us = ToMicros(due) - ToMicros(ScenarioEpoch());
  const int64_t t = std::max(now, (us + kMicrosPerSecond - 1) / kMicrosPerSecond);  // a whole second, not before now
  auto [it, inserted] = settle_armed_.try_emplace(node, t);
  if (!inserted && it->second == t) return;
  it->second = t;
  events_.push({t, EventType::kSettle, node, 0});
}

void Driver::ApplyHealth(int32_t node, const sched::HealthOutcome& outcome, int64_t t, bool settled) {
  sched::NodeInfo& n = snap_.nodes[node];
  const sched::NodeHealth& h = health_.at(node);
  bool down = false, back = false;
  for (size_t i = 0; i < n.devices.size(); ++i) {
    sched::DeviceInfo& d = n.devices[i];
    auto it = h.devices.find(d.index);
    if (it == h.devices.end()) continue;
    const bool healthy = it->second == DeviceHealth::kHealthy;
    if (healthy == d.healthy) continue;
    d.healthy = healthy;
    int64_t& since = down_since_[device_base_[node] + static_cast<int32_t>(i)];
    if (!healthy) {
      since = t;
      down = true;
    } else {
      if (since >= 0 && t > std::max(since, r_.start_s)) {
        r_.faults.unhealthy_device_hours += static_cast<double>(t - std::max(since, r_.start_s)) / 3600.0;
      }
      since = -1;
      back = true;
    }
  }
  r_.faults.device_faults += static_cast<int64_t>(outcome.faults.size());
  for (const auto& f : outcome.faults) Log(t, node, HealthChange::Kind::kFault, f.index, f.reason);
  for (int32_t i : outcome.recovering) Log(t, node, HealthChange::Kind::kRecovering, i);
  for (int32_t i : outcome.recovered) Log(t, node, HealthChange::Kind::kRecovered, i);
  if (outcome.cordoned) {
    n.state = NodeState::kCordoned;  // new work goes elsewhere; what runs on healthy devices keeps running
    ++r_.faults.cordons;
    Log(t, node, HealthChange::Kind::kCordoned, -1, outcome.cordon_reason);
  }
  if (outcome.uncordoned) {
    n.state = NodeState::kReady;
    ++r_.faults.uncordons;
    Log(t, node, HealthChange::Kind::kUncordoned);
    back = true;
  }
  if (down) {
    // Every workload with a task on a device now out of service loses its attempt (the server
    // reports those tasks Lost/DeviceError and requeues the workload).
    std::vector<int32_t> hit;
    for (size_t s = 0; s < snap_.workloads.size(); ++s) {
      const int32_t j = slot_job_[s];
      if (js_[j].phase != Phase::kRunning && js_[j].phase != Phase::kEvicting) continue;
      const bool on_bad = std::any_of(snap_.workloads[s].placements.begin(), snap_.workloads[s].placements.end(),
                                      [&](const sched::TaskPlacement& p) {
                                        return p.node == node &&
                                               std::any_of(p.devices.begin(), p.devices.end(), [&](const sched::DeviceGrant& g) {
                                                 return !n.devices[g.device].healthy;
                                               });
                                      });
      if (on_bad) hit.push_back(j);
    }
    for (int32_t j : hit) LoseAttempt(j, t);
  }
  if (back) full_ = true;  // capacity came back: every waiting workload may use it
  ArmSettle(node, t, settled);
}

void Driver::LoseAttempt(int32_t j, int64_t t) {
  // The fault gave no grace to checkpoint: the attempt's run time is thrown away, and the
  // workload waits again with its original submit time and the run time it had left when the
  // attempt started (what an earlier preemption checkpointed is kept).
  JobState& st = js_[j];
  const double lost = static_cast<double>(st.device_milli) / 1000.0 * static_cast<double>(t - st.started_s) / 3600.0;
  GroupReport& q = qrep_[proto_[j].queue];
  ++q.fault_requeued;
  q.fault_lost_device_hours += lost;
  ++r_.faults.requeued;
  r_.faults.lost_device_hours += lost;
  ++r_.jobs[j].fault_requeues;
  if (st.phase == Phase::kEvicting) {
    Stopped(j, t, /*checkpointed=*/false);  // stops now; its capacity may still be held for its preemptor
    return;
  }
  CountPreemptible(snap_.workloads[st.slot], -1);
  AccountRun(j, t);
  Requeue(j, t);
}

// ------------------------------------------------------------------ the run

EventSimResult Driver::Run() {
  const auto wall0 = std::chrono::steady_clock::now();
  auto last_progress = wall0;
  std::vector<UtilizationSample> samples;
  double gpu_area = 0, npu_area = 0, cpu_area = 0;
  const int64_t until = o_.until_s ? *o_.until_s : TraceHorizon(in_);
  // The run starts at the first arrival (fault events before it change no allocation).
  int64_t last_t = std::min(in_.jobs.empty() ? (events_.empty() ? 0 : events_.top().t) : first_arrival_, until);
  r_.start_s = last_t;
  // Time-weighted allocation over [last_t, t) of what was allocated before t's events.
  auto accrue = [&](int64_t t, double gpu, double npu, double cpu, const std::vector<int64_t>& pool_device,
                    const std::vector<int64_t>& pool_cpu) {
    const double dt = static_cast<double>(t - last_t);
    gpu_area += gpu * dt;
    npu_area += npu * dt;
    cpu_area += cpu * dt;
    for (size_t p = 0; p < r_.pools.size(); ++p) {
      pool_device_area_[p] += static_cast<double>(pool_device[p]) * dt;
      pool_cpu_area_[p] += static_cast<double>(pool_cpu[p]) * dt;
    }
    last_t = t;
  };
  while (!events_.empty() && events_.top().t <= until) {
    const int64_t t = events_.top().t;
    if (t != instant_) {
      if (dropped_ > 0) {
        r_.warnings.push_back("t=" + std::to_string(instant_) + "s: " + std::to_string(dropped_) +
                              " preemption(s) not applied after " + std::to_string(o_.max_rounds_per_instant) +
                              " rounds at this instant (workloads evicting each other)");
      }
      instant_ = t;
      rounds_ = 0;
      dropped_ = 0;
    }
    ++rounds_;
    const double gpu = static_cast<double>(used_gpu_), npu = static_cast<double>(used_npu_), cpu = static_cast<double>(used_cpu_);
    const std::vector<int64_t> pool_device = pool_used_device_, pool_cpu = pool_used_cpu_;
    const int64_t cycles_before = r_.cycles;
    bool changed = false;  // an instant where only stale events or aging steps that matter to nobody fall is none
    // 1. Apply every event at t.
    while (!events_.empty() && events_.top().t == t) {
      const Event e = events_.top();
      events_.pop();
      ++processed_;
      JobState& st = js_[e.job];
      switch (e.type) {
        case EventType::kArrive:
          Arrive(e.job, t);
          changed = true;
          break;
        case EventType::kFinish:
          if (e.epoch == st.epoch && (st.phase == Phase::kRunning || st.phase == Phase::kEvicting)) {
            Finish(e.job, t);
            changed = true;
          }
          break;
        case EventType::kStopped:
          if (e.epoch == st.epoch && st.phase == Phase::kEvicting) {
            Stopped(e.job, t);
            changed = true;
          }
          break;
        case EventType::kRequeue:
          if (e.epoch == st.epoch && st.phase == Phase::kHeld && st.claim < 0) {
            Requeue(e.job, t);
            changed = true;
          }
          break;
        case EventType::kAging:
          if (e.epoch == st.wait_gen && st.phase == Phase::kPending) Aging(e.job, t);
          break;
        case EventType::kTimer:
          timer_armed_ = false;
          if (truncated_since_full_) full_ = true;
          break;
        case EventType::kSettle:
          changed |= Settle(e.job, t);
          break;
        case EventType::kHealth:
          Health(e.job, t);
          changed = true;
          break;
      }
    }
    // 2. Preemptors whose victims all stopped go first, alone, on what they gave back.
    if (!nominate_.empty()) {
      std::vector<int32_t> tail = Tail(sched::CycleKind::kFresh, /*nominated=*/true);
      nominate_.clear();
      if (!tail.empty()) RunCycle(sched::CycleKind::kFresh, /*nominated=*/true, std::move(tail), t);
    }
    // 3. The server's cycle for what happened: full after a requeue, an aging step or the timer;
    //    bounded when capacity was freed; only the arrivals otherwise (ControlPlane::RunCycle).
    //    A cycle with nobody waiting decides nothing and is skipped.
    const bool any = full_ || freed_ || !fresh_.empty() || (!o_.incremental && changed);
    if (any) {
      const sched::CycleKind kind = sched::ChooseCycleKind(full_ || !o_.incremental, freed_);
      std::vector<int32_t> tail = Tail(kind, /*nominated=*/false);
      full_ = freed_ = false;
      fresh_.clear();
      if (kind == sched::CycleKind::kFull) truncated_since_full_ = false;
      if (!tail.empty()) RunCycle(kind, /*nominated=*/false, std::move(tail), t);
      if (truncated_since_full_ && !timer_armed_) {
        // Virtual time: a cycle costs nothing, so the timer's gap is the interval.
        const Duration gap = sched::FullCycleGap(std::chrono::seconds(o_.full_cycle_interval_s), Duration(0));
        timer_armed_ = true;
        events_.push({t + std::max<int64_t>(1, gap.count() / kMicrosPerSecond), EventType::kTimer, 0, 0});
      }
    }
    if ((!changed && r_.cycles == cycles_before) || t < r_.start_s) continue;
    accrue(t, gpu, npu, cpu, pool_device, pool_cpu);
    samples.push_back({t, r_.gpu_milli ? 100.0 * static_cast<double>(used_gpu_) / static_cast<double>(r_.gpu_milli) : 0.0,
                       r_.npu_milli ? 100.0 * static_cast<double>(used_npu_) / static_cast<double>(r_.npu_milli) : 0.0,
                       r_.cpu_milli ? 100.0 * static_cast<double>(used_cpu_) / static_cast<double>(r_.cpu_milli) : 0.0,
                       pending_count_, running_count_});
    if (o_.progress) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress > std::chrono::milliseconds(500)) {
        last_progress = now;
        // Events still to come: those queued, and at least one for each waiting workload.
        const double total = static_cast<double>(processed_ + static_cast<int64_t>(events_.size()) + pending_count_);
        char line[200];
        std::snprintf(line, sizeof line, "sim events: %.0f%% of events, virtual t=%lds (%.1f d), %d running, %d pending, %ld cycles",
                      100.0 * static_cast<double>(processed_) / std::max(1.0, total), static_cast<long>(t),
                      static_cast<double>(t) / 86400.0, running_count_, pending_count_, static_cast<long>(r_.cycles));
        o_.progress(line);
      }
    }
  }
  // What runs at the horizon counts up to it, not beyond.
  if (until > last_t) {
    accrue(until, static_cast<double>(used_gpu_), static_cast<double>(used_npu_), static_cast<double>(used_cpu_),
           pool_used_device_, pool_used_cpu_);
    samples.push_back({until, r_.gpu_milli ? 100.0 * static_cast<double>(used_gpu_) / static_cast<double>(r_.gpu_milli) : 0.0,
                       r_.npu_milli ? 100.0 * static_cast<double>(used_npu_) / static_cast<double>(r_.npu_milli) : 0.0,
                       r_.cpu_milli ? 100.0 * static_cast<double>(used_cpu_) / static_cast<double>(r_.cpu_milli) : 0.0,
                       pending_count_, running_count_});
  }
  r_.end_s = last_t;
  for (int64_t since : down_since_) {
    if (since >= 0 && r_.end_s > std::max(since, r_.start_s)) {
      r_.faults.unhealthy_device_hours += static_cast<double>(r_.end_s - std::max(since, r_.start_s)) / 3600.0;
    }
  }
  if (dropped_ > 0) {
    r_.warnings.push_back("t=" + std::to_string(instant_) + "s: " + std::to_string(dropped_) +
                          " preemption(s) not applied after " + std::to_string(o_.max_rounds_per_instant) +
                          " rounds at this instant (workloads evicting each other)");
  }
  Describe();
  const double span = static_cast<double>(std::max<int64_t>(1, r_.end_s - r_.start_s));
  r_.mean_gpu_pct = r_.gpu_milli ? 100.0 * gpu_area / span / static_cast<double>(r_.gpu_milli) : 0;
  r_.mean_npu_pct = r_.npu_milli ? 100.0 * npu_area / span / static_cast<double>(r_.npu_milli) : 0;
  r_.mean_cpu_pct = r_.cpu_milli ? 100.0 * cpu_area / span / static_cast<double>(r_.cpu_milli) : 0;
  for (size_t p = 0; p < r_.pools.size(); ++p) {
    PoolUtilization& pool = r_.pools[p];
    if (pool.device_milli > 0) pool.mean_device_pct = 100.0 * pool_device_area_[p] / span / static_cast<double>(pool.device_milli);
    if (pool.cpu_milli > 0) pool.mean_cpu_pct = 100.0 * pool_cpu_area_[p] / span / static_cast<double>(pool.cpu_milli);
    pool.device_hours = pool_device_area_[p] / 1000.0 / 3600.0;
  }
  Summarize();
  r_.violations = rules_.violations();
  // Thin the timeline: keep every k-th sample and the last.
  if (o_.timeline_points > 0 && static_cast<int64_t>(samples.size()) > o_.timeline_points) {
    const size_t k = (samples.size() + static_cast<size_t>(o_.timeline_points) - 1) / static_cast<size_t>(o_.timeline_points);
    for (size_t i = 0; i < samples.size(); i += k) r_.timeline.push_back(samples[i]);
    if (r_.timeline.back().t != samples.back().t) r_.timeline.push_back(samples.back());
  } else {
    r_.timeline = std::move(samples);
  }
  r_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return std::move(r_);
}

void Driver::Describe() {
  // Whatever is still pending gets its reason from one detailed cycle over the final state.
  if (pending_count_ == 0) return;
  const size_t admitted = snap_.workloads.size();
  std::vector<int32_t> tail;
  for (const auto& queue : pending_) {
    for (const PendingKey& k : queue) tail.push_back(k.job);
  }
  for (int32_t j : never_) {
    if (js_[j].phase == Phase::kPending) tail.push_back(j);
  }
  std::sort(tail.begin(), tail.end(), [&](int32_t a, int32_t b) {
    const int64_t sa = in_.jobs[a].submit_s, sb = in_.jobs[b].submit_s;
    return sa != sb ? sa < sb : rank_[a] < rank_[b];
  });
  for (int32_t j : tail) snap_.workloads.push_back(proto_[j]);
  snap_.now = At(r_.end_s);
  if (fair_) sched::SetFairShare(history_, &snap_);
  sched::SchedulerConfig cfg = o_.config;
  cfg.detailed_reasons = true;
  sched::CycleResult cr = sched::Schedule(snap_, cfg);
  std::unordered_map<std::string, int32_t> slot_of;
  for (size_t i = admitted; i < snap_.workloads.size(); ++i) slot_of[snap_.workloads[i].id] = static_cast<int32_t>(i);
  for (const sched::PendingReason& pr : cr.pending) {
    auto it = slot_of.find(pr.workload_id);
    if (it == slot_of.end()) continue;
    r_.unplaced.push_back({pr.workload_id, snap_.queues[snap_.workloads[it->second].queue].name,
                           std::string(sched::PendingCodeName(pr.code)), sched::DescribePending(pr)});
  }
  // A workload this cycle would admit had no event to trigger a cycle after it became placeable
  // (beyond what the driver models); it still counts as pending.
  for (const sched::Admission& a : cr.admissions) {
    const auto& w = snap_.workloads[a.workload];
    r_.unplaced.push_back({w.id, snap_.queues[w.queue].name, "placeable",
                           "placeable now, but no event triggered a cycle after it became so"});
  }
  snap_.workloads.resize(admitted);
}

void Driver::Summarize() {
  const size_t nq = qrep_.size();
  for (size_t j = 0; j < js_.size(); ++j) {
    const int32_t q = proto_[j].queue;
    const JobState& st = js_[j];
    if (st.phase == Phase::kRunning || st.phase == Phase::kEvicting) {
      ++qrep_[q].running_at_end;
      // Count device-hours up to the end for workloads that never finish.
      const double hours = static_cast<double>(r_.end_s - st.started_s) / 3600.0;
      AddByDay(qrep_[q], st.started_s, r_.end_s, st.device_milli);
      qrep_[q].device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
      if (st.borrowing) qrep_[q].borrowed_device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
    } else if (st.phase == Phase::kPending || st.phase == Phase::kHeld) {
      ++qrep_[q].pending_at_end;
    }
  }
  std::map<std::string, GroupReport> tenants;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> tenant_durations;
  std::vector<double> all_q, all_c;
  r_.total.name = "total";
  auto add = [](GroupReport& to, const GroupReport& from) {
    to.submitted += from.submitted;
    to.completed += from.completed;
    to.running_at_end += from.running_at_end;
    to.pending_at_end += from.pending_at_end;
    to.preempted += from.preempted;
    to.reclaimed += from.reclaimed;
    to.borrowing_admissions += from.borrowing_admissions;
    to.borrowed_device_hours += from.borrowed_device_hours;
    to.device_hours += from.device_hours;
    to.fault_requeued += from.fault_requeued;
    to.fault_lost_device_hours += from.fault_lost_device_hours;
  };
  for (size_t q = 0; q < nq; ++q) {
    qrep_[q].queueing = Stats(queueing_[q]);
    qrep_[q].completion = Stats(completion_[q]);
    GroupReport& t = tenants[qrep_[q].tenant];
    t.name = qrep_[q].tenant;
    add(t, qrep_[q]);
    add(r_.total, qrep_[q]);
    auto& td = tenant_durations[qrep_[q].tenant];
    td.first.insert(td.first.end(), queueing_[q].begin(), queueing_[q].end());
    td.second.insert(td.second.end(), completion_[q].begin(), completion_[q].end());
    all_q.insert(all_q.end(), queueing_[q].begin(), queueing_[q].end());
    all_c.insert(all_c.end(), completion_[q].begin(), completion_[q].end());
  }
  for (auto& [name, t] : tenants) {
    t.queueing = Stats(tenant_durations[name].first);
    t.completion = Stats(tenant_durations[name].second);
    r_.tenants.push_back(t);
  }
  r_.total.queueing = Stats(all_q);
  r_.total.completion = Stats(all_c);
  r_.queues = std::move(qrep_);
}

}  // namespace

const char* HealthChangeName(HealthChange::Kind kind) {
  switch (kind) {
    case HealthChange::Kind::kFault: return "fault";
    case HealthChange::Kind::kRecovering: return "recovering";
    case HealthChange::Kind::kRecovered: return "recovered";
    case HealthChange::Kind::kCordoned: return "cordoned";
    case HealthChange::Kind::kUncordoned: return "uncordoned";
    case HealthChange::Kind::kOperatorUncordon: return "operator-uncordon";
  }
  return "?";
}

int64_t TraceHorizon(const EventInput& input) {
  int64_t horizon = 0;
  for (const EventJob& j : input.jobs) horizon = std::max(horizon, j.submit_s + j.duration_s.value_or(0));
  return horizon;
}

EventSimResult RunEventSim(const EventInput& input, const EventSimOptions& options) {
  Driver driver(input, options);
  return driver.Run();
}

}  // namespace abacus::sim
