// The one submission path of the CLI: `submit -f`, `apply -f` and `run` (which builds its
// document from flags) all send their documents through SubmitSources, so that a workload is
// parsed, validated and answered the same way whichever verb made it.
#pragma once

#include <string>
#include <vector>

namespace abacus::cli {

// One YAML text to send, named as errors should name it ("job.yaml", "stdin", "abacus run").
struct SubmitSource {
  std::string name, text;
};

// apply/submit --dry-run: checked and explained on the server, nothing stored; --diff (apply):
// also each field that would change, per object (implies a dry run).
struct ApplyMode {
  bool dry_run = false;
  bool diff = false;
};

// Validates `sources` here (line numbers), sends them to the server (POST /api/v1/workloads when
// `submit`, else /api/v1/apply with workloads updated in place) and prints the answer in `output`
// (table, json or yaml). Returns the exit code (docs/cli.md).
int SubmitSources(const std::string& server, const std::string& token, const std::string& ca_cert,
                  const std::string& output, const std::vector<SubmitSource>& sources, bool submit,
                  const ApplyMode& mode = {});

}  // namespace abacus::cli
