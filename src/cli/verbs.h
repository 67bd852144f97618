// Client verbs (DESIGN §6): apply, submit, get, describe, explain, cancel, logs, scale — each a
// REST call to the server (see client.h for how the server and token are found).
#pragma once

#include <iosfwd>
#include <string>
#include <nlohmann/json_fwd.hpp>

namespace CLI {
class App;
}

namespace abacus::cli {

class ApiClient;

// Register the client verbs on `app`, in three groups (a lean process builds only the group of
// the verb it runs); their callbacks store the exit code in `*exit_code`.
void AddApplyAndSubmit(CLI::App& app, int* exit_code);  // apply, submit
void AddReadVerbs(CLI::App& app, int* exit_code);       // get, describe, explain
void AddChangeVerbs(CLI::App& app, int* exit_code);     // cancel, delete, scale, approve, reject
// Registers `abacus server` and `abacus up`.
void AddServerCommands(CLI::App& app, int* exit_code);
// Registers `abacus bench e2e` under the existing `bench` command (bench_e2e.cc).
void AddBenchE2eCommand(CLI::App& app, int* exit_code);
// Registers `abacus run NAME -- COMMAND` (run_cmd.cc).
void AddRunCommand(CLI::App& app, int* exit_code);
// Registers `abacus report` (report_cmd.cc).
void AddReportCommand(CLI::App& app, int* exit_code);
// Registers `abacus agent` (agent_cmd.cc).
void AddAgentCommand(CLI::App& app, int* exit_code);
// `abacus gateway` (gateway_cmd.cc).
void AddGatewayCommand(CLI::App& app, int* exit_code);
// Registers `abacus audit`, `abacus token create|list|revoke` and `abacus node reset`
// (governance_cmd.cc).
void AddGovernanceCommands(CLI::App& app, int* exit_code);
// `abacus secret …` (secret_cmd.cc).
void AddSecretCommands(CLI::App& app, int* exit_code);
// The tables of `abacus get users` and `abacus get policies` (governance_cmd.cc): one row per
// item of GET /api/v1/users and /api/v1/policies.
void UserTable(const nlohmann::json& items, std::ostream& out);
void PolicyTable(const nlohmann::json& items, std::ostream& out);
// Prints secrets (GET /api/v1/secrets items): name, scope, keys, version, who and when; never a
// value (the API has none to give).
void SecretTable(const nlohmann::json& items, std::ostream& out);
// Prints the body of GET /api/v1/evaluations as `abacus get evaluations` tables
// (evaluations_cmd.cc): one row per archived result, or, when the body has "comparison"
// (--model), that model's versions side by side; returns the exit code.
int PrintEvaluations(const nlohmann::json& body, std::ostream& out, std::ostream& err);
// Registers the fleet verbs: cordon, uncordon, drain, hold, release, requeue, suspend, resume,
// set-priority (fleet_cmd.cc).
void AddFleetCommands(CLI::App& app, int* exit_code);
// `abacus cancel -l k=v,k2!=v | --state S | --queue Q | --project P [--yes]`: the active workloads
// that match all given filters, listed and confirmed (unless `yes`), then cancelled one by one.
struct BulkCancelArgs {
  std::string server, token, ca_cert;
  std::string selector, state, queue, project, reason;
  bool yes = false;
};
// Returns the exit code: 2 for a bad filter, or when confirmation is needed but stdin is no
// terminal (pass --yes); 1 when a cancel was refused.
int RunBulkCancel(const BulkCancelArgs& args);
// Registers `abacus logs` (logs_cmd.cc).
void AddLogsCommand(CLI::App& app, int* exit_code);
// Registers `abacus events [WORKLOAD] [-w]` (events_cmd.cc).
void AddEventsCommand(CLI::App& app, int* exit_code);
// Registers `abacus admin migrate` (admin_cmd.cc).
void AddAdminCommand(CLI::App& app, int* exit_code);
// Registers `abacus rollout` (NAME --version, status, history, undo) and `abacus set image`
// (rollout_cmd.cc).
void AddRolloutCommands(CLI::App& app, int* exit_code);
// Registers `abacus version`: the client's version, commit and build day, and the server's
// (GET /api/v1/version) when it answers (version_cmd.cc).
void AddVersionCommand(CLI::App& app, int* exit_code);
// `abacus apply` of one workload document `doc` (canonical JSON): updates the active workload of
// its name in its project (PUT), else submits it. Returns {kind, name, id, action, diff}; null
// with the server's answer in `*error` when refused (rollout_cmd.cc). `dry_run`: the server's
// checks and answer ("dryRun": where a new one would go; the diff of an update), nothing stored.
nlohmann::json ApplyWorkloadDocument(ApiClient& api, const nlohmann::json& doc, std::string* error,
                                     bool dry_run = false);

}  // namespace abacus::cli
