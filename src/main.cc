// abacus: one binary, subcommand dispatch only.
#include "cli/commands.h"

int main(int argc, char** argv) { return abacus::cli::Main(argc, argv); }
