// The `abacus` command line: every subcommand is registered here.
#pragma once

namespace abacus::cli {

// Parses argv, runs the chosen subcommand and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace abacus::cli
