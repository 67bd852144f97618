// `abacus bench …`: benchmarks that print numbers (never pass/fail).
#pragma once

#include <CLI/CLI.hpp>

namespace abacus::cli {

// Registers `abacus bench scheduler`; the chosen command's exit status goes to *exit_code.
void AddBenchCommand(CLI::App& app, int* exit_code);

}  // namespace abacus::cli
