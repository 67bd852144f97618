#include "cli/commands.h"

#include <CLI/CLI.hpp>

#include "cli/app.h"
#include "cli/bench.h"
#include "cli/completion.h"
#include "cli/sim.h"
#include "cli/tls_transport.h"
#include "cli/validate.h"
#include "cli/verbs.h"
#include "common/log.h"

namespace abacus::cli {
namespace {

void AddCoreCommands(CLI::App& app, int* exit_code) {
  AddBenchCommand(app, exit_code);
  AddSimCommand(app, exit_code);
  AddBenchE2eCommand(app, exit_code);
  AddValidateCommand(app, exit_code);
  AddServerCommands(app, exit_code);
  AddAgentCommand(app, exit_code);
  AddGatewayCommand(app, exit_code);
  AddAdminCommand(app, exit_code);
  AddCompletionCommand(app, exit_code);
}

}  // namespace

int Main(int argc, char** argv) {
  RegisterTlsTransport();
  return RunApp(argc, argv, &AddCoreCommands, &InitLogging);
}

}  // namespace abacus::cli
