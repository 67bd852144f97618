// The process families of GET /metrics, named as Prometheus client libraries name them
// (process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds,
// process_max_fds, process_start_time_seconds), and abacus_build_info.
#pragma once

#include <string>

namespace abacus::server {

// Appends abacus_build_info and the process families read from /proc/self now.
void RenderProcessMetrics(std::string& out);

}  // namespace abacus::server
