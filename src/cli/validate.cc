#include "cli/validate.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "workload/documents.h"

namespace abacus::cli {
namespace {

constexpr char kFooter[] = R"(
Checks spec files without a server: YAML syntax, every field (names, types, ranges,
quantities such as 64Gi, durations such as 72h, flavor patterns such as gpu/nvidia/*,
runtime constraints such as cuda>=12.2) and the references between the documents given
together (queue -> tenant and cohort, workload -> queue, project and priority class).
Every problem is printed as FILE:LINE: field: message.

Examples:
  abacus validate -f examples/org.yaml -f examples/workloads/training.yaml
  cat job.yaml | abacus validate -f -

  $ abacus validate -f bad.yaml
  bad.yaml:12: spec.taskGroups[0].resources.accelerators.share: must be at most 1000, got 1500

Exit status: 0 valid, 1 problems found, 2 a file could not be read.
Field reference: docs/specs.md
)";

// Reads all of `path` ("-" = `in`) into `text`; false with `error` set when it cannot.
bool ReadInput(const std::string& path, std::istream& in, std::string& text, std::string& error) {
  std::ostringstream buf;
  if (path == "-") {
    buf << in.rdbuf();
    text = buf.str();
    return true;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = std::strerror(errno);
    return false;
  }
  buf << file.rdbuf();
  if (file.bad()) {
    error = "read error";
    return false;
  }
  text = buf.str();
  return true;
}

// "3 Tenant, 2 Queue, 1 TrainingJob" in order of first appearance.
std::string KindSummary(const std::vector<const Document*>& docs) {
  std::vector<std::pair<std::string, int>> counts;
  for (const Document* d : docs) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == d->kind(); });
    if (it == counts.end()) {
      counts.emplace_back(std::string(d->kind()), 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [kind, n] : counts) {
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + kind;
  }
  return out;
}

}  // namespace

int RunValidate(const std::vector<std::string>& files, std::istream& in, std::ostream& out,
                std::ostream& err) {
  bool unreadable = false;
  std::vector<std::string> names;  // display names, in order; readable files only
  std::vector<Document> all;
  std::map<std::string, std::map<std::string, int>> other;  // file → kind → count
  Diagnostics diags;
  for (const auto& path : files) {
    std::string text, error;
    if (!ReadInput(path, in, text, error)) {
      err << path << ": cannot read: " << error << "\n";
      unreadable = true;
      continue;
    }
    std::string name = path == "-" ? "<stdin>" : path;
    names.push_back(name);
    ParsedDocuments parsed = ParseDocuments(text, name);
    for (const auto& d : parsed.diagnostics.items()) diags.Add(d);
    for (auto& d : parsed.documents) all.push_back(std::move(d));
    // Kinds read outside the spec objects: PriceList (extensions), User and AdmissionPolicy.
    for (const auto& e : parsed.extensions) other[name][e.kind]++;
    for (const auto& g : parsed.governance) other[name][std::string(g.kind())]++;
  }
  CheckDocuments(all, diags);

  // Report in input order: by file as given, then by line.
  std::vector<Diagnostic> sorted = diags.items();
  auto file_rank = [&](const std::string& f) {
    return std::find(names.begin(), names.end(), f) - names.begin();
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    auto ra = file_rank(a.file), rb = file_rank(b.file);
    return ra != rb ? ra < rb : a.line < b.line;
  });
  std::map<std::string, int> problems;  // file → count
  for (const auto& d : sorted) {
    err << d.ToString() << "\n";
    ++problems[d.file];
  }
  for (const auto& name : names) {
    if (problems.count(name) != 0) continue;
    std::vector<const Document*> docs;
    for (const auto& d : all) {
      if (d.source.file == name) docs.push_back(&d);
    }
    std::string summary = docs.empty() ? "" : KindSummary(docs);
    size_t count = docs.size();
    for (const auto& [kind, n] : other[name]) {
      summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
      count += static_cast<size_t>(n);
    }
    out << name << ": " << count << (count == 1 ? " document" : " documents") << " OK";
    if (!summary.empty()) out << " (" << summary << ")";
    out << "\n";
  }
  if (!diags.empty()) {
    err << diags.size() << (diags.size() == 1 ? " problem" : " problems") << " in "
        << problems.size() << (problems.size() == 1 ? " file" : " files") << "\n";
  }
  if (unreadable) return 2;
  return diags.empty() ? 0 : 1;
}

void AddValidateCommand(CLI::App& app, int* exit_code) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("validate", "Check spec files offline (every kind, every field)");
  sub->add_option("-f,--file", *files, "A YAML file with one or more documents; '-' reads stdin; repeatable")
      ->required()
      ->type_name("FILE");
  sub->footer(kFooter);
  sub->callback([files, exit_code] { *exit_code = RunValidate(*files, std::cin, std::cout, std::cerr); });
}

}  // namespace abacus::cli
