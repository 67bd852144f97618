// Shortage intervals of an InferenceService: periods when it wanted more replicas than were
// placed. Each (wanted, available) pair is one interval, as meter::ShortageInterval records.
#pragma once

#include "control/decision.h"

namespace abacus::control {

// Kept across calls, inside InferenceState.
struct ShortageState {
  bool open = false;
  Time start{};
  int32_t wanted = 0;
  int32_t available = 0;
  bool operator==(const ShortageState&) const = default;
};

// Opens an interval when wanted > available, closes it when that ends, and closes and reopens
// it when either number changes; appends RecordShortage decisions and ShortageStarted /
// ShortageChanged / ShortageEnded events.
void TrackShortage(int32_t wanted, int32_t available, ShortageState& s, Time now, Decisions& out);

}  // namespace abacus::control
