#include "server/logs_api.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "server/control_plane.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/http_server.h"
#include "server/task_logs.h"
#include "server/read_views_json.h"
#include "server/route_table.h"
#include "workload/lifecycle.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

int64_t FileSize(const std::filesystem::path& file) {
  std::error_code ec;
  auto n = std::filesystem::file_size(file, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

// The bytes of `file` from `from` to its end (at most `max`).
std::string ReadFrom(const std::filesystem::path& file, int64_t from, int64_t max) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (from >= size) return "";
  const int64_t n = std::min(size - from, max);
  std::string out(static_cast<size_t>(n), '\0');
  in.seekg(from);
  in.read(out.data(), n);
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

// True when task `ref` of `view` (GET /workloads/{W}) runs no more: the workload finished, a
// later attempt or run replaced it, or its slot exited or was lost.
bool TaskEnded(const json& view, const TaskRef& ref) {
  auto state = ParseWorkloadState(view.value("state", ""));
  if (!state.ok() || IsTerminal(*state)) return true;
  if (ref.attempt != view.value("requeues", 0) + 1) return true;
  for (const json& p : view.value("placements", json::array())) {
    if (p.value("group", -1) != ref.group || p.value("replica", -1) != ref.replica) continue;
    if (p.value("run", 0) != ref.run) return true;
    const std::string phase = p.value("phase", "");
    return phase == "Exited" || phase == "Lost";
  }
  return true;  // its slot is placed no more
}

}  // namespace

void AddTaskRoutes(RouteTable& t, const ControlPlane& cp) {
  t.Get(R"(/api/v1/workloads/([^/]+)/tasks)", OnWorkload(govern::Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    auto found = cp.GetWorkload(RequestWorkloadId(req.matches[1]));
    if (!found.ok()) return SendStatus(res, found.status());
    const json view = WorkloadViewJson(*found);
    const std::string id = view.value("id", "");
    // Every task file of this workload: DATA/logs/<task id>.<stream>.
    std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, json> tasks;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(cp.data_dir() + "/logs", ec)) {
      const std::string file = entry.path().filename().string();
      if (file.compare(0, id.size() + 1, id + ".") != 0) continue;
      const size_t dot = file.rfind('.');
      const std::string stream = file.substr(dot + 1);
      if (stream != "stdout" && stream != "stderr") continue;
      auto ref = ParseTaskId(file.substr(0, dot));
      if (!ref.ok() || ref->workload_id != id) continue;
      json& t = tasks[{ref->group, ref->replica, ref->attempt, ref->run}];
      t["taskId"] = FormatTaskId(*ref);
      t["group"] = ref->group;
      t["replica"] = ref->replica;
      t["attempt"] = ref->attempt;
      t["run"] = ref->run;
      t[stream + "Bytes"] = FileSize(entry.path());
    }
    const int32_t attempt = view.value("requeues", 0) + 1;
    json items = json::array();
    for (auto& [key, t] : tasks) {
      for (const json& p : view.value("placements", json::array())) {
        if (p.value("group", -1) == t["group"] && p.value("replica", -1) == t["replica"] && t["attempt"] == attempt &&
            p.value("run", 0) == t["run"]) {
          t["current"] = true;
          for (const char* k : {"node", "phase", "exitCode", "index"}) {
            if (p.contains(k)) t[k] = p[k];
          }
        }
      }
      items.push_back(std::move(t));
    }
    SendJson(res, 200, {{"workload", id}, {"attempt", attempt}, {"items", std::move(items)}});
  });
}

bool IsLogFollow(const httplib::Request& req) {
  return req.has_param("follow") && (req.get_param_value("follow") == "1" || req.get_param_value("follow") == "true");
}

