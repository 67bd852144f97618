// abacus-core: every verb (cli/commands.h); the lean `abacus` execs it for what it lacks.
#include "cli/commands.h"

int main(int argc, char** argv) { return abacus::cli::Main(argc, argv); }
