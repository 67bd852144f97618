#include "cli/app.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/usage.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "meter/price_list_codec.h"
#include "workload/secret_doc.h"

namespace abacus::cli {
namespace {

// The verb of `args` (the first word that is not a global option), or "".
std::string VerbOf(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--log-level") {
      ++i;
      continue;
    }
    if (a.starts_with("-")) continue;
    return a;
  }
  return "";
}

// The value of `--NAME X` / `--NAME=X` anywhere in `args`, or "".
std::string FlagValue(const std::vector<std::string>& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) return args[i + 1];
    if (args[i].starts_with(name + "=")) return args[i].substr(name.size() + 1);
  }
  return "";
}

// Replaces this process with abacus-core and the same arguments; returns 1 (said why) when
// that fails.
int ExecCore(char** argv) {
  const std::string core = CorePath();
  ::execv(core.c_str(), argv);
  std::cerr << "error: cannot run " << core << ": " << std::strerror(errno)
            << " (the full abacus binary serves this command; reinstall the package, or set $ABACUS_CORE to its path)\n";
  return 1;
}

}  // namespace

std::string CorePath() {
  if (const char* env = std::getenv("ABACUS_CORE"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : self.parent_path();
  if (std::filesystem::exists(dir / "abacus-core", ec)) return (dir / "abacus-core").string();
  return (dir / ".." / "lib" / "abacus" / "abacus-core").lexically_normal().string();
}

namespace {

// The client verbs, in groups (each adds one or more verbs), the most used first.
constexpr AddCoreCommandsFn kClientGroups[] = {AddApplyAndSubmit,   AddReadVerbs,       AddChangeVerbs,
                                               AddRunCommand,       AddEventsCommand,   AddReportCommand,
                                               AddGovernanceCommands, AddSecretCommands, AddRolloutCommands,
                                               AddFleetCommands,    AddVersionCommand};

bool HasVerb(const CLI::App& app, const std::string& verb) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(verb)) return true;
  }
  return false;
}

// Adds client groups until one holds `verb` (a lean process builds the options of the verb it
// runs, not of every verb); returns whether one did.
bool AddClientCommandsFor(CLI::App& app, const std::string& verb, int* exit_code) {
  for (AddCoreCommandsFn add : kClientGroups) {
    add(app, exit_code);
    if (HasVerb(app, verb)) return true;
  }
  return false;
}

}  // namespace

void AddClientCommands(CLI::App& app, int* exit_code) {
  for (AddCoreCommandsFn add : kClientGroups) add(app, exit_code);
}

int RunApp(int argc, char** argv, AddCoreCommandsFn add_core, SetUpLoggingFn set_up_logging) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool lean = add_core == nullptr;
  const std::string verb = VerbOf(args);
  // The lean client answers `--version` itself; bare `abacus`, help and every verb it lacks
  // are the full binary's (its help lists all verbs; it suggests for a mistyped one).
  const bool version_only = verb.empty() && std::find(args.begin(), args.end(), std::string("--version")) != args.end();
  if (lean && verb.empty() && !version_only) return ExecCore(argv);
  const std::string version =
      "abacus " + std::string(BuildVersion()) + " (commit " + std::string(BuildCommit()) + ", built " + std::string(BuildDate()) + ")";
  if (lean && version_only) {  // what CLI11's version flag prints, without building the parser
    std::cout << version << "\n";
    return 0;
  }
  // Document kinds other modules read: validate, submit and the server all know them.
  meter::RegisterPriceListKind();
  RegisterSecretKind();
  CLI::App app{"Abacus — a heterogeneous compute ledger and scheduler for GPUs, NPUs and CPUs.\n"
               "Run `abacus COMMAND --help` for a command's options and examples.",
               "abacus"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  app.set_version_flag("--version", version);
  // Each subcommand sets `exit_code` from its callback, which CLI11 runs during parse().
  int exit_code = 0;
  if (!lean) {
    add_core(app, &exit_code);
    AddClientCommands(app, &exit_code);
  } else {
    if (!AddClientCommandsFor(app, verb, &exit_code)) return ExecCore(argv);
    // https:// needs TLS, which only the full binary loads.
    const ClientConfig c = ResolveClientConfig(FlagValue(args, "--server"), "", "");
    if (c.server.starts_with("https://")) return ExecCore(argv);
  }
  app.parse_complete_callback([&] {
    Status st = set_up_logging(log_level);
    if (!st.ok()) throw CLI::ValidationError("--log-level", st.message());
  });
  // Usage errors exit 2 (docs/cli.md): an unknown command is answered before CLI11 parses,
  // CLI11's own errors after.
  if (std::optional<int> answered = PreParse(app, args, std::cout, std::cerr)) return *answered;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ExitForParseError(app, e, args, std::cout, std::cerr);
  }
  return exit_code;
}

}  // namespace abacus::cli
