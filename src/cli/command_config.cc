#include "cli/command_config.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace abacus::cli {
namespace {

// Options that are about the command line itself, not settings.
bool IsMetaOption(const std::string& key) {
  static const std::set<std::string> kMeta = {"help", "help-all", "version", "config", "print-config"};
  return kMeta.count(key) > 0;
}

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string Scalar(const std::string& value) {
  YAML::Emitter e;
  e << value;
  return e.c_str();
}

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

}  // namespace

CommandConfig::CommandConfig(CLI::App* cmd, std::string default_path)
    : cmd_(cmd), default_path_(std::move(default_path)), path_(default_path_) {
  path_option_ = cmd->add_option(
      "--config", path_,
      "YAML settings file: each key is a long option without the dashes (listen: 0.0.0.0:8420, "
      "no-cgroups: true); options on the command line win; an unknown key is an error naming FILE:LINE. "
      "Default: " + default_path_ + " when it exists; '' reads none");
  cmd->add_flag("--print-config", print_only_,
                "print the settings in force (config file, options, defaults) as YAML and exit");
}

CLI::Option* CommandConfig::FindOption(const std::string& key) const {
  if (key.empty() || key[0] == '-' || IsMetaOption(key)) return nullptr;
  CLI::Option* opt = cmd_->get_option_no_throw("--" + key);
  // Options of `abacus` itself (--log-level) are settings of the command too.
  if (opt == nullptr && cmd_->get_parent() != nullptr) opt = cmd_->get_parent()->get_option_no_throw("--" + key);
  return opt;
}

std::string CommandConfig::Where(const std::string& key) const {
  auto it = lines_.find(key);
  if (it == lines_.end() || file_read_.empty()) return "--" + key;
  return file_read_ + ":" + std::to_string(it->second) + ": " + key;
}

Status CommandConfig::Apply() {
  std::string path = path_;
  if (path_option_->count() == 0) {
    std::error_code ec;
    if (!std::filesystem::exists(default_path_, ec)) return Status::OK();
    path = default_path_;
  }
  if (path.empty()) return Status::OK();
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read config file " + path + ": " + std::strerror(errno));
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  file_read_ = path;
  if (root.IsNull()) return Status::OK();
  std::string command = "`abacus " + cmd_->get_name() + "`";
  if (!root.IsMap()) {
    return InvalidArgument(path + ":" + std::to_string(LineOf(root)) + ": expected KEY: VALUE lines, one key per long option of " +
                           command);
  }
  std::set<std::string> seen;
  for (const auto& entry : root) {
    const YAML::Node& k = entry.first;
    const YAML::Node& v = entry.second;
    std::string where = path + ":" + std::to_string(LineOf(k)) + ": ";
    if (!k.IsScalar()) return InvalidArgument(where + "expected a key (a long option name)");
    std::string key = k.Scalar();
    if (!seen.insert(key).second) return InvalidArgument(where + key + ": given twice");
    CLI::Option* opt = FindOption(key);
    if (opt == nullptr) {
      return InvalidArgument(where + "unknown key '" + key + "' (the keys are the long options of " + command +
                             " without the dashes; --print-config lists them)");
    }
    if (v.IsNull()) continue;       // `key:` without a value: not set
    if (opt->count() > 0) continue;  // the command line wins
    lines_[key] = LineOf(k);
    where += key + ": ";
    try {
      if (opt->get_expected_min() == 0) {
        bool on = false;
        if (!v.IsScalar() || !YAML::convert<bool>::decode(v, on)) {
          return InvalidArgument(where + "expected true or false");
        }
        if (!on) continue;
        opt->add_result(opt->get_flag_value(key, ""));
      } else if (v.IsScalar()) {
        opt->add_result(v.Scalar());
      } else if (v.IsSequence()) {
        for (const auto& item : v) {
          if (!item.IsScalar()) return InvalidArgument(where + "expected a list of values");
          opt->add_result(item.Scalar());
        }
      } else {
        return InvalidArgument(where + "expected a value, not a map");
      }
      opt->run_callback();
    } catch (const CLI::Error& e) {
      // CLI11 names the option ("--key: …"); `where` already does, with the file and line.
      std::string_view what = e.what();
      if (const std::string flag = "--" + key + ": "; what.starts_with(flag)) what.remove_prefix(flag.size());
      return InvalidArgument(where + std::string(what));
    }
    if (key == "log-level") {
      // Logging was set up from the command line before this file was read.
      std::string level = opt->as<std::string>();
      auto parsed = spdlog::level::from_str(level);
      if (parsed == spdlog::level::off && level != "off") {
        return InvalidArgument(where + "unknown level '" + level + "' (trace, debug, info, warn, error or off)");
      }
      spdlog::set_level(parsed);
    }
  }
  return Status::OK();
}

std::string CommandConfig::Effective() const {
  std::ostringstream out;
  out << "# Settings of `abacus " << cmd_->get_name() << "`: "
      << (file_read_.empty() ? "no config file" : "config file " + file_read_)
      << ", then command-line options (which win), else defaults.\n";
  auto emit = [&out](const CLI::Option* opt) {
    if (opt == nullptr || opt->get_lnames().empty()) return;
    const std::string& key = opt->get_lnames().front();
    if (IsMetaOption(key)) return;
    out << "\n# " << OneLine(opt->get_description()) << "\n";
    if (opt->get_expected_min() == 0) {
      out << key << ": " << (opt->count() > 0 ? "true" : "false") << "\n";
    } else if (opt->count() > 0) {
      const auto& results = opt->results();
      if (results.size() == 1) {
        out << key << ": " << Scalar(results.front()) << "\n";
      } else {
        out << key << ":\n";
        for (const auto& r : results) out << "  - " << Scalar(r) << "\n";
      }
    } else if (!opt->get_default_str().empty()) {
      out << key << ": " << Scalar(opt->get_default_str()) << "\n";
    } else {
      out << "# " << key << ":\n";
    }
  };
  for (const CLI::Option* opt : cmd_->get_options()) emit(opt);
  if (cmd_->get_parent() != nullptr) emit(cmd_->get_parent()->get_option_no_throw("--log-level"));
  return out.str();
}

}  // namespace abacus::cli
