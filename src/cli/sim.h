// `abacus sim …`: trace-driven simulation over src/sched (docs/simulator.md).
//   abacus sim packing --nodes NODES.csv --pods PODS.csv --policy P[,P…] --arrival 1.3
//                      --seeds 42-51 [-o table|json|csv] [--plot FILE.svg]
//   abacus sim events --trace FILE [--config FILE] [-o table|json|csv] [--plot FILE.svg]
#pragma once

#include <CLI/CLI.hpp>

namespace abacus::cli {

// Registers `abacus sim packing` and `abacus sim events`; the chosen command's exit status goes
// to *exit_code (0 ok, 1 bad input, 2 bad usage).
void AddSimCommand(CLI::App& app, int* exit_code);

}  // namespace abacus::cli
