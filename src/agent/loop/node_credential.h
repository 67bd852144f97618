// The node credential an agent keeps in its work folder (WORK/node.credential, mode 0600), so that
// an agent restarted on the same machine proves to the server that it is that node when it
// registers again (docs/agent-protocol.md, "Registering again").
#pragma once

#include <string>

#include "common/status.h"

namespace abacus::agent {

// The credential stored for node `name` under `work_dir`; empty when there is none, or it is
// another node's.
std::string LoadNodeCredential(const std::string& work_dir, const std::string& name);
// Replaces the stored credential with `token` for node `name` (written to a temporary file,
// then renamed; mode 0600).
Status StoreNodeCredential(const std::string& work_dir, const std::string& name, const std::string& token);

}  // namespace abacus::agent
