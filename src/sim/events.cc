#include "sim/events.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "common/check.h"
#include "sim/scenario.h"
#include "workload/documents.h"
#include "workload/workload.h"

namespace abacus::sim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMicrosPerSecond = 1'000'000;

Time At(int64_t s) { return ScenarioEpoch() + Duration(s * kMicrosPerSecond); }

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
  w->priority = pc->value;
  w->preemptible = pc->preemptible;
  w->can_preempt = pc->can_preempt;
  w->borrowed_only = pc->borrowed_only;
  w->aging_step = pc->aging_step;
  w->priority_ceiling = pc->ceiling.value_or(0);
  w->max_queue_wait = pc->max_queue_wait.value_or(Duration(0));
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

void SortJobs(EventInput* in) {
  std::stable_sort(in->jobs.begin(), in->jobs.end(),
                   [](const EventJob& a, const EventJob& b) { return a.submit_s < b.submit_s; });
}

DurationStats Stats(std::vector<double> v) {
  DurationStats s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  auto pct = [&](double p) {
    // Nearest rank.
    size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(k, 1, v.size()) - 1];
  };
  s.p50 = pct(0.50);
  s.p95 = pct(0.95);
  s.p99 = pct(0.99);
  s.max = v.back();
  return s;
}

}  // namespace

// ------------------------------------------------------------------ input

Status TenancyToSnapshot(const TenancyConfig& config, sched::Snapshot* snapshot) {
  auto key = [](const QuotaResource& r) -> ResourceKey {
    switch (r.kind) {
      case QuotaResource::Kind::kCpu: return ResourceKey::Cpu();
      case QuotaResource::Kind::kMemory: return ResourceKey::Memory();
      case QuotaResource::Kind::kDevices: return ResourceKey::Devices(r.flavor.Intern());
    }
    return ResourceKey::Cpu();
  };
  auto quota = [&](const Quota& q) {
    sched::QuotaInfo qi;
    qi.resource = key(q.resource);
    qi.nominal = LedgerAmount(q.resource, q.nominal);
    if (q.borrowing_limit) qi.borrowing_limit = LedgerAmount(q.resource, *q.borrowing_limit);
    if (q.lending_limit) qi.lending_limit = LedgerAmount(q.resource, *q.lending_limit);
    return qi;
  };
  std::map<std::string, int32_t> cohort_index;
  for (const Cohort* c : config.cohorts()) {
    cohort_index[c->name] = static_cast<int32_t>(snapshot->cohorts.size());
    sched::CohortInfo ci;
    ci.name = c->name;
    for (const Quota& q : c->quotas) ci.quotas.push_back(quota(q));
    snapshot->cohorts.push_back(std::move(ci));
  }
  for (const Cohort* c : config.cohorts()) {
    if (c->parent.empty()) continue;
    auto it = cohort_index.find(c->parent);
    if (it == cohort_index.end()) return InvalidArgument("cohort " + c->name + ": unknown parent " + c->parent);
    snapshot->cohorts[cohort_index[c->name]].parent = it->second;
  }
  for (const Queue* q : config.queues()) {
    sched::QueueInfo qi;
    qi.name = q->name;
    qi.tenant = q->tenant;
    if (!q->cohort.empty()) {
      auto it = cohort_index.find(q->cohort);
      if (it == cohort_index.end()) return InvalidArgument("queue " + q->name + ": unknown cohort " + q->cohort);
      qi.cohort = it->second;
    }
    qi.weight_milli = q->weight_milli;
    qi.strategy = q->queueing_strategy == QueueingStrategy::kStrictFifo ? sched::QueueingStrategy::kStrictFifo
                                                                         : sched::QueueingStrategy::kBestEffortFifo;
    for (const Quota& quota_entry : q->quotas) qi.quotas.push_back(quota(quota_entry));
    if (const Tenant* t = config.FindTenant(q->tenant)) qi.allowed_pools = t->pools;
    snapshot->queues.push_back(std::move(qi));
  }
  for (const FlavorConfig* f : config.flavors()) snapshot->flavor_weight_milli[f->flavor.Intern()] = f->weight_milli;
  for (const PoolConfig* p : config.pools()) {
    if (!p->tenants.empty()) snapshot->pool_tenants[p->name] = p->tenants;
  }
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

// ------------------------------------------------------------------ simulation

namespace {

enum class EventType : uint8_t { kStopped = 0, kFinish = 1, kArrive = 2 };

struct Event {
  int64_t t;
  EventType type;
  int32_t job;
  int32_t epoch;  // admission count when scheduled: stale events are ignored
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (type != o.type) return type > o.type;
    return job > o.job;
  }
};

struct JobState {
  int32_t slot = -1;          // index in the snapshot's workloads; -1 when not there
  int32_t epoch = 0;
  bool running = false;       // admitted (possibly evicting)
  bool done = false;
  int64_t started_s = 0;      // start of the current run
  std::optional<int64_t> remaining_s;  // run time left
  bool borrowing = false;
  int64_t device_milli = 0;   // accelerator milli held while running
  int64_t cpu_milli = 0;
  int64_t gpu_milli = 0, npu_milli = 0;
};

}  // namespace

