// The ledger heatmap's model: nodes grouped cluster -> pool -> node, each device classified as
// free, allocated, shared or unhealthy (simulated is a mark on top of any of them), with the
// workloads that hold it taken from the placements of admitted and running workloads.

const HOLDING = new Set(['Admitted', 'Running']);
const GONE = new Set(['Exited', 'Lost']);

// Returns Map "node/index" -> [{name, id, milli, queue}] from a workload list.
export function holders(workloads) {
  const m = new Map();
  for (const w of workloads || []) {
    if (!HOLDING.has(w.state)) continue;
    for (const p of w.placements || []) {
      if (GONE.has(p.phase)) continue;
      for (const d of p.devices || []) {
        const key = `${p.node}/${d.index}`;
        if (!m.has(key)) m.set(key, []);
        m.get(key).push({ name: w.name, id: w.id, milli: d.milli, queue: w.queue, task: `${p.group}.${p.replica}` });
      }
    }
  }
  return m;
}

// The state of one device: unhealthy (device or node not healthy), allocated (all of it held by
// one workload), shared (part of it held, or several holders) or free.
export function deviceState(node, device, held) {
  if ((device.health && device.health !== 'Healthy') || (node.state && node.state !== 'Ready')) return 'unhealthy';
  const milli = device.allocatedMilli || 0;
  if (milli <= 0 && held.length === 0) return 'free';
  if (held.length > 1 || (milli > 0 && milli < 1000)) return 'shared';
  return 'allocated';
}

// Groups nodes into [{cluster, pools: [{pool, nodes: [{node, devices: [{device, state, held}]}]}]}],
// keeping only devices of `flavor` (all when empty) and nodes that have any left.
export function ledgerTree(nodes, workloads, flavor) {
  const held = holders(workloads);
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
