// A task's Secret files (issue 24; docs/agent.md, "Secrets"): the values the server opened into
// the assignment, written under the task's work dir as secrets/<path>/<key>, each file mode 0400
// and each directory 0500, before the task starts. Nothing here logs a value or its path's
// contents; the agent keeps them in memory only for the start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/task_user.h"
#include "common/status.h"

namespace abacus::agent {

struct SecretFile {
  std::string path;  // relative: "<mount path>/<key>", checked again here
  std::string data;  // the value (bytes)
};

// The directory secret files go to under `work_dir` (exported as ABACUS_SECRETS_DIR).
std::string SecretsDir(const std::string& work_dir);
// Replaces SecretsDir(work_dir) by exactly `files` (none: removes it), each file and directory
// owned by `owner` when given (the task's user), else by the agent. InvalidArgument for a path
// that is absolute or has empty, "." or ".." segments; FailedPrecondition naming the path (never
// the value) when a file cannot be written or given to its owner.
Status WriteSecretFiles(const std::string& work_dir, const std::vector<SecretFile>& files,
                        const std::optional<TaskUser>& owner = std::nullopt);
// Removes SecretsDir(work_dir) (its 0500 directories included) when a task is done, so that the
// values do not outlive the task even where task dirs are kept.
Status RemoveSecretFiles(const std::string& work_dir);

}  // namespace abacus::agent
