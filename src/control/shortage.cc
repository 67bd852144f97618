#include "control/shortage.h"

namespace abacus::control {

void TrackShortage(int32_t wanted, int32_t available, ShortageState& s, Time now, Decisions& out) {
  bool short_now = wanted > available;
  if (s.open && short_now && s.wanted == wanted && s.available == available) return;
  bool was_open = s.open;
  if (s.open) {
    out.push_back(RecordShortage{s.wanted, s.available, s.start, now});
    if (!short_now) {
      int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(now - s.start).count();
      out.push_back(MakeEvent("ShortageEnded", "all " + std::to_string(wanted) + " replica(s) placed",
                              {{"wanted", wanted}, {"available", available}, {"seconds", seconds}}));
    }
    s.open = false;
  }
  if (!short_now) return;
  s = {true, now, wanted, available};
  out.push_back(RecordShortage{wanted, available, now, std::nullopt});
  out.push_back(MakeEvent(was_open ? "ShortageChanged" : "ShortageStarted",
                          "wants " + std::to_string(wanted) + " replica(s), " + std::to_string(available) +
                              " placed; each missing replica waits for the scheduler (abacus explain says why: "
                              "quota, capacity, a pool)",
                          {{"wanted", wanted}, {"available", available}}, "ReplicasUnplaced"));
}

}  // namespace abacus::control
