// Renderings of event-mode results: JSON, a table for people, CSV (one row per queue and
// tenant), and an SVG chart of utilization and queue length over time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/events.h"

namespace abacus::sim {

// With `workloads`, also each workload's outcome: first start, finish, preemptions and where
// its tasks first ran (`workloads`: [{name, first_start_s, finish_s, preemptions, tasks: [{node, devices}]}]).
nlohmann::ordered_json EventsJson(const EventSimResult& r, bool workloads = false);
std::string EventsTable(const EventSimResult& r);
// "scope,name,tenant,submitted,completed,…" — scope is queue, tenant or total.
std::string EventsCsv(const EventSimResult& r);
std::string EventsSvg(const std::string& title, const EventSimResult& r);

}  // namespace abacus::sim
