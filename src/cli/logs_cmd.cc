// `abacus logs`: a task's output as its agent shipped it — one task, every task (--all-tasks,
// each line prefixed by its task), the previous attempt (--previous), the last N lines (--tail),
// followed while the task runs (-f). docs/cli.md "abacus logs"; routes in server/logs_api.h.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/client.h"
#include "cli/number_flags.h"
#include "cli/verbs.h"
#include "cli/watch.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct LogsArgs {
  std::string server, token, ca_cert, workload, task, stream = "stdout";
  int64_t tail_lines = -1;         // --tail: the last N lines (-1: all)
  int64_t limit_bytes = 1 << 20;   // --limit-bytes: at most the last N bytes (the old --tail)
  bool follow = false, all_tasks = false, previous = false;
};

// The last `n` lines of `text` (n < 0: all of it).
std::string LastLines(const std::string& text, int64_t n) {
  if (n < 0) return text;
  if (n == 0) return "";
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // a final newline ends the last line
  size_t pos = end;
  for (int64_t seen = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++seen == n) break;
  }
  return text.substr(pos);
}

// `text` with "[task] " before every line.
std::string Prefixed(const std::string& text, const std::string& task) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out += "[" + task + "] " + text.substr(start, end - start);
    start = end;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

int Fail(const ApiResponse& r) {
  std::cerr << r.ErrorText() << "\n";
  return r.ExitCode();
}

std::string LogsPath(const LogsArgs& a, const std::string& task) {
  std::string path = "/api/v1/workloads/" + UrlEncode(a.workload) + "/logs?stream=" + UrlEncode(a.stream) +
                     "&tail=" + std::to_string(a.limit_bytes);
  if (!task.empty()) path += "&task=" + UrlEncode(task);
  return path;
}

// The task ids `--previous` / `--all-tasks` name, from GET …/tasks; empty with the error printed.
std::optional<std::vector<std::string>> SelectTasks(ApiClient& api, const LogsArgs& a, int* code) {
  ApiResponse r = api.Get("/api/v1/workloads/" + UrlEncode(a.workload) + "/tasks");
  if (!r.ok()) {
    *code = Fail(r);
    return std::nullopt;
  }
  const json items = r.body.value("items", json::array());
  const int current = r.body.value("attempt", 1);
  // The slot asked for: --task GROUP.REPLICA or a task id; else the first slot.
  std::optional<std::pair<int, int>> slot;
  if (!a.task.empty()) {
    for (const json& t : items) {
      if (t.value("taskId", "") == a.task) slot = {t.value("group", 0), t.value("replica", 0)};
    }
    int g = 0, rep = 0;
    char dot = 0;
    std::istringstream in(a.task);
    if (!slot && (in >> g >> dot >> rep) && dot == '.' && in.eof()) slot = {g, rep};
    if (!slot) {
      std::cerr << "error: --task " << a.task << ": no task of " << a.workload
                << " by that id or GROUP.REPLICA has written output (abacus logs " << a.workload
                << " --all-tasks lists them)\n";
      *code = kExitRefused;
      return std::nullopt;
    }
  }
  // The attempt: the current one, or with --previous the latest earlier one that wrote output.
  int attempt = 0;
  for (const json& t : items) {
    const int at = t.value("attempt", 1);
    if (slot && (t.value("group", 0) != slot->first || t.value("replica", 0) != slot->second)) continue;
    if (a.previous ? at < current : at <= current) attempt = std::max(attempt, at);
  }
  if (attempt == 0) {
    std::cerr << "error: " << (a.previous ? "no earlier attempt of " + a.workload + " wrote output (it is on attempt " +
                                               std::to_string(current) + ")"
                                         : "no task of " + a.workload + " has written output yet")
              << "\n";
    *code = kExitRefused;
    return std::nullopt;
  }
  std::vector<std::string> ids;
  for (const json& t : items) {
    if (t.value("attempt", 1) != attempt) continue;
    if (slot && (t.value("group", 0) != slot->first || t.value("replica", 0) != slot->second)) continue;
    ids.push_back(t.value("taskId", ""));
    if (!a.all_tasks && !slot) {
      slot = {t.value("group", 0), t.value("replica", 0)};  // the first slot only
    }
  }
  if (!a.all_tasks && ids.size() > 1) ids.erase(ids.begin(), ids.end() - 1);  // the slot's last run
  return ids;
}

