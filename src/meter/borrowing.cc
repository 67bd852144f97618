#include "meter/borrowing.h"

#include <algorithm>
#include <map>
#include <optional>

namespace abacus::meter {
namespace {

struct Member {
  std::string queue;
  int64_t nominal = 0;
  std::optional<int64_t> lending_limit;
  int64_t used = 0;  // milli-devices now, during the sweep
  ResourceTime used_total = 0, borrowed_total = 0, lent_total = 0;
};

struct Event {
  Time time;
  size_t member;
  int64_t delta;
};

struct Group {
  std::vector<Member> members;
  std::map<std::string, size_t> index;
  std::vector<Event> events;
  std::map<std::pair<size_t, size_t>, ResourceTime> flows;  // (borrower, lender) → amount

  size_t MemberOf(const std::string& queue) {
    auto [it, added] = index.emplace(queue, members.size());
    if (added) members.push_back(Member{queue, 0, std::nullopt});
    return it->second;
  }
};

constexpr size_t kCohort = SIZE_MAX;  // the "(cohort)" lender

// Integrates the rule of borrowing.h over `dt` microseconds with the current usage.
void Integrate(Group& g, int64_t dt) {
  ResourceTime total_borrowed = 0, total_lendable = 0;
  std::vector<int64_t> borrowed(g.members.size()), lendable(g.members.size());
  for (size_t i = 0; i < g.members.size(); ++i) {
    Member& m = g.members[i];
    borrowed[i] = std::max<int64_t>(0, m.used - m.nominal);
    lendable[i] = std::max<int64_t>(0, m.nominal - m.used);
    if (m.lending_limit) lendable[i] = std::min(lendable[i], *m.lending_limit);
    total_borrowed += borrowed[i];
    total_lendable += lendable[i];
    m.used_total += static_cast<ResourceTime>(m.used) * dt;
    m.borrowed_total += static_cast<ResourceTime>(borrowed[i]) * dt;
  }
  if (total_borrowed == 0) return;
  const ResourceTime den = std::max(total_borrowed, total_lendable);
  for (size_t q = 0; q < g.members.size(); ++q) {
    if (borrowed[q] == 0) continue;
    for (size_t l = 0; l < g.members.size(); ++l) {
      if (lendable[l] == 0) continue;
      ResourceTime amount = RoundDiv(static_cast<ResourceTime>(borrowed[q]) * lendable[l] * dt, den);
      g.flows[{q, l}] += amount;
      g.members[l].lent_total += amount;
    }
    if (total_borrowed > total_lendable) {
      g.flows[{q, kCohort}] += RoundDiv(
          static_cast<ResourceTime>(borrowed[q]) * (total_borrowed - total_lendable) * dt, total_borrowed);
    }
  }
}

void Sweep(Group& g) {
  std::sort(g.events.begin(), g.events.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
  for (size_t i = 0; i < g.events.size();) {
    Time t = g.events[i].time;
    for (; i < g.events.size() && g.events[i].time == t; ++i) g.members[g.events[i].member].used += g.events[i].delta;
    if (i < g.events.size()) Integrate(g, (g.events[i].time - t).count());
  }
}

}  // namespace

BorrowingResult ComputeBorrowing(std::span<const UsageInterval> intervals,
                                 std::span<const QueueQuota> quotas, const ReportWindow& window) {
  // 1) Cohorts and nominal quotas from the queue configuration.
  std::map<std::string, std::string> cohort_of;
  std::map<std::pair<std::string, std::string>, Group> groups;  // (cohort, flavor)
  for (const QueueQuota& q : quotas) {
    if (q.cohort.empty()) continue;
    cohort_of[q.queue] = q.cohort;
    Group& g = groups[{q.cohort, q.flavor}];
    Member& m = g.members[g.MemberOf(q.queue)];
    m.nominal = q.nominal_milli;
    m.lending_limit = q.lending_limit_milli;
  }
  // 2) Usage changes, clipped to the window.
  for (const UsageInterval& iv : intervals) {
    if (iv.device_milli <= 0) continue;
    auto cohort = cohort_of.find(iv.queue);
    if (cohort == cohort_of.end()) continue;
    auto [a, b] = Clip(iv, window.from, window.to, window.now);
    if (a >= b) continue;
    Group& g = groups[{cohort->second, iv.flavor}];
    size_t m = g.MemberOf(iv.queue);
    g.events.push_back({a, m, iv.device_milli});
    g.events.push_back({b, m, -iv.device_milli});
  }
  // 3) Sweep each cohort and flavor; collect flows and per-queue totals.
  BorrowingResult out;
  for (auto& [key, g] : groups) {
    Sweep(g);
    for (const auto& [pair, amount] : g.flows) {
      if (amount == 0) continue;
      out.flows.push_back({key.first, key.second, g.members[pair.first].queue,
                           pair.second == kCohort ? kCohortLender : g.members[pair.second].queue, amount});
    }
    for (const auto& [name, i] : g.index) {
      const Member& m = g.members[i];
      out.queues.push_back({m.queue, key.first, key.second, m.nominal, m.used_total, m.borrowed_total, m.lent_total});
    }
  }
  std::stable_sort(out.flows.begin(), out.flows.end(), [](const BorrowFlow& a, const BorrowFlow& b) {
    return std::tie(a.cohort, a.flavor, a.borrower, a.lender) < std::tie(b.cohort, b.flavor, b.borrower, b.lender);
  });
  return out;
}

BorrowingResult BorrowingNow(std::span<const QueueQuota> quotas, std::span<const UseNow> use) {
  // The same sweep over a window of one microsecond in which every use is open.
  std::vector<UsageInterval> intervals;
  intervals.reserve(use.size());
  for (const UseNow& u : use) {
    UsageInterval iv;
    iv.queue = u.queue;
    iv.flavor = u.resource;
    iv.device_milli = u.used;
    iv.start = Time{};
    intervals.push_back(std::move(iv));
  }
  ReportWindow instant{Time{}, Time{} + std::chrono::microseconds(1), Time::max()};
  return ComputeBorrowing(intervals, quotas, instant);
}

}  // namespace abacus::meter
