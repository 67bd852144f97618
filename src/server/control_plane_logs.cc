// ControlPlane: task logs, appended by agents (AgentLogs) and read by clients (Logs).
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>

#include "common/json_fields.h"
#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/evaluation_archive.h"
#include "server/node_history.h"
#include "server/task_ids.h"
#include "server/task_logs.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// Decodes standard base64 (with padding); InvalidArgument when malformed.
Result<std::string> DecodeBase64(const std::string& in) {
  if (in.size() % 4 != 0) return InvalidArgument("dataBase64: length is not a multiple of 4");
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return InvalidArgument("dataBase64: not valid base64");
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- logs

Result<AgentLogsAnswer> ControlPlane::AgentLogs(const std::string& node, const json& body) {
  TouchNode(node);
  if (!body.is_object()) return InvalidArgument("expected a JSON object");
  std::string task_id = body.value("taskId", "");
  std::string stream = body.value("stream", "");
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: expected stdout or stderr");
  ABACUS_ASSIGN_OR_RETURN(TaskRef ref, ParseTaskId(task_id));
  if (!body.contains("offset") || !body["offset"].is_number_integer() || body["offset"].get<int64_t>() < 0) {
    return InvalidArgument("offset: expected a non-negative integer");
  }
  int64_t offset = body["offset"].get<int64_t>();
  {
    // Only a task assigned to this node, of the workload's current attempt, and a run of that
    // unit it ran (a unit's earlier runs on the same node may still ship their last output).
    ReaderLock lock(state_mu_);
    const WorkloadRecord* r = ledger_.FindWorkload(ref.workload_id);
    bool assigned = false;
    if (r != nullptr && ref.attempt == r->attempt()) {
      for (const auto& p : r->placements) {
        assigned |= p.group == ref.group && p.replica == ref.replica && p.node == node && ref.run <= p.run;
      }
    }
    if (!assigned) {
      return PermissionDenied("task " + task_id + " is not assigned to node " + node +
                              ": a node writes only the logs of the tasks it runs, for the attempt it runs");
    }
  }
  // Every field named, none unknown (checked once the node may write this task's log): a
  // misspelt "data" must not answer ok and store nothing.
  ABACUS_RETURN_IF_ERROR(OnlyFields(body, {"node", "taskId", "stream", "offset", "dataBase64"},
                                    R"({"node", "taskId", "stream", "offset", "dataBase64"})"));
  if (!body.contains("dataBase64") || !body["dataBase64"].is_string()) {
    return InvalidArgument("dataBase64: expected the output's bytes in base64 (a string)");
  }
  ABACUS_ASSIGN_OR_RETURN(std::string data, DecodeBase64(body["dataBase64"].get<std::string>()));
  if (data.size() > (1u << 20)) return InvalidArgument("dataBase64: at most 1 MiB per call");
  ABACUS_ASSIGN_OR_RETURN(std::filesystem::path file, TaskLogPath(options_.data_dir, ref, stream));
  const int64_t limit = options_.max_task_log_bytes;
  MutexLock lock(logs_mu_);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  int64_t size = 0;
  if (std::filesystem::exists(file, ec)) size = static_cast<int64_t>(std::filesystem::file_size(file, ec));
  // Past the bound the output is taken and dropped, so that the agent moves on.
  if (limit > 0 && size >= limit) return AgentLogsAnswer{size, true, std::nullopt};
  if (offset > size) {
    return AgentLogsAnswer{size, false,
                           "offset " + std::to_string(offset) + " is past the stored size " + std::to_string(size) +
                               "; resend from " + std::to_string(size)};
  }
  size_t skip = static_cast<size_t>(size - offset);
  bool truncated = false;
  if (skip < data.size()) {
    size_t n = data.size() - skip;
    if (limit > 0 && static_cast<int64_t>(n) > limit - size) {
      n = static_cast<size_t>(limit - size);
      truncated = true;
    }
    std::ofstream out(file, std::ios::binary | std::ios::app);
    out.write(data.data() + skip, static_cast<std::streamsize>(n));
    if (!out) return Unavailable("cannot write the log of task " + task_id);
    size += static_cast<int64_t>(n);
    feed_->Record("tasklog", task_id);  // wakes `abacus logs -f` (logs_api.cc) at the next publish
  }
  return AgentLogsAnswer{size, truncated, std::nullopt};
}

Result<TaskLogView> ControlPlane::Logs(const std::string& id_or_name, const std::string& task,
                                       const std::string& stream, int64_t tail_bytes) const {
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: expected stdout or stderr");
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  // The task is parsed as a task of this workload; the file name is built from its parts only.
  ABACUS_ASSIGN_OR_RETURN(LogTaskQuery query, ParseLogTaskQuery(task, rec->id));
  auto has_output = [&](const TaskRef& ref) {
    std::error_code ec;
    auto out = TaskLogPath(options_.data_dir, ref, "stdout");
    auto err = TaskLogPath(options_.data_dir, ref, "stderr");
    return (out.ok() && std::filesystem::exists(*out, ec)) || (err.ok() && std::filesystem::exists(*err, ec));
  };
  TaskRef ref;
  if (query.exact) {
    ref = *query.exact;
  } else {
    int32_t group = query.group, replica = query.replica;
    if (!query.has_unit && !rec->placements.empty()) {
      group = rec->placements[0].group;
      replica = rec->placements[0].replica;
    }
    // The current run when it left output, else the latest attempt that did.
    bool found = false;
    for (const auto& p : rec->placements) {
      if (p.group != group || p.replica != replica) continue;
      TaskRef current{rec->id, p.group, p.replica, rec->attempt(), p.run};
      if (has_output(current)) {
        ref = current;
        found = true;
      }
    }
    for (int32_t attempt = rec->attempt(); attempt >= 1 && !found; --attempt) {
      TaskRef earlier{rec->id, group, replica, attempt, 0};
      if (has_output(earlier)) {
        ref = earlier;
        found = true;
      }
    }
    if (!found && query.has_unit) {
      // The unit asked for may not exist at all (task=0.5 of a one-replica job): say so, not "yet".
      return NotFound("no logs: workload " + rec->id + " has no task " + std::to_string(group) + "." +
                      std::to_string(replica) + " that wrote output (it is " +
                      std::string(WorkloadStateName(rec->state)) + "; GET /api/v1/workloads/" + rec->id +
                      "/tasks lists its tasks)");
    }
    if (!found) {
      return NotFound("no logs: no task of workload " + rec->id + " has written output yet (it is " +
                      std::string(WorkloadStateName(rec->state)) + ")");
    }
  }
  ABACUS_ASSIGN_OR_RETURN(std::filesystem::path file, TaskLogPath(options_.data_dir, ref, stream));
  std::string content;
  {
    MutexLock lock(logs_mu_);
    std::ifstream in(file, std::ios::binary);
    if (in) {
      in.seekg(0, std::ios::end);
      int64_t size = in.tellg();
      int64_t from = std::max<int64_t>(0, size - tail_bytes);
      in.seekg(from);
      content.resize(static_cast<size_t>(size - from));
      in.read(content.data(), static_cast<std::streamsize>(content.size()));
    }
  }
  return TaskLogView{rec->id, FormatTaskId(ref), stream, std::move(content)};
}

}  // namespace abacus::server
