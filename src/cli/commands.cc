#include "cli/commands.h"

#include <CLI/CLI.hpp>

#include <iostream>

#include "common/log.h"

namespace abacus::cli {

int Main(int argc, char** argv) {
  CLI::App app{"Abacus — a heterogeneous compute ledger and scheduler for GPUs, NPUs and CPUs.",
               "abacus"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.set_version_flag("--version", std::string("abacus 0.1.0"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace abacus::cli
