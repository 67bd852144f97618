#include <chrono>

#include "control/experiment.h"

namespace abacus::control {

bool StepIdle(const IdlePolicy& p, const std::vector<UtilizationSample>& samples, Time run_start, IdleState& s,
              Time now, Decisions& out) {
  if (!IsSet(run_start)) return false;
  if (s.last_active < run_start) s.last_active = run_start;  // a new run starts active
  if (s.last_sample < run_start) s.last_sample = run_start;
  for (const UtilizationSample& u : samples) {
    if (u.time > now || u.time < run_start) continue;
    if (u.time > s.last_sample) s.last_sample = u.time;
    if (u.percent >= p.utilization_below_percent && u.time > s.last_active) s.last_active = u.time;
  }
  Duration notice = std::chrono::seconds(p.notice_seconds);
  if (IsSet(s.notice_at)) {
    if (s.last_active >= s.notice_at) {
      s.notice_at = Time{};
      out.push_back(MakeEvent("IdleNoticeCancelled", "device activity resumed; no reclaim",
                              {{"activeAt", FormatTime(s.last_active)}}));
      return false;
    }
    return now >= s.notice_at + notice;
  }
  if (s.last_sample - s.last_active < std::chrono::seconds(p.window_seconds)) return false;
  s.notice_at = now;
  out.push_back(MakeEvent("IdleNotice",
                          "every device under " + std::to_string(p.utilization_below_percent) + "% since " +
                              FormatTime(s.last_active) + "; reclaimed at " + FormatTime(now + notice) +
                              " unless activity resumes",
                          {{"idleSince", FormatTime(s.last_active)},
                           {"reclaimAt", FormatTime(now + notice)},
                           {"utilizationBelowPercent", p.utilization_below_percent},
                           {"windowSeconds", p.window_seconds}},
                          "Idle"));
  return p.notice_seconds <= 0;
}

}  // namespace abacus::control
