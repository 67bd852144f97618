// The YAML settings file of a long-running command (`abacus server`, `abacus agent`): every
// long option of the command is a key (its name without the dashes), flags take true/false, and
// an option given on the command line wins over the file (docs/operations.md, "Config files").
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace abacus::cli {

class CommandConfig {
 public:
  // Adds `--config FILE` and `--print-config` to `cmd`. Without --config, `default_path` is read
  // when that file exists; `--config ''` reads none.
  CommandConfig(CLI::App* cmd, std::string default_path);

  // Fills every option not given on the command line from the file and runs the option's checks.
  // Errors (unknown key, bad value, unreadable file) read `FILE:LINE: key: message`. Call it first
  // in the command's callback, before the bound variables are used.
  Status Apply();

  // True when --print-config was given: the command prints Effective() and exits instead of running.
  bool print_only() const { return print_only_; }

  // The settings in force after Apply(), as YAML (each option's description as a comment above
  // it; options without a value commented out), usable as a config file.
  std::string Effective() const;

  // The file Apply() read ("" when none).
  const std::string& file_read() const { return file_read_; }

  // Where the value of option `key` (its long name without dashes) came from, for the error a
  // command's own check of it gives: "FILE:LINE: key" when the file set it, else "--key".
  std::string Where(const std::string& key) const;

 private:
  CLI::Option* FindOption(const std::string& key) const;

  CLI::App* cmd_;
  std::string default_path_;
  std::string path_;
  CLI::Option* path_option_ = nullptr;
  bool print_only_ = false;
  std::string file_read_;
  std::map<std::string, int> lines_;  // the keys the file set, and their lines
};

}  // namespace abacus::cli
