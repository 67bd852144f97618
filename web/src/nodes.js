// The nodes page's model: every node (CPU-only ones too) with what holds it — the holders the
// server names on its devices and the caller's visible workloads placed there — and whether the
// server says work the caller may not see holds part of it (hiddenMilli on a device,
// hiddenCpuMilli / hiddenMemoryBytes on the node: work of another tenant).
import { holders } from './ledger.js';

// Returns Map node -> [{name, id, queue, cpuMilli, memoryBytes, devices}] from a workload list.
export function nodeHolders(workloads) {
  const m = new Map();
  const HOLDING = new Set(['Admitted', 'Running']);
  const GONE = new Set(['Exited', 'Lost']);
  for (const w of workloads || []) {
    if (!HOLDING.has(w.state)) continue;
    for (const p of w.placements || []) {
      if (GONE.has(p.phase)) continue;
      if (!m.has(p.node)) m.set(p.node, new Map());
      const byWl = m.get(p.node);
      const h = byWl.get(w.id) || { name: w.name, id: w.id, queue: w.queue, cpuMilli: 0, memoryBytes: 0, devices: 0 };
      h.cpuMilli += p.cpuMilli || 0;
      h.memoryBytes += p.memoryBytes || 0;
      h.devices += (p.devices || []).reduce((s, d) => s + (d.milli || 0), 0);
      byWl.set(w.id, h);
    }
  }
  return new Map([...m].map(([node, byWl]) => [node, [...byWl.values()]]));
}

// True when the server says part of node `n` is held by work the caller may not see.
export function hiddenWork(n) {
  return (n.hiddenCpuMilli || 0) > 0 || (n.hiddenMemoryBytes || 0) > 0 || (n.devices || []).some((d) => (d.hiddenMilli || 0) > 0);
}

// One row per node, sorted by cluster, pool and name: the node, its holders (the server's device
// holders, then visible workloads placed there without a device), the allocated device milli the
// server reports, and `hidden` as hiddenWork says.
export function nodeRows(nodes, workloads) {
  const held = nodeHolders(workloads);
  const rows = (nodes || []).map((n) => {
    const byId = new Map();
    for (const d of n.devices || []) {
      for (const h of d.holders || []) {
        if (!byId.has(h.workload)) byId.set(h.workload, { name: h.name, id: h.workload });
      }
    }
    for (const h of held.get(n.name) || []) if (!byId.has(h.id)) byId.set(h.id, { name: h.name, id: h.id });
    const deviceMilli = (n.devices || []).reduce((s, d) => s + (d.allocatedMilli || 0), 0);
    return { node: n, holders: [...byId.values()], deviceMilli, hidden: hiddenWork(n) };
  });
  const key = (r) => `${r.node.cluster || ''}\u0000${r.node.pool || ''}\u0000${r.node.name}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

// Devices of a node by flavor: [{flavor, count, allocatedMilli, utilization}] where utilization
// is the mean of what the agent last reported for them (0..1; undefined when none reported).
export function devicesByFlavor(node) {
  const m = new Map();
  for (const d of node.devices || []) {
    const e = m.get(d.flavor) || { flavor: d.flavor, count: 0, allocatedMilli: 0, utilization: undefined, reported: 0 };
    e.count++;
    e.allocatedMilli += d.allocatedMilli || 0;
    if (typeof d.utilization === 'number') {
      e.utilization = ((e.utilization || 0) * e.reported + d.utilization) / (e.reported + 1);
      e.reported++;
    }
    m.set(d.flavor, e);
  }
  return [...m.values()];
}

// Per-flavor device totals over nodes, optionally per cluster and pool: Map key -> {flavor,
// cluster, pool, total, free, allocated, unhealthy} (allocated counts devices any part of which is
// held; unhealthy: the device is not Healthy or its node not Ready).
export function flavorTotals(nodes, { perPool = false } = {}) {
  const m = new Map();
  for (const n of nodes || []) {
    for (const d of n.devices || []) {
      const key = perPool ? `${n.cluster}/${n.pool}/${d.flavor}` : d.flavor;
      const e = m.get(key) || { flavor: d.flavor, cluster: n.cluster, pool: n.pool, total: 0, free: 0, allocated: 0, unhealthy: 0 };
      e.total++;
      if ((d.health && d.health !== 'Healthy') || (n.state && n.state !== 'Ready')) e.unhealthy++;
      else if ((d.allocatedMilli || 0) > 0) e.allocated++;
      else e.free++;
      m.set(key, e);
    }
  }
  return [...m.values()].sort((a, b) => (`${a.cluster}/${a.pool}/${a.flavor}` < `${b.cluster}/${b.pool}/${b.flavor}` ? -1 : 1));
}

export { holders };