void ServeLogFollow(const ControlPlane& cp, const std::string& workload_id, const httplib::Request& req,
                    httplib::Response& res) {
  const std::unique_ptr<ChangeFeed::Place> place = TakeLongPollPlace(cp, res);
  if (place == nullptr) return;  // 429 sent
  const std::string stream = req.has_param("stream") ? req.get_param_value("stream") : "stdout";
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Result<int64_t> given_offset = IntParam(req, "offset", -1, 0, kMax);  // -1: not given (from the tail)
  if (!given_offset.ok()) return SendStatus(res, given_offset.status());
  Result<int64_t> given_tail = IntParam(req, "tail", 1 << 20, 0, kMax);
  if (!given_tail.ok()) return SendStatus(res, given_tail.status());
  Result<int64_t> given_timeout = IntParam(req, "timeoutSeconds", 30, 0, 300);
  if (!given_timeout.ok()) return SendStatus(res, given_timeout.status());
  const int64_t offset = *given_offset, tail = *given_tail, timeout = *given_timeout;
  // The task as GET …/logs resolves it (a task id of this workload, GROUP.REPLICA or the first).
  // Before any output, a follow waits for the first (or for the workload to end).
  const auto deadline = CallerDeadline(cp, steady_clock::now() + std::chrono::seconds(timeout));
  ChangeFeed& feed = cp.feed();
  const std::string task = req.has_param("task") ? req.get_param_value("task") : "";
  auto resolved = cp.Logs(workload_id, task, stream, 0);
  while (!resolved.ok() && resolved.status().code() == StatusCode::kNotFound &&
         resolved.status().message().rfind("no logs", 0) == 0) {
    const uint64_t version = feed.version();
    auto view = cp.GetWorkload(workload_id);
    auto state = view.ok() ? Result<WorkloadState>(view->record.state) : Result<WorkloadState>(view.status());
    if (!state.ok() || IsTerminal(*state)) break;  // it ended without output: the 404 says so
    if (steady_clock::now() >= deadline || !feed.WaitPast(version, deadline)) {
      return SendJson(res, 200, {{"workload", workload_id}, {"taskId", ""}, {"stream", stream}, {"content", ""},
                               {"offset", 0}, {"size", 0}, {"done", false}});
    }
    if (!CallerStillStands(cp, req, res)) return;
    resolved = cp.Logs(workload_id, task, stream, 0);
  }
  if (!resolved.ok()) return SendStatus(res, resolved.status());
  const std::string task_id = resolved->task_id;
  auto ref = ParseTaskId(task_id);
  if (!ref.ok()) return SendStatus(res, ref.status());
  auto file = TaskLogPath(cp.data_dir(), *ref, stream);
  if (!file.ok()) return SendStatus(res, file.status());
  constexpr int64_t kMaxAnswer = 1 << 20;
  while (true) {
    const uint64_t version = feed.version();
    const int64_t size = FileSize(*file);
    const int64_t from = offset < 0 ? std::max<int64_t>(0, size - tail) : offset;
    auto view = cp.GetWorkload(workload_id);
    const bool ended = !view.ok() || TaskEnded(WorkloadViewJson(*view), *ref);
    if (size > from || offset < 0 || ended || steady_clock::now() >= deadline) {
      std::string content = ReadFrom(*file, from, kMaxAnswer);
      const int64_t next = from + static_cast<int64_t>(content.size());
      return SendJson(res, 200,
                    {{"workload", workload_id}, {"taskId", task_id}, {"stream", stream}, {"content", std::move(content)},
                     {"offset", next}, {"size", size}, {"done", ended && next >= size}});
    }
    if (!feed.WaitPast(version, deadline)) {
      // The server stops: the task has not ended, so not `done` (a follower that read done exited
      // 0 while the task ran on — the probe of 2026-12-07); 503, and it follows again once the
      // server is back.
      return SendError(res, 503, "unavailable", "the server is shutting down; the task " + task_id +
                                                    " has not ended: follow again from offset " + std::to_string(from));
    }
    if (!CallerStillStands(cp, req, res)) return;
  }
}

}  // namespace abacus::server
