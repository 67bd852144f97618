// The phase of a task on the agent protocol (docs/agent-protocol.md): what an agent reports and
// what the server stores in a placement's `phase` (the same names, so stored records load).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace abacus::wire {

// Running and Stopping: the process lives; Exited and Lost: it ended (final).
enum class TaskPhase : uint8_t { kRunning, kStopping, kExited, kLost };

// Returns "Running", "Stopping", "Exited" or "Lost" (the one name table).
std::string_view TaskPhaseName(TaskPhase phase);
// Returns the phase named `name` exactly; nullopt for any other text ("" included).
std::optional<TaskPhase> ParseTaskPhase(std::string_view name);
// True for Exited and Lost.
inline bool IsFinal(TaskPhase phase) { return phase == TaskPhase::kExited || phase == TaskPhase::kLost; }

}  // namespace abacus::wire
