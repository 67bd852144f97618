// abacus: the lean client (cli/app.h): client verbs over plain HTTP; everything else is handed
// to abacus-core.
#include "cli/app.h"
#include "common/log_level.h"

int main(int argc, char** argv) { return abacus::cli::RunApp(argc, argv, nullptr, &abacus::CheckLogLevel); }
