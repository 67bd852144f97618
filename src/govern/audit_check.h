// Verifying an audit chain in chunks while it grows: the background check of a running server
// (server/audit_watch.h). It reads `chunk` entries at a time up to a head taken beforehand, so
// that writers are never held up and memory stays bounded whatever the chain's length.
#pragma once

#include <cstddef>
#include <functional>

#include "common/status.h"
#include "govern/audit.h"

namespace abacus::govern {

// Checks entries 1..head.seq of `log` in chunks: seq continuity, each prev_hash against the
// previous entry's hash (GenesisHash for seq 1), each hash against its content, and that entry
// head.seq carries head.hash. Entries after `head` are not read. `keep_going` (optional) is asked
// between chunks; false stops with Aborted. An unreadable entry is a failed report, not an error.
Result<AuditVerifyReport> CheckAuditChain(const AuditLog& log, const AuditHead& head, size_t chunk = 10000,
                                          const std::function<bool()>& keep_going = nullptr);

}  // namespace abacus::govern
