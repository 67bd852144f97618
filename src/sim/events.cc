#include "sim/events.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/extended_resource.h"
#include "sched/placement_rules.h"
#include "sched/tenancy_snapshot.h"
#include "sim/scenario.h"
#include "workload/documents.h"
#include "workload/workload.h"

namespace abacus::sim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

Result<std::string> ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

WorkloadKind ToWorkloadKind(GenericWorkloadKind k) {
  switch (k) {
    case GenericWorkloadKind::kTrainingJob: return WorkloadKind::kTrainingJob;
    case GenericWorkloadKind::kInferenceService: return WorkloadKind::kInferenceService;
    case GenericWorkloadKind::kExperiment: return WorkloadKind::kExperiment;
    case GenericWorkloadKind::kEvaluation: return WorkloadKind::kEvaluation;
    case GenericWorkloadKind::kBatchJob: return WorkloadKind::kBatchJob;
  }
  return WorkloadKind::kBatchJob;
}

// Applies priority class `name` (from `config`, else the defaults) to `w`.
Status ApplyPriorityClass(const std::string& name, const TenancyConfig* config, sched::WorkloadInfo* w) {
  const PriorityClass* pc = config ? config->FindPriorityClass(name) : FindDefaultPriorityClass(name);
  if (pc == nullptr) return InvalidArgument("unknown priority class '" + name + "'");
  sched::ApplyPriorityClass(*pc, w);  // the rule the server's ledger applies
  return Status::OK();
}

// Every flavor the nodes carry, in first-appearance order.
std::vector<FlavorId> ClusterFlavors(const std::vector<sched::NodeInfo>& nodes) {
  std::vector<FlavorId> out;
  for (const auto& n : nodes) {
    for (const auto& d : n.devices) {
      if (std::find(out.begin(), out.end(), d.flavor) == out.end()) out.push_back(d.flavor);
    }
  }
  return out;
}

// Without a config: one queue per trace queue whose quota is the whole cluster, so quotas never
// bind and only placement decides.
int32_t UnlimitedQueue(const std::string& name, const std::string& tenant, sched::Snapshot* s) {
  for (size_t i = 0; i < s->queues.size(); ++i) {
    if (s->queues[i].name == name) return static_cast<int32_t>(i);
  }
  sched::QueueInfo q;
  q.name = name;
  q.tenant = tenant;
  int64_t cpu = 0, mem = 0;
  std::map<FlavorId, int64_t> devices;
  for (const auto& n : s->nodes) {
    cpu += n.cpu_milli;
    mem += n.memory_bytes;
    for (const auto& d : n.devices) devices[d.flavor] += 1000;
  }
  q.quotas.push_back({ResourceKey::Cpu(), cpu, std::nullopt, std::nullopt});
  q.quotas.push_back({ResourceKey::Memory(), mem, std::nullopt, std::nullopt});
  for (FlavorId f : ClusterFlavors(s->nodes)) q.quotas.push_back({ResourceKey::Devices(f), devices[f], std::nullopt, std::nullopt});
  s->queues.push_back(std::move(q));
  return static_cast<int32_t>(s->queues.size() - 1);
}

