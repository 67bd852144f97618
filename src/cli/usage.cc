#include "cli/usage.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <ostream>

#include "cli/client.h"

namespace abacus::cli {
namespace {

// The subcommand of `app` that `word` names (name or alias), or null.
const CLI::App* Subcommand(const CLI::App& app, const std::string& word) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(word)) return sub;
  }
  return nullptr;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

bool HasSubcommands(const CLI::App& app) { return !app.get_subcommands([](const CLI::App*) { return true; }).empty(); }

std::string Joined(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

}  // namespace

int EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::vector<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates) {
  int best = std::min<int>(2, static_cast<int>(word.size()) - 1);
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    int d = EditDistance(word, c);
    if (d > best) continue;
    if (d < best) out.clear();
    best = d;
    out.push_back(c);
  }
  return out;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::vector<std::string> near = Nearest(word, candidates);
  if (near.empty()) return "";
  for (auto& n : near) n = "'" + n + "'";
  return " did you mean " + Joined(near, " or ") + "?";
}

CommandWords FindCommandWords(const CLI::App& app, const std::vector<std::string>& args) {
  CommandWords out;
  const CLI::App* current = &app;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      if (a == "-h" || a == "--help" || a == "--version") out.help = true;
      if (a.find('=') != std::string::npos) continue;
      if (a.size() > 2 && a[1] != '-') continue;  // -ojson: the value is attached
      const CLI::Option* opt = current->get_option_no_throw(a);
      if (opt != nullptr && opt->get_expected_max() > 0) ++i;  // skip its value
      continue;
    }
    if (!HasSubcommands(*current)) break;  // a positional argument of the command
    if (const CLI::App* sub = Subcommand(*current, a)) {
      out.path.push_back(sub->get_name());
      current = sub;
      continue;
    }
    if (current->get_require_subcommand_min() > 0 && !out.help) out.unknown = a;
    break;
  }
  return out;
}

std::optional<int> PreParse(const CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                            std::ostream& err) {
  if (args.empty()) {
    out << app.help();
    return kExitOk;
  }
  CommandWords words = FindCommandWords(app, args);
  if (!words.unknown) return std::nullopt;
  const CLI::App* parent = &app;
  for (const auto& p : words.path) parent = Subcommand(*parent, p);
  std::string prefix = "abacus" + (words.path.empty() ? std::string() : " " + Joined(words.path, " "));
  std::vector<std::string> names = SubcommandNames(*parent);
  std::string hint = DidYouMean(*words.unknown, names);
  err << "error: unknown command '" << *words.unknown << "'" << (words.path.empty() ? "" : " for '" + prefix + "'")
      << (hint.empty() ? "" : ";" + hint) << "\n"
      << "Run '" << prefix << " --help' for the commands (" << Joined(names, ", ") << ").\n";
  return kExitUsage;
}

int ExitForParseError(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args,
                      std::ostream& out, std::ostream& err) {
  const std::string name = e.get_name();
  if (name == "CallForHelp" || name == "CallForAllHelp" || name == "CallForVersion") return app.exit(e, out, err);
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return kExitOk;
  CommandWords words = FindCommandWords(app, args);
  std::string prefix = "abacus" + (words.path.empty() ? std::string() : " " + Joined(words.path, " "));
  std::string what = e.what();
  if (name == "RequiredError" && what == "A subcommand is required") {
    const CLI::App* cmd = &app;
    for (const auto& p : words.path) cmd = Subcommand(*cmd, p);
    what = "'" + prefix + "' needs a command: " + Joined(SubcommandNames(*cmd), ", ");
  }
  err << "error: " << what << "\n"
      << "Run '" << prefix << " --help' for the usage and examples.\n";
  return kExitUsage;
}

}  // namespace abacus::cli
