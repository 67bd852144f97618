// PriorityClass: how urgent a workload is, whether it may be preempted or preempt others, and
// how its priority ages while it waits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace abacus {

struct PriorityClass {
  std::string name;
  int32_t value = 0;           // higher runs first; 0..1000000000
  bool preemptible = true;     // may be evicted for higher-priority work or quota reclaim
  bool can_preempt = true;     // may evict lower-priority preemptible work
  bool borrowed_only = false;  // admitted only on capacity borrowed from the cohort
  // Aging: every full max_queue_wait a workload waits adds aging_step to its priority, never
  // beyond ceiling. aging_step > 0 needs both max_queue_wait and ceiling.
  std::optional<Duration> max_queue_wait;
  int32_t aging_step = 0;
  std::optional<int32_t> ceiling;
  std::string description;

  // Returns the priority after waiting `waited`: value + aging_step × ⌊waited / max_queue_wait⌋,
  // capped at ceiling (and never below value).
  int32_t EffectivePriority(Duration waited) const;

  bool operator==(const PriorityClass&) const = default;
};

// The built-in classes (DESIGN §3), highest first:
//   name             value preemptible canPreempt borrowedOnly aging (maxQueueWait/step/ceiling)
//   system-critical  1000  no          yes        no           -
//   production        900  no          yes        no           -
//   high              700  yes         yes        no           -
//   training          500  yes         yes        no           12h / +100 / 700
//   evaluation        400  yes         yes        no           6h / +100 / 500
//   experiment        300  yes         yes        no           4h / +100 / 400
//   best-effort       100  yes         no         yes          24h / +100 / 300
const std::vector<PriorityClass>& DefaultPriorityClasses();

// Returns the default class named `name`, or nullptr.
const PriorityClass* FindDefaultPriorityClass(std::string_view name);

}  // namespace abacus
