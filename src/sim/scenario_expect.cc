#include "sim/scenario.h"
#include "sim/scenario_render.h"
#include "sim/scenario_text.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "common/diagnostic.h"
#include "common/duration_parse.h"
#include "model/quantity.h"
#include "model/version.h"
#include "sched/claims.h"
#include "sched/cluster_state.h"
#include "sched/invariants.h"

namespace abacus::sim {

using sched::PendingCode;
using sched::PreemptionReason;
using sched::WorkloadInfo;
using namespace scenario_text;

// ------------------------------------------------------------------ expectations

void ScenarioRunner::Check(const ScenarioStep& step) {
  using K = ScenarioExpect::Kind;
  const ScenarioExpect& e = step.expect;
  ++outcome_.expectations;
  bool needs_cycle = e.kind != K::kRunning && e.kind != K::kEvicting && e.kind != K::kNode;
  if (needs_cycle && !cycled_) return Fail(e.line, e.text_as_written + "\n  no cycle has run yet");

  const sched::Admission* adm = nullptr;
  const sched::PendingReason* pend = nullptr;
  const sched::Reservation* res = nullptr;
  std::vector<const sched::Preemption*> pre;
  for (const auto& a : last_.admissions) {
    if (a.workload_id == e.workload) adm = &a;
  }
  for (const auto& p : last_.pending) {
    if (p.workload_id == e.workload) pend = &p;
  }
  for (const auto& r : last_.reservations) {
    if (r.workload_id == e.workload) res = &r;
  }
  for (const auto& p : last_.preemptions) {
    if (p.victim_id == e.workload) pre.push_back(&p);
  }
  std::vector<std::string> problems;
  auto problem = [&](std::string s) { problems.push_back(std::move(s)); };

  auto check_places = [&](const std::vector<sched::TaskPlacement>& placements, const std::vector<FlavorId>& flavors) {
    if (!e.nodes.empty() && Sorted(e.nodes) != NodeSet(state_, placements)) {
      problem("on " + Join(Sorted(e.nodes), ",") + " expected, got " + Join(NodeSet(state_, placements), ","));
    }
    if (!e.flavor.empty()) {
      for (FlavorId f : flavors) {
        if (Flavor::FromId(f).name() != e.flavor) {
          problem("flavor " + e.flavor + " expected, got " + FlavorNames(flavors));
          break;
        }
      }
    }
    if (!e.devices.empty()) {
      auto want = CanonicalPlaces(e.devices);
      auto got = CanonicalPlaces(ActualPlaces(state_, placements));
      if (want != got) problem("devices " + Join(want, ";") + " expected, got " + Join(got, ";"));
    }
  };

  switch (e.kind) {
    case K::kAdmitted:
      if (adm == nullptr) {
        problem("not admitted by the last cycle");
        break;
      }
      check_places(adm->placements, adm->group_flavors);
      if (e.borrowing && *e.borrowing != adm->borrowing) {
        problem(std::string(*e.borrowing ? "borrowing" : "not borrowing") + " expected, got " +
                (adm->borrowing ? "borrowing" : "not borrowing"));
      }
      if (e.priority && *e.priority != adm->effective_priority) {
        problem("effective priority " + std::to_string(*e.priority) + " expected, got " + std::to_string(adm->effective_priority));
      }
      break;
    case K::kNotAdmitted:
      if (adm != nullptr) problem("admitted by the last cycle on " + DescribePlacements(state_, adm->placements));
      break;
    case K::kPending: {
      if (pend == nullptr) {
        problem(adm ? "admitted, not pending" : "no pending reason for it in the last cycle");
        break;
      }
      if (e.code && *e.code != pend->code) {
        problem("code " + std::string(sched::PendingCodeName(*e.code)) + " expected, got " +
                std::string(sched::PendingCodeName(pend->code)));
      }
      std::string described = sched::DescribePending(*pend);
      for (const auto& t : e.texts) {
        if (described.find(t) == std::string::npos) problem("text \"" + t + "\" not in its reason");
      }
      break;
    }
    case K::kExplain: {
      if (pend == nullptr) {
        problem(adm ? "admitted, nothing to explain" : "no pending reason for it in the last cycle");
        break;
      }
      std::string described = sched::DescribePending(*pend);
      for (const auto& t : e.texts) {
        if (described.find(t) == std::string::npos) problem("text \"" + t + "\" not in its explanation");
      }
      break;
    }
    case K::kPreempted: {
      if (pre.empty()) {
        problem("not preempted in the last cycle");
        break;
      }
      const sched::Preemption* p = pre.front();
      if (!e.by.empty() && p->preemptor_id != e.by) problem("preempted by " + e.by + " expected, got by " + p->preemptor_id);
      if (e.reason && *e.reason != p->reason) {
        problem("reason " + std::string(sched::PreemptionReasonName(*e.reason)) + " expected, got " +
                std::string(sched::PreemptionReasonName(p->reason)));
      }
      if (e.grace_seconds && *e.grace_seconds != p->grace_seconds) {
        problem("grace " + std::to_string(*e.grace_seconds) + " expected, got " + std::to_string(p->grace_seconds));
      }
      if (pre.size() > 1) problem("preempted " + std::to_string(pre.size()) + " times in one cycle");
      break;
    }
    case K::kNotPreempted:
      if (!pre.empty()) problem("preempted by " + pre.front()->preemptor_id);
      break;
    case K::kReserved: {
      if (res == nullptr) {
        problem("holds no reservation");
        break;
      }
      std::vector<std::string> names;
      for (auto n : res->nodes) names.push_back(state_.nodes[n].name);
      names = Sorted(names);
      if (e.node_count && *e.node_count != static_cast<int32_t>(res->nodes.size())) {
        problem(std::to_string(*e.node_count) + " reserved node(s) expected, got " + std::to_string(res->nodes.size()) +
                " (" + Join(names, ",") + ")");
      }
      if (!e.nodes.empty() && Sorted(e.nodes) != names) {
        problem("reserved on " + Join(Sorted(e.nodes), ",") + " expected, got " + Join(names, ","));
      }
      break;
    }
    case K::kNotReserved:
      if (res != nullptr) problem("holds a reservation");
      break;
    case K::kCount: {
      int64_t running = 0, evicting = 0;
      for (const auto& w : state_.workloads) {
        if (w.admitted && !w.evicting) ++running;
        if (w.admitted && w.evicting) ++evicting;
      }
      std::map<std::string, int64_t> actual = {
          {"admitted", static_cast<int64_t>(last_.admissions.size())},
          {"pending", static_cast<int64_t>(last_.pending.size())},
          {"preempted", static_cast<int64_t>(last_.preemptions.size())},
          {"reserved", static_cast<int64_t>(last_.reservations.size())},
          {"running", running},
          {"evicting", evicting}};
      for (const auto& [k, v] : e.counts) {
        if (actual[k] != v) problem(k + "=" + std::to_string(v) + " expected, got " + std::to_string(actual[k]));
      }
      break;
    }
    case K::kOrder: {
      size_t last_pos = 0;
      std::string prev;
      for (const auto& name : e.order) {
        size_t pos = last_.admissions.size();
        for (size_t i = 0; i < last_.admissions.size(); ++i) {
          if (last_.admissions[i].workload_id == name) pos = i;
        }
        if (pos == last_.admissions.size()) {
          problem(name + " was not admitted");
        } else if (!prev.empty() && pos < last_pos) {
          problem(name + " was admitted before " + prev);
        }
        last_pos = pos;
        prev = name;
      }
      break;
    }
    case K::kRunning:
    case K::kEvicting: {
      int32_t i = Find(e.workload);
      if (i < 0) {
        problem("no such workload now");
        break;
      }
      const WorkloadInfo& w = state_.workloads[i];
      if (!w.admitted) {
        problem("not admitted");
      } else if (e.kind == K::kRunning && w.evicting) {
        problem("being evicted");
      } else if (e.kind == K::kEvicting && !w.evicting) {
        problem("not being evicted");
      } else if (e.kind == K::kRunning) {
        check_places(w.placements, w.group_flavors);
      }
      break;
    }
    case K::kNode: {
      const sched::NodeInfo* n = nullptr;
      for (const auto& x : state_.nodes) {
        if (x.name == e.node) n = &x;
      }
      if (n == nullptr) {
        problem("no such node");
        break;
      }
      if (e.node_state && n->state != *e.node_state) {
        problem(std::string(NodeStateName(*e.node_state)) + " expected, got " + std::string(NodeStateName(n->state)));
      }
      if (e.unhealthy) {
        std::vector<int> bad;
        for (const auto& d : n->devices) {
          if (!d.healthy) bad.push_back(d.index);
        }
        std::sort(bad.begin(), bad.end());
        auto text = [](const std::vector<int>& v) {
          std::string out;
          for (int i : v) out += (out.empty() ? "" : ",") + std::to_string(i);
          return out.empty() ? std::string("none") : out;
        };
        if (bad != *e.unhealthy) problem("devices out of service " + text(*e.unhealthy) + " expected, got " + text(bad));
      }
      break;
    }
  }
  if (problems.empty()) return;
  std::string msg = e.text_as_written + "\n";
  for (const auto& p : problems) msg += "  failed: " + p + "\n";
  if (pend != nullptr) msg += "  " + e.workload + " is pending:\n" + Indent(sched::DescribePending(*pend), "    ");
  if (cycled_) {
    msg += "  decisions of the last cycle:\n" + Indent(DescribeCycle(state_, last_), "    ");
  }
  Fail(e.line, msg);
}

}  // namespace abacus::sim
