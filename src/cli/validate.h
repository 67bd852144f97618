// `abacus validate -f FILE…`: checks spec files offline (syntax, fields, values and the
// references between the documents given) and prints every problem as FILE:LINE: field: message.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace abacus::cli {

// Registers the `validate` subcommand on `app`; its callback stores the exit code in
// `*exit_code`.
void AddValidateCommand(CLI::App& app, int* exit_code);

// Validates `files` ("-" reads `in`) and returns the exit code: 0 when every document is
// valid ("FILE: N documents OK (kinds…)" on `out`), 1 when there are problems (each on
// `err`), 2 when a file cannot be read.
int RunValidate(const std::vector<std::string>& files, std::istream& in, std::ostream& out,
                std::ostream& err);

}  // namespace abacus::cli