EventSimResult RunEventSim(const EventInput& input, const EventSimOptions& options) {
  auto wall0 = std::chrono::steady_clock::now();
  auto last_progress = wall0;
  EventSimResult r;
  sched::Snapshot snap = input.cluster;
  snap.workloads.clear();
  const size_t njobs = input.jobs.size();
  std::vector<JobState> js(njobs);
  std::vector<int32_t> slot_job;  // snapshot slot → job
  r.jobs.resize(njobs);
  for (size_t j = 0; j < njobs; ++j) {
    r.jobs[j].id = input.jobs[j].workload.id;
  }

  // Capacity per kind.
  std::vector<DeviceKind> flavor_kind;
  auto kind_of = [&](FlavorId f) { return Flavor::FromId(f).kind(); };
  for (const auto& n : snap.nodes) {
    r.cpu_milli += n.cpu_milli;
    for (const auto& d : n.devices) {
      if (!d.healthy) continue;
      (kind_of(d.flavor) == DeviceKind::kNpu ? r.npu_milli : r.gpu_milli) += 1000;
    }
  }

  // Per-queue accumulators.
  const size_t nq = snap.queues.size();
  std::vector<std::vector<double>> queueing(nq), completion(nq);
  std::vector<GroupReport> qrep(nq);
  for (size_t q = 0; q < nq; ++q) {
    qrep[q].name = snap.queues[q].name;
    qrep[q].tenant = snap.queues[q].tenant;
  }

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  for (size_t j = 0; j < njobs; ++j) events.push({input.jobs[j].submit_s, EventType::kArrive, static_cast<int32_t>(j), 0});

  int64_t used_cpu = 0, used_gpu = 0, used_npu = 0;
  int32_t pending = 0, running = 0;
  std::vector<UtilizationSample> samples;
  double gpu_area = 0, npu_area = 0, cpu_area = 0;
  int64_t last_t = events.empty() ? 0 : events.top().t;
  r.start_s = last_t;
  std::vector<std::optional<sched::PendingReason>> last_reason(njobs);

  auto remove_slot = [&](int32_t j) {
    int32_t s = js[j].slot;
    int32_t last = static_cast<int32_t>(snap.workloads.size()) - 1;
    if (s != last) {
      snap.workloads[s] = std::move(snap.workloads[last]);
      slot_job[s] = slot_job[last];
      js[slot_job[s]].slot = s;
    }
    snap.workloads.pop_back();
    slot_job.pop_back();
    js[j].slot = -1;
  };
  auto release = [&](int32_t j, int64_t t) {
    JobState& st = js[j];
    used_cpu -= st.cpu_milli;
    used_gpu -= st.gpu_milli;
    used_npu -= st.npu_milli;
    const double hours = static_cast<double>(t - st.started_s) / 3600.0;
    const int32_t q = input.jobs[j].workload.queue;
    qrep[q].device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
    if (st.borrowing) qrep[q].borrowed_device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
    st.running = false;
    --running;
  };

  while (!events.empty()) {
    const int64_t t = events.top().t;
    // Time-weighted utilization over [last_t, t).
    gpu_area += static_cast<double>(used_gpu) * static_cast<double>(t - last_t);
    npu_area += static_cast<double>(used_npu) * static_cast<double>(t - last_t);
    cpu_area += static_cast<double>(used_cpu) * static_cast<double>(t - last_t);
    last_t = t;
    // 1. Apply every event at t.
    while (!events.empty() && events.top().t == t) {
      Event e = events.top();
      events.pop();
      JobState& st = js[e.job];
      const EventJob& job = input.jobs[e.job];
      switch (e.type) {
        case EventType::kArrive: {
          st.slot = static_cast<int32_t>(snap.workloads.size());
          snap.workloads.push_back(job.workload);
          snap.workloads.back().submitted = At(job.submit_s);
          slot_job.push_back(e.job);
          st.remaining_s = job.duration_s;
          ++pending;
          ++qrep[job.workload.queue].submitted;
          break;
        }
        case EventType::kFinish: {
          if (e.epoch != st.epoch || !st.running || st.done) break;
          release(e.job, t);
          remove_slot(e.job);
          st.done = true;
          r.jobs[e.job].finish_s = t;
          completion[job.workload.queue].push_back(static_cast<double>(t - job.submit_s));
          ++qrep[job.workload.queue].completed;
          break;
        }
        case EventType::kStopped: {
          if (e.epoch != st.epoch || !st.running || st.done) break;
          // The victim checkpointed and stopped: requeue it with the run time it had left.
          release(e.job, t);
          if (st.remaining_s) st.remaining_s = std::max<int64_t>(0, *st.remaining_s - (t - st.started_s));
          sched::WorkloadInfo& w = snap.workloads[st.slot];
          w.admitted = false;
          w.evicting = false;
          w.placements.clear();
          w.group_flavors.clear();
          ++pending;
          break;
        }
      }
    }
    // 2. One scheduling cycle over the snapshot, as the server runs it.
    snap.now = At(t);
    sched::SchedulerConfig cfg = options.config;
    cfg.detailed_reasons = false;
    sched::CycleResult cr = sched::Schedule(snap, cfg);
    ++r.cycles;
    // 3. Apply its decisions.
    for (const sched::Admission& a : cr.admissions) {
      const int32_t j = slot_job[a.workload];
      JobState& st = js[j];
      sched::WorkloadInfo& w = snap.workloads[a.workload];
      w.admitted = true;
      w.evicting = false;
      w.group_flavors = a.group_flavors;
      w.placements = a.placements;
      w.admitted_at = snap.now;
      ++st.epoch;
      st.running = true;
      st.started_s = t;
      st.borrowing = a.borrowing;
      st.cpu_milli = st.gpu_milli = st.npu_milli = st.device_milli = 0;
      for (const auto& p : a.placements) {
        st.cpu_milli += p.cpu_milli;
        for (const auto& d : p.devices) {
          FlavorId f = snap.nodes[p.node].devices[d.device].flavor;
          (kind_of(f) == DeviceKind::kNpu ? st.npu_milli : st.gpu_milli) += d.milli;
          st.device_milli += d.milli;
        }
      }
      used_cpu += st.cpu_milli;
      used_gpu += st.gpu_milli;
      used_npu += st.npu_milli;
      --pending;
      ++running;
      last_reason[j].reset();
      const int32_t q = w.queue;
      if (a.borrowing) ++qrep[q].borrowing_admissions;
      JobOutcome& out = r.jobs[j];
      if (!out.first_start_s) {
        out.first_start_s = t;
        queueing[q].push_back(static_cast<double>(t - input.jobs[j].submit_s));
        for (const auto& p : a.placements) out.first_nodes.push_back(snap.nodes[p.node].name);
      }
      if (st.remaining_s) events.push({t + *st.remaining_s, EventType::kFinish, j, st.epoch});
    }
    for (const sched::Preemption& p : cr.preemptions) {
      const int32_t j = slot_job[p.victim];
      sched::WorkloadInfo& w = snap.workloads[p.victim];
      if (w.evicting) continue;
      w.evicting = true;
      ++r.jobs[j].preemptions;
      ++qrep[w.queue].preempted;
      if (p.reason == sched::PreemptionReason::kReclaimQuota) ++qrep[w.queue].reclaimed;
      events.push({t + std::max<int64_t>(0, p.grace_seconds), EventType::kStopped, j, js[j].epoch});
    }
    for (const sched::PendingReason& pr : cr.pending) {
      (void)pr;  // reasons are recomputed in detail at the end
    }
    samples.push_back({t, r.gpu_milli ? 100.0 * static_cast<double>(used_gpu) / static_cast<double>(r.gpu_milli) : 0.0,
                       r.npu_milli ? 100.0 * static_cast<double>(used_npu) / static_cast<double>(r.npu_milli) : 0.0,
                       r.cpu_milli ? 100.0 * static_cast<double>(used_cpu) / static_cast<double>(r.cpu_milli) : 0.0,
                       pending, running});
    if (options.progress) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress > std::chrono::milliseconds(500)) {
        last_progress = now;
        options.progress("sim events: t=" + std::to_string(t) + "s, " + std::to_string(r.cycles) + " cycles, " +
                         std::to_string(running) + " running, " + std::to_string(pending) + " pending");
      }
    }
  }
  r.end_s = last_t;

  // 4. Whatever is still pending gets its reason from one detailed cycle over the final state.
  if (pending > 0) {
    sched::SchedulerConfig cfg = options.config;
    cfg.detailed_reasons = true;
    sched::CycleResult cr = sched::Schedule(snap, cfg);
    for (const sched::PendingReason& pr : cr.pending) {
      for (size_t s = 0; s < snap.workloads.size(); ++s) {
        if (snap.workloads[s].id != pr.workload_id) continue;
        r.unplaced.push_back({pr.workload_id, snap.queues[snap.workloads[s].queue].name,
                              std::string(sched::PendingCodeName(pr.code)), sched::DescribePending(pr)});
        break;
      }
    }
    // Workloads the final cycle would admit (nothing happened to trigger it) still count as pending.
    for (const sched::Admission& a : cr.admissions) {
      const auto& w = snap.workloads[a.workload];
      r.unplaced.push_back({w.id, snap.queues[w.queue].name, "placeable",
                            "placeable now, but no event triggered a cycle after it became so (priority aging)"});
    }
  }
  for (size_t j = 0; j < njobs; ++j) {
    const int32_t q = input.jobs[j].workload.queue;
    if (js[j].done) continue;
    if (js[j].running) {
      ++qrep[q].running_at_end;
      // Count device-hours up to the end for workloads that never finish.
      JobState& st = js[j];
      const double hours = static_cast<double>(r.end_s - st.started_s) / 3600.0;
      qrep[q].device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
      if (st.borrowing) qrep[q].borrowed_device_hours += static_cast<double>(st.device_milli) / 1000.0 * hours;
    } else if (js[j].slot >= 0) {
      ++qrep[q].pending_at_end;
    }
  }

  // 5. Summaries.
  const double span = static_cast<double>(std::max<int64_t>(1, r.end_s - r.start_s));
  r.mean_gpu_pct = r.gpu_milli ? 100.0 * gpu_area / span / static_cast<double>(r.gpu_milli) : 0;
  r.mean_npu_pct = r.npu_milli ? 100.0 * npu_area / span / static_cast<double>(r.npu_milli) : 0;
  r.mean_cpu_pct = r.cpu_milli ? 100.0 * cpu_area / span / static_cast<double>(r.cpu_milli) : 0;
  std::map<std::string, GroupReport> tenants;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> tenant_durations;
  std::vector<double> all_q, all_c;
  r.total.name = "total";
  auto add = [](GroupReport& to, const GroupReport& from) {
    to.submitted += from.submitted;
    to.completed += from.completed;
    to.running_at_end += from.running_at_end;
    to.pending_at_end += from.pending_at_end;
    to.preempted += from.preempted;
    to.reclaimed += from.reclaimed;
    to.borrowing_admissions += from.borrowing_admissions;
    to.borrowed_device_hours += from.borrowed_device_hours;
    to.device_hours += from.device_hours;
  };
  for (size_t q = 0; q < nq; ++q) {
    qrep[q].queueing = Stats(queueing[q]);
    qrep[q].completion = Stats(completion[q]);
    GroupReport& t = tenants[qrep[q].tenant];
    t.name = qrep[q].tenant;
    add(t, qrep[q]);
    add(r.total, qrep[q]);
    auto& td = tenant_durations[qrep[q].tenant];
    td.first.insert(td.first.end(), queueing[q].begin(), queueing[q].end());
    td.second.insert(td.second.end(), completion[q].begin(), completion[q].end());
    all_q.insert(all_q.end(), queueing[q].begin(), queueing[q].end());
    all_c.insert(all_c.end(), completion[q].begin(), completion[q].end());
  }
  for (auto& [name, t] : tenants) {
    t.queueing = Stats(tenant_durations[name].first);
    t.completion = Stats(tenant_durations[name].second);
    r.tenants.push_back(t);
  }
  r.total.queueing = Stats(all_q);
  r.total.completion = Stats(all_c);
  r.queues = std::move(qrep);
  // Thin the timeline: keep every k-th sample and the last.
  if (options.timeline_points > 0 && static_cast<int64_t>(samples.size()) > options.timeline_points) {
    const size_t k = (samples.size() + static_cast<size_t>(options.timeline_points) - 1) / static_cast<size_t>(options.timeline_points);
    for (size_t i = 0; i < samples.size(); i += k) r.timeline.push_back(samples[i]);
    if (r.timeline.back().t != samples.back().t) r.timeline.push_back(samples.back());
  } else {
    r.timeline = std::move(samples);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace abacus::sim
