#include "tenancy/priority_class.h"

#include <algorithm>
#include <chrono>

namespace abacus {

int32_t PriorityClass::EffectivePriority(Duration waited) const {
  if (aging_step <= 0 || !max_queue_wait || max_queue_wait->count() <= 0 || waited.count() <= 0) {
    return value;
  }
  int64_t steps = waited.count() / max_queue_wait->count();
  int64_t cap = ceiling ? std::max<int64_t>(*ceiling, value) : value;
  int64_t raised = static_cast<int64_t>(value) + steps * aging_step;
  return static_cast<int32_t>(std::min(raised, cap));
}

const std::vector<PriorityClass>& DefaultPriorityClasses() {
  using std::chrono::hours;
  auto aging = [](PriorityClass pc, int h, int32_t step, int32_t ceiling) {
    pc.max_queue_wait = std::chrono::duration_cast<Duration>(hours(h));
    pc.aging_step = step;
    pc.ceiling = ceiling;
    return pc;
  };
  static const std::vector<PriorityClass> kDefaults = {
      {"system-critical", 1000, false, true, false, {}, 0, {},
       "Platform components; never preempted."},
      {"production", 900, false, true, false, {}, 0, {},
       "Production inference; never preempted, may preempt anything below."},
      {"high", 700, true, true, false, {}, 0, {}, "Urgent training or batch work."},
      aging({"training", 500, true, true, false, {}, 0, {}, "Default for TrainingJob."}, 12, 100, 700),
      aging({"evaluation", 400, true, true, false, {}, 0, {}, "Default for Evaluation."}, 6, 100, 500),
      aging({"experiment", 300, true, true, false, {}, 0, {}, "Default for Experiment and BatchJob."},
            4, 100, 400),
      aging({"best-effort", 100, true, false, true, {}, 0, {},
             "Runs only on borrowed capacity; first to be reclaimed."},
            24, 100, 300),
  };
  return kDefaults;
}

const PriorityClass* FindDefaultPriorityClass(std::string_view name) {
  for (const auto& pc : DefaultPriorityClasses()) {
    if (pc.name == name) return &pc;
  }
  return nullptr;
}

}  // namespace abacus
