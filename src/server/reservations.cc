#include "server/reservations.h"

#include "common/log.h"
#include "common/mutex.h"
#include "sched/tenancy_snapshot.h"
#include "sched/window_reservation.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"

namespace abacus::server {

std::string ReservationActor(const std::string& name) { return "reservation " + name; }

ReservationStatus ReservationStatusOf(const ReservationConfig& r, const std::vector<std::string>& nodes,
                                      Time now) {
  std::optional<sched::Window> w = sched::CurrentWindow(sched::ToWindowReservation(r), now);
  return {!w ? "Over" : now >= w->start ? "Active" : "Upcoming", w, nodes};
}

std::vector<meter::ReservedSpan> ReservedSpans(const Ledger& ledger, const meter::ReportWindow& window) {
  std::vector<meter::ReservedSpan> out;
  const auto all = ledger.config().reservations();
  if (all.empty()) return out;
  const auto held = ledger.ReservationNodes();
  for (size_t i = 0; i < all.size() && i < held.size(); ++i) {
    const ReservationConfig& r = *all[i];
    if (r.tenant.empty() && r.queue.empty() && r.user.empty()) continue;  // maintenance: drained time
    for (const sched::Window& w : sched::WindowsBetween(sched::ToWindowReservation(r), window.from, window.end())) {
      for (const std::string& node : held[i]) {
        const NodeRecord* n = ledger.FindNode(node);
        if (n == nullptr) continue;
        std::map<std::string, int64_t> per_flavor;
        for (const Device& d : n->node.devices) {
          if (d.flavor.is_accelerator() && (r.count == 0 || d.flavor == r.flavor)) ++per_flavor[d.flavor.name()];
        }
        for (const auto& [flavor, devices] : per_flavor) {
          out.push_back({r.name, node, flavor, devices, w.start, w.end, r.tenant, r.queue, r.user});
        }
      }
    }
  }
  return out;
}

Result<AppliedView> ControlPlane::DeleteReservation(const std::string& name, RequestContext* context) {
  using Answer = Result<AppliedView>;
  return AnswerOnLoop<Answer>(context, [this, name](const LoopReply<Answer>& reply) {
    commits_.SettleAll();  // it reads the configuration, which an apply in flight may change
    const ReservationConfig* r = ledger_.config().FindReservation(name);
    if (r == nullptr) {
      return reply(NotFound("reservation '" + name + "' not found (abacus get reservations lists them)"));
    }
    const bool drain = r->drain;
    WriteBatch batch;
    batch.Delete("reservation", name);
    // The delete's commit starts and the loop goes on; the caller is answered once it is durable
    // (and, for a maintenance window, once the nodes it cordoned take work again).
    auto then = [this, name, drain, reply](const Committer::Async& done) {
      if (!done.status.ok()) return reply(done.status);
      {
        WriterLock lock(state_mu_);
        ledger_.RemoveConfig("reservation", name);
      }
      pacer_.Changed();
      pacer_.RetryAll();  // what it held is open to every workload again
      const AppliedView deleted{"Reservation", name, "deleted", std::nullopt, std::nullopt};
      if (!drain) return reply(deleted);
      // Its maintenance is called off: the nodes it cordoned take work again. Uncordoning reads
      // the nodes as committed, which a continuation may not wait for: a command of its own.
      // (At a stop: answered at once; the nodes stay cordoned until an uncordon.)
      AnswerAfterCommand<Answer>(inbox_, reply, deleted, [this, name] { UncordonReservationNodes(name); });
    };
    CommitForRequestOnLoop(reply.audit(), std::move(batch), {}, std::move(then));
  });
}

void ControlPlane::UncordonReservationNodes(const std::string& name) {
  commits_.SettleAll();  // the nodes as committed
  std::vector<std::string> cordoned;
  for (const auto& [node, rec] : ledger_.nodes()) {
    if (rec.cordon.state != NodeState::kReady && rec.cordon.by == ReservationActor(name)) cordoned.push_back(node);
  }
  for (const std::string& node : cordoned) {
    Status st = WriteNow([&](Written then) {
      CordonOnLoop(node, false, ReservationActor(name), "reservation deleted", nullptr, std::move(then));
    });
    if (!st.ok()) ABACUS_LOG_WARN("reservation {}: node {} not uncordoned: {}", name, node, st.ToString());
  }
}

void ControlPlane::MaintainReservations() {
  const std::vector<const ReservationConfig*> all = ledger_.config().reservations();
  bool any = false;
  for (const ReservationConfig* r : all) any |= r->drain;
  if (!any) return;
  const Time now = clock_.Now();
  if (!steps_.maintenance.Due(now)) return;
  commits_.SettleAll();  // drains make working copies of durable records
  const std::vector<std::vector<std::string>> held = ledger_.ReservationNodes();
  for (size_t i = 0; i < all.size() && i < held.size(); ++i) {
    const ReservationConfig& r = *all[i];
    if (!r.drain) continue;
    std::optional<sched::Window> w = sched::CurrentWindow(sched::ToWindowReservation(r), now);
    const bool draining_time = w && now >= w->start - r.drain_grace;
    const std::string by = ReservationActor(r.name);
    for (const std::string& node : held[i]) {
      const NodeRecord* n = ledger_.FindNode(node);
      if (n == nullptr) continue;
      const bool ours = n->cordon.state != NodeState::kReady && n->cordon.by == by;
      Status st;
      if (draining_time && n->cordon.state == NodeState::kReady) {
        // Empty at the start: preemptible work leaves at once, the rest by the window's start.
        DrainOrder order;
        order.grace = std::max(Duration(0), w->start - now);
        order.by = by;
        order.reason = "maintenance window " + FormatTime(w->start) + " to " + FormatTime(w->end);
        st = DrainOnLoop(node, order, nullptr);
      } else if (!draining_time && ours) {
        st = WriteNow([&](Written then) {
          CordonOnLoop(node, false, by, "maintenance window over", nullptr, std::move(then));
        });
      }
      if (!st.ok()) ABACUS_LOG_WARN("reservation {}: node {}: {}", r.name, node, st.ToString());
    }
  }
}

}  // namespace abacus::server
