// TrainingJob controller: gang start, failure classification, retries with exponential
// backoff (infrastructure failures do not consume a retry), a gang stopped as a whole when one
// task fails, preemption requeue with resume, and maxRuntime.
#pragma once

#include "control/completion.h"
#include "control/decision.h"
#include "control/view.h"

namespace abacus::control {

struct TrainingOptions {
  Duration backoff_cap = kMaxBackoff;
  int32_t max_infra_requeues = 20;  // then Failed with the infrastructure reason; 0: unlimited
};

// Returns the decisions for TrainingJob `w` at `now`; call after every task report on it and
// on every loop tick while it is Admitted, Running or Preempting.
Decisions ReconcileTraining(const WorkloadView& w, Time now, const TrainingOptions& o = {});

// Returns the job's running time at `now`: prior_runtime plus the current attempt's time
// since its first task started.
Duration TrainingRuntime(const WorkloadView& w, Time now);

}  // namespace abacus::control