int32_t FindQueue(const sched::Snapshot& s, const std::string& name) {
  for (size_t i = 0; i < s.queues.size(); ++i) {
    if (s.queues[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

// Extended resources by name (validated by the trace reader) as the scheduler's interned amounts.
std::vector<sched::ExtendedAmount> ExtendedAmounts(const std::map<std::string, int64_t>& by_name) {
  std::vector<sched::ExtendedAmount> out;
  for (const auto& [name, amount] : by_name) {
    if (auto x = ExtendedResource::Parse(name); x.ok()) sched::SetExtended(&out, x->Intern(), amount);
  }
  return out;
}

void SortJobs(EventInput* in) {
  std::stable_sort(in->jobs.begin(), in->jobs.end(),
                   [](const EventJob& a, const EventJob& b) { return a.submit_s < b.submit_s; });
}

}  // namespace

// ------------------------------------------------------------------ input

Status TenancyToSnapshot(const TenancyConfig& config, sched::Snapshot* snapshot) {
  // The server's translation (sched/tenancy_snapshot.h); a simulation refuses what it leaves out.
  std::vector<std::string> problems = sched::AddTenancy(config, snapshot);
  if (!problems.empty()) return InvalidArgument(problems.front());
  return Status::OK();
}

Result<EventInput> BuildEventInput(const GenericTrace& trace, const TenancyConfig* config) {
  EventInput in;
  sched::Snapshot& s = in.cluster;
  for (const GenericTraceNode& gn : trace.nodes) {
    sched::NodeInfo n;
    n.name = gn.name;
    n.cluster = gn.cluster;
    n.pool = gn.pool;
    n.labels = gn.labels;
    n.cpu_milli = gn.cpu.milli();
    n.memory_bytes = gn.memory.CeilUnits();
    for (const GenericDevices& gd : gn.devices) {
      for (int32_t i = 0; i < gd.count; ++i) {
        sched::DeviceInfo d;
        d.index = static_cast<int>(n.devices.size());
        d.flavor = gd.flavor.Intern();
        d.memory_bytes = gd.memory ? gd.memory->CeilUnits() : 0;
        n.devices.push_back(d);
      }
    }
    n.extended = ExtendedAmounts(gn.extended);
    s.nodes.push_back(std::move(n));
  }
  if (config) {
    Status st = TenancyToSnapshot(*config, &s);
    if (!st.ok()) return st;
  }
  const std::vector<FlavorId> flavors = ClusterFlavors(s.nodes);
  for (const GenericTraceWorkload& gw : trace.workloads) {
    EventJob job;
    sched::WorkloadInfo& w = job.workload;
    w.id = gw.name;
    w.name = gw.name;
    if (config) {
      w.queue = FindQueue(s, gw.queue);
      if (w.queue < 0) {
        return InvalidArgument("workload " + gw.name + " (line " + std::to_string(gw.line) + "): queue '" + gw.queue +
                               "' is not in the config");
      }
    } else {
      w.queue = UnlimitedQueue(gw.queue, gw.tenant, &s);
    }
    const WorkloadKind kind = ToWorkloadKind(gw.kind);
    std::string pc = gw.priority_class.empty() ? std::string(DefaultPriorityClassFor(kind)) : gw.priority_class;
    Status st = ApplyPriorityClass(pc, config, &w);
    if (!st.ok()) return st.WithContext("workload " + gw.name);
    w.gang = gw.gang;
    sched::TaskGroupRequest g;
    g.name = "main";
    g.replicas = gw.replicas;
    g.task.cpu_milli = gw.cpu.milli();
    g.task.memory_bytes = gw.memory.CeilUnits();
    if (gw.accelerator) {
      for (FlavorId f : flavors) {
        if (gw.accelerator->Matches(Flavor::FromId(f))) g.task.flavors.push_back(f);
      }
      g.task.flavor_pattern = gw.accelerator->text();
      if (gw.share_milli < 1000) {
        g.task.device_count = 1;
        g.task.share_milli = gw.share_milli;
      } else {
        g.task.device_count = gw.accelerator_count;
      }
      if (gw.device_memory) g.task.device_memory = gw.device_memory->CeilUnits();
    }
    g.task.extended = ExtendedAmounts(gw.extended);
    PlacementSpec placement;
    placement.max_per_node = gw.max_per_node;
    placement.spread = gw.spread;
    placement.anti_affinity = gw.anti_affinity;
    g.rules = sched::RulesFromSpec(placement, "");  // the server's conversion; counted per workload
    w.groups.push_back(std::move(g));
    job.submit_s = gw.submit_s;
    job.duration_s = gw.duration_s;
    in.jobs.push_back(std::move(job));
  }
  SortJobs(&in);
  return in;
}

Result<EventInput> BuildOpenbEventInput(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                                        const TenancyConfig* config, const std::string& queue) {
  EventInput in;
  sched::Snapshot& s = in.cluster;
  std::map<std::string, FlavorId> model_flavor;
  for (const TraceNode& tn : nodes) {
    sched::NodeInfo n;
    n.name = tn.name;
    n.cpu_milli = tn.cpu_milli;
    n.memory_bytes = tn.memory_mib * kMiB;
    if (tn.gpus > 0) {
      auto f = OpenbModelFlavor(tn.model);
      if (!f.ok()) return f.status().WithContext("node " + tn.name);
      FlavorId id = f->Intern();
      model_flavor[tn.model] = id;
      for (int32_t i = 0; i < tn.gpus; ++i) {
        sched::DeviceInfo d;
        d.index = i;
        d.flavor = id;
        n.devices.push_back(d);
      }
    }
    s.nodes.push_back(std::move(n));
  }
  int32_t q = -1;
  if (config) {
    Status st = TenancyToSnapshot(*config, &s);
    if (!st.ok()) return st;
    q = FindQueue(s, queue);
    if (q < 0) return InvalidArgument("queue '" + queue + "' (for the openb pods) is not in the config");
  } else {
    q = UnlimitedQueue(queue, "default", &s);
  }
  const std::vector<FlavorId> flavors = ClusterFlavors(s.nodes);
  int64_t no_time = 0;
  for (const TracePod& p : pods) {
    if (!p.creation_time) {
      ++no_time;
      continue;
    }
    EventJob job;
    sched::WorkloadInfo& w = job.workload;
    w.id = p.name;
    w.name = p.name;
    w.queue = q;
    Status st = ApplyPriorityClass(std::string(OpenbPriorityClass(p.qos)), config, &w);
    if (!st.ok()) return st.WithContext("pod " + p.name);
    sched::TaskGroupRequest g;
    g.name = "pod";
    g.task.cpu_milli = p.cpu_milli;
    g.task.memory_bytes = p.memory_mib * kMiB;
    if (p.num_gpu > 0 && p.gpu_milli > 0) {
      if (p.gpu_spec.empty()) {
        g.task.flavors = flavors;
        g.task.flavor_pattern = "gpu/*";
      } else {
        for (const std::string& m : p.gpu_spec) {
          auto it = model_flavor.find(m);
          if (it != model_flavor.end()) g.task.flavors.push_back(it->second);
          if (!g.task.flavor_pattern.empty()) g.task.flavor_pattern += "|";
          g.task.flavor_pattern += m;
        }
      }
      g.task.device_count = p.num_gpu;
      g.task.share_milli = p.gpu_milli < 1000 ? p.gpu_milli : 0;
    }
    w.groups.push_back(std::move(g));
    job.submit_s = *p.creation_time;
    job.duration_s = p.duration();
    in.jobs.push_back(std::move(job));
  }
  if (no_time > 0) in.warnings.push_back(std::to_string(no_time) + " pod(s) without creation_time left out");
  SortJobs(&in);
  return in;
}

Result<EventInput> LoadEventInput(const EventInputOptions& o) {
  std::optional<TenancyConfig> config;
  if (!o.config.empty()) {
    auto text = ReadText(o.config);
    if (!text.ok()) return text.status();
    ParsedDocuments parsed = ParseDocuments(*text, o.config);
    if (!parsed.diagnostics.empty()) return parsed.diagnostics.ToStatus();
    config.emplace();
    Diagnostics diags;
    AddToTenancyConfig(parsed.documents, *config, diags);
    config->CheckReferences(diags);
    if (!diags.empty()) return diags.ToStatus();
  }
  const TenancyConfig* cfg = config ? &*config : nullptr;
  std::filesystem::path path(o.trace);
  if (path.extension() == ".csv") {
    TraceReadOptions ro;
    ro.skip_bad_rows = o.skip_bad_rows;
    std::string nodes_path = o.nodes.empty() ? (path.parent_path() / "openb_node_list_gpu_node.csv").string() : o.nodes;
    auto nodes = ReadOpenbNodes(nodes_path, ro);
    if (!nodes.ok()) return nodes.status();
    auto pods = ReadOpenbPods(o.trace, ro);
    if (!pods.ok()) return pods.status();
    auto in = BuildOpenbEventInput(nodes->rows, pods->rows, cfg, o.openb_queue);
    if (!in.ok()) return in.status();
    if (nodes->skipped_rows > 0) in->warnings.push_back(nodes_path + ": skipped " + std::to_string(nodes->skipped_rows) + " bad row(s)");
    if (pods->skipped_rows > 0) in->warnings.push_back(o.trace + ": skipped " + std::to_string(pods->skipped_rows) + " bad row(s)");
    return in;
  }
  auto trace = LoadGenericTrace(o.trace);
  if (!trace.ok()) return trace.status();
  return BuildEventInput(*trace, cfg);
}

}  // namespace abacus::sim
