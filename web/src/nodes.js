// The nodes page's model: every node (CPU-only ones too) with what holds it — the workloads the
// caller may see that have placements there, and whether the node's own allocation numbers show
// more held than those (work of another tenant, which the caller may not see).
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

// One row per node, sorted by cluster, pool and name: the node, its holders, the allocated
// device milli the server reports, and `hidden` when the node holds more CPU, memory or device
// than the visible holders account for (another tenant's work).
export function nodeRows(nodes, workloads) {
  const held = nodeHolders(workloads);
  const rows = (nodes || []).map((n) => {
    const hs = held.get(n.name) || [];
    const deviceMilli = (n.devices || []).reduce((s, d) => s + (d.allocatedMilli || 0), 0);
    const seen = hs.reduce((s, h) => ({ cpu: s.cpu + h.cpuMilli, mem: s.mem + h.memoryBytes, dev: s.dev + h.devices }), { cpu: 0, mem: 0, dev: 0 });
    const hidden = (n.allocatedCpuMilli || 0) > seen.cpu || (n.allocatedMemoryBytes || 0) > seen.mem || deviceMilli > seen.dev;
    return { node: n, holders: hs, deviceMilli, hidden };
  });
  const key = (r) => `${r.node.cluster || ''}\u0000${r.node.pool || ''}\u0000${r.node.name}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

// Devices of a node by flavor: [{flavor, count, allocatedMilli}].
export function devicesByFlavor(node) {
  const m = new Map();
  for (const d of node.devices || []) {
    const e = m.get(d.flavor) || { flavor: d.flavor, count: 0, allocatedMilli: 0 };
    e.count++;
    e.allocatedMilli += d.allocatedMilli || 0;
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