int Follow(ApiClient& api, const LogsArgs& a, const std::string& task) {
  EndCleanlyOnInterrupt();
  // Before the task's first output the server waits for it (an empty taskId: ask again).
  ApiResponse r;
  do {
    r = api.Get(LogsPath(a, task) + "&follow=1&timeoutSeconds=25");
    if (!r.ok()) return Fail(r);
  } while (r.body.value("taskId", "").empty() && !r.body.value("done", false));
  std::cout << LastLines(r.body.value("content", ""), a.tail_lines) << std::flush;
  const std::string task_id = r.body.value("taskId", "");
  while (!r.body.value("done", false)) {
    const int64_t offset = r.body.value("offset", int64_t{0});
    r = api.Get("/api/v1/workloads/" + UrlEncode(a.workload) + "/logs?follow=1&timeoutSeconds=25&stream=" +
                UrlEncode(a.stream) + "&task=" + UrlEncode(task_id) + "&offset=" + std::to_string(offset));
    if (!r.ok()) return Fail(r);
    std::cout << r.body.value("content", "") << std::flush;
  }
  return kExitOk;
}

int RunLogs(const LogsArgs& a) {
  if (a.follow && a.all_tasks) {
    std::cerr << "error: -f follows one task; pick it with --task (abacus logs " << a.workload
              << " --all-tasks lists them without -f)\n";
    return kExitUsage;
  }
  ApiClient api(ResolveClientConfig(a.server, a.token, a.ca_cert));
  std::vector<std::string> tasks = {a.task};
  if (a.all_tasks || a.previous) {
    int code = kExitOk;
    auto selected = SelectTasks(api, a, &code);
    if (!selected) return code;
    tasks = *selected;
  }
  if (a.follow) return Follow(api, a, tasks.front());
  for (const std::string& task : tasks) {
    ApiResponse r = api.Get(LogsPath(a, task));
    if (!r.ok()) return Fail(r);
    const std::string content = LastLines(r.body.value("content", ""), a.tail_lines);
    std::cout << (a.all_tasks ? Prefixed(content, r.body.value("taskId", task)) : content);
  }
  return kExitOk;
}

}  // namespace

void AddLogsCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<LogsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "logs",
      "Print the output of a workload's task as its agent shipped it (every second while it runs).\n"
      "Examples: abacus logs llama-ft\n"
      "          abacus logs llama-ft -f                      # follow until the task ends\n"
      "          abacus logs llama-ft --tail 20 --stream stderr\n"
      "          abacus logs sweep --all-tasks                # every task, lines prefixed [TASK]\n"
      "          abacus logs llama-ft --previous --task 0.1   # the attempt before the current one\n"
      "          abacus logs llama-ft --task wl-123.0.1.2     # one task by id (every array task has one)");
  cmd->add_option("WORKLOAD", a->workload, "id or name")->required();
  cmd->add_option("--task", a->task,
                  "task id, or GROUP.REPLICA (default: the first task of the latest attempt; ids: --all-tasks)");
  cmd->add_option("--stream", a->stream, "stdout or stderr")->check(CLI::IsMember({"stdout", "stderr"}))->capture_default_str();
  cmd->add_option("--tail", a->tail_lines, "print the last N lines (default: all that is fetched)")
      ->check(AtLeast(0));
  cmd->add_option("--limit-bytes", a->limit_bytes, "fetch at most the last N bytes of each task (what --tail meant before it counted lines)")
      ->check(AtLeast(1))
      ->capture_default_str();
  cmd->add_flag("-f,--follow", a->follow, "keep printing new output until the task ends (Ctrl-C stops)");
  cmd->add_flag("--all-tasks", a->all_tasks, "every task of the attempt (each array task, each replica), lines prefixed [TASK]");
  cmd->add_flag("-p,--previous", a->previous, "the previous attempt's output (after a requeue or retry)");
  cmd->add_option("--server", a->server, "server URL (else ABACUS_SERVER, else the config file)");
  cmd->add_option("--token", a->token, "bearer token (else ABACUS_TOKEN, else the config file)");
  cmd->add_option("--ca-cert", a->ca_cert, "CA certificate (PEM) for an https:// server (else ABACUS_CA_CERT, else the config file's caCert)");
  cmd->callback([a, exit_code] { *exit_code = RunLogs(*a); });
}

}  // namespace abacus::cli
