// The `abacus` command line, shared by the two binaries (docs/cli.md "Start cost"):
//   - `abacus` (lean): the client verbs only — the REST client over plain HTTP, no server,
//     agent, simulator or TLS library loaded. A verb it does not have (server, agent, up, sim,
//     bench, gateway, admin, validate, completion, help) or an https:// server is handed to
//     `abacus-core` with the same arguments (execv);
//   - `abacus-core`: every verb (commands.h).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::cli {

// Registers the verbs that exist only in abacus-core (server, agent, sim, bench, …).
using AddCoreCommandsFn = void (*)(CLI::App& app, int* exit_code);

// Sets up logging at a `--log-level` value; a bad level is an error (the message names the
// accepted ones). The lean client only checks it (it logs nothing and loads no logger).
using SetUpLoggingFn = Status (*)(std::string_view level);

// Parses argv, runs the chosen subcommand and returns the exit code. `add_core` null: the lean
// client, which execs abacus-core for whatever needs it (and returns only when that fails).
int RunApp(int argc, char** argv, AddCoreCommandsFn add_core, SetUpLoggingFn set_up_logging);

// Registers the client verbs (the REST API's users), in both binaries.
void AddClientCommands(CLI::App& app, int* exit_code);

// Returns the path of abacus-core for the running lean binary: $ABACUS_CORE, else abacus-core
// beside it, else ../lib/abacus/abacus-core from its folder (the package's layout).
std::string CorePath();

}  // namespace abacus::cli
