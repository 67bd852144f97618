// `abacus-core`: every subcommand (the client verbs of app.h and the server, agent, simulator,
// bench, gateway, admin, validate and completion verbs), and https:// for the client verbs.
#pragma once

namespace abacus::cli {

// Parses argv, runs the chosen subcommand and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace abacus::cli
