#include "cli/commands.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/bench.h"
#include "cli/completion.h"
#include "cli/sim.h"
#include "cli/usage.h"
#include "cli/validate.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/log.h"
#include "meter/price_list_codec.h"
#include "workload/secret_doc.h"

namespace abacus::cli {

int Main(int argc, char** argv) {
  // Document kinds other modules read: validate, submit and the server all know them.
  meter::RegisterPriceListKind();
  RegisterSecretKind();
  CLI::App app{"Abacus — a heterogeneous compute ledger and scheduler for GPUs, NPUs and CPUs.\n"
               "Run `abacus COMMAND --help` for a command's options and examples.",
               "abacus"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.set_version_flag("--version", "abacus " + std::string(BuildVersion()) + " (commit " + std::string(BuildCommit()) +
                                        ", built " + std::string(BuildDate()) + ")");
  // Each subcommand sets `exit_code` from its callback, which CLI11 runs during parse().
  int exit_code = 0;
  AddBenchCommand(app, &exit_code);
  AddSimCommand(app, &exit_code);
  AddBenchApiCommand(app, &exit_code);
  AddBenchE2eCommand(app, &exit_code);
  AddValidateCommand(app, &exit_code);
  AddServerCommands(app, &exit_code);
  AddAgentCommand(app, &exit_code);
  AddGatewayCommand(app, &exit_code);
  AddClientVerbs(app, &exit_code);
  AddRunCommand(app, &exit_code);
  AddEventsCommand(app, &exit_code);
  AddReportCommand(app, &exit_code);
  AddGovernanceCommands(app, &exit_code);
  AddSecretCommands(app, &exit_code);
  AddAdminCommand(app, &exit_code);
  AddRolloutCommands(app, &exit_code);
  AddFleetCommands(app, &exit_code);
  AddVersionCommand(app, &exit_code);
  AddCompletionCommand(app, &exit_code);
  app.parse_complete_callback([&] {
    Status st = InitLogging(log_level);
    if (!st.ok()) throw CLI::ValidationError("--log-level", st.message());
  });
  // Usage errors exit 2 (docs/cli.md): an unknown command is answered before CLI11 parses,
  // CLI11's own errors after.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::optional<int> answered = PreParse(app, args, std::cout, std::cerr)) return *answered;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ExitForParseError(app, e, args, std::cout, std::cerr);
  }
  return exit_code;
}

}  // namespace abacus::cli
