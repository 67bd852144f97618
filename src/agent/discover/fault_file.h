// Injected device faults (issue 26; docs/agent.md "Device health"): `abacus agent --fault-file
// FILE` reads FILE at every heartbeat, and each line `INDEX REASON…` makes device INDEX (the
// node-unique index `abacus get node` shows) report Unhealthy with REASON, whatever discovery
// says; a device no longer listed reports what discovery says again. Blank lines and lines
// starting with '#' are skipped. Fake devices (and real ones, to rehearse) fail this way in tests:
//   echo "1 XID 79: GPU has fallen off the bus" >> FILE
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::agent {

// Parses the text of a fault file: device index → reason ("injected fault" when none is given).
// InvalidArgument naming the line for a line that does not start with a device index.
Result<std::map<int32_t, std::string>> ParseFaultFile(std::string_view text);

// Reads and parses `path`; an absent file holds no fault.
Result<std::map<int32_t, std::string>> ReadFaultFile(const std::string& path);

}  // namespace abacus::agent
