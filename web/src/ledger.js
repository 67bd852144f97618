// The ledger heatmap's model: nodes grouped cluster -> pool -> node, each device classified as
// free, allocated, shared or unhealthy (simulated is a mark on top of any of them), with the
// holders the server names on each device (GET /api/v1/nodes: `holders` the caller may see,
// `hiddenMilli` held by work of tenants it may not) — the page infers nothing.

// Returns Map "node/index" -> [{name, id, milli, queue, task}] from the server's device holders;
// queue and task come from the caller's workload list when it holds the workload.
export function holders(nodes, workloads) {
  const tasks = new Map(); // "wl/node/index" -> "group.replica"
  const queue = new Map();
  for (const w of workloads || []) {
    queue.set(w.id, w.queue);
    for (const p of w.placements || []) {
      for (const d of p.devices || []) tasks.set(`${w.id}/${p.node}/${d.index}`, `${p.group}.${p.replica}`);
    }
  }
  const m = new Map();
  for (const n of nodes || []) {
    for (const d of n.devices || []) {
      const hs = d.holders || [];
      if (hs.length === 0) continue;
      m.set(`${n.name}/${d.index}`, hs.map((h) => ({
        name: h.name, id: h.workload, milli: h.milli, queue: queue.get(h.workload) || '', task: tasks.get(`${h.workload}/${n.name}/${d.index}`) || '',
      })));
    }
  }
  return m;
}

// The state of one device: unhealthy (device or node not healthy), allocated (all of it held by
// one workload), shared (part of it held, or several holders — work the caller may not see
// counts as one more) or free.
export function deviceState(node, device, held) {
  if ((device.health && device.health !== 'Healthy') || (node.state && node.state !== 'Ready')) return 'unhealthy';
  const milli = device.allocatedMilli || 0;
  const count = held.length + ((device.hiddenMilli || 0) > 0 ? 1 : 0);
  if (milli <= 0 && count === 0) return 'free';
  if (count > 1 || (milli > 0 && milli < 1000)) return 'shared';
  return 'allocated';
}

// Groups nodes into [{cluster, pools: [{pool, nodes: [{node, devices: [{device, state, held}]}]}]}],
// keeping only devices of `flavor` (all when empty) and nodes that have any left.
export function ledgerTree(nodes, workloads, flavor) {
  const held = holders(nodes, workloads);
  const clusters = new Map();
  for (const n of nodes || []) {
    const devices = (n.devices || [])
      .filter((d) => !flavor || d.flavor === flavor)
      .map((d) => {
        const h = held.get(`${n.name}/${d.index}`) || [];
        return { device: d, held: h, state: deviceState(n, d, h), simulated: !!(d.simulated || n.simulated) };
      });
    if (devices.length === 0) continue;
    const c = n.cluster || 'default';
    const p = n.pool || 'default';
    if (!clusters.has(c)) clusters.set(c, new Map());
    const pools = clusters.get(c);
    if (!pools.has(p)) pools.set(p, []);
    pools.get(p).push({ node: n, devices });
  }
  const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return [...clusters.keys()].sort(byName).map((c) => ({
    cluster: c,
    pools: [...clusters.get(c).keys()].sort(byName).map((p) => ({
      pool: p,
      nodes: clusters.get(c).get(p).sort((a, b) => byName(a.node.name, b.node.name)),
    })),
  }));
}

// Counts devices per state over a tree.
export function stateCounts(tree) {
  const counts = { free: 0, allocated: 0, shared: 0, unhealthy: 0, simulated: 0 };
  for (const c of tree) for (const p of c.pools) for (const n of p.nodes) for (const d of n.devices) {
    counts[d.state]++;
    if (d.simulated) counts.simulated++;
  }
  return counts;
}
