// Ledger page: clusters -> pools -> nodes -> devices as a heatmap, filterable by flavor; a
// device's holders show on hover (title) and in the side panel on click.
import { useState } from 'preact/hooks';
import { get } from '../api.js';
import { usePoll } from '../poll.js';
import { ledgerTree, stateCounts } from '../ledger.js';
import { flavorTotals } from '../nodes.js';
import { shortFlavor, human, utilization } from '../format.js';
import { Link } from '../router.js';
import { PageHead, ErrorBox, Select } from './common.jsx';

const STATES = ['free', 'allocated', 'shared', 'unhealthy'];

// Who holds a device: the visible holders, and "work of another tenant" when the server says
// part of it is held by work the caller's roles do not show (hiddenMilli).
export function heldBy(d) {
  const names = d.held.map((h) => `${h.name} (${h.milli / 1000})`);
  if ((d.device.hiddenMilli || 0) > 0) names.push(`work of another tenant (${d.device.hiddenMilli / 1000})`);
  return names.length ? names.join(', ') : 'nobody';
}

function describe(node, d) {
  const who = heldBy(d);
  return `${node.name} device ${d.device.index} ${shortFlavor(d.device.flavor)}: ${d.state}${d.simulated ? ', simulated' : ''}; held by ${who}`;
}

// A cluster's location and network domain, as its Cluster document declares them.
function where(clusters, name) {
  const c = (clusters || []).find((x) => x.name === name);
  if (!c) return '';
  return [c.location, c.networkDomain].filter(Boolean).join(' · ');
}

export function Ledger() {
  const [flavor, setFlavor] = useState('');
  const [picked, setPicked] = useState(null);
  const { data, error, at } = usePoll(async () => {
    const [nodes, workloads, flavors, clusters] = await Promise.all([
      get('/api/v1/nodes'),
      get('/api/v1/workloads?limit=5000'),
      get('/api/v1/flavors'),
      get('/api/v1/clusters'),
    ]);
    return { nodes: nodes.items, workloads: workloads.items, flavors: flavors.items, clusters: clusters.items };
  });
  const tree = data ? ledgerTree(data.nodes, data.workloads, flavor) : [];
  const counts = stateCounts(tree);
  const flavors = data ? data.flavors.map((f) => f.name).filter((f) => f !== 'cpu' && f !== 'memory') : [];
  let pickedDevice = null;
  if (picked) {
    for (const c of tree) for (const p of c.pools) for (const n of p.nodes) for (const d of n.devices) {
      if (n.node.name === picked.node && d.device.index === picked.index) pickedDevice = { node: n.node, d };
    }
  }
  return (
    <section aria-labelledby="page-title">
      <PageHead title="Ledger" at={at} error={error}>
        <Select id="flavor" label="Flavor" value={flavor} onChange={setFlavor} options={flavors} all="all flavors" />
      </PageHead>
      <ErrorBox error={error} />
      <ul class="legend" aria-label="Legend">
        {STATES.map((s) => (
          <li>
            <span class={`cell ${s}`} aria-hidden="true" /> {s} <b data-testid={`count-${s}`}>{counts[s]}</b>
          </li>
        ))}
        <li>
          <span class="cell free simulated" aria-hidden="true" /> simulated <b data-testid="count-simulated">{counts.simulated}</b>
        </li>
      </ul>
      <div class="ledger-body">
        <div class="heatmap" data-testid="heatmap">
          {tree.map((c) => (
            <section class="cluster" aria-label={`cluster ${c.cluster}`}>
              <h2>
                cluster {c.cluster}
                <span class="cluster-where" data-testid={`cluster-where-${c.cluster}`}>{where(data.clusters, c.cluster)}</span>
              </h2>
              {c.pools.map((p) => (
                <section class="pool" aria-label={`pool ${p.pool}`}>
                  <h3>pool {p.pool}</h3>
                  <p class="flavor-totals" data-testid={`totals-${c.cluster}-${p.pool}`}>
                    {flavorTotals(p.nodes.map((n) => ({ ...n.node, devices: n.devices.map((d) => d.device) }))).map((t) => (
                      <span data-flavor={t.flavor}>{shortFlavor(t.flavor)}: {t.total} ({t.free} free, {t.allocated} allocated, {t.unhealthy} unhealthy) </span>
                    ))}
                  </p>
                  {p.nodes.map((n) => (
                    <div class="node-row">
                      <span class="node-name" title={`${n.node.name}: ${n.node.state}${n.node.agent ? ', agent' : ''}`}>
                        {n.node.name}
                      </span>
                      <span class="flavor-label" data-testid="row-flavor">{[...new Set(n.devices.map((d) => shortFlavor(d.device.flavor)))].join(', ')}</span>
                      <div class="cells">
                        {n.devices.map((d) => (
                          <button
                            type="button"
                            class={`cell ${d.state}${d.simulated ? ' simulated' : ''}${picked && picked.node === n.node.name && picked.index === d.device.index ? ' picked' : ''}`}
                            data-testid="device"
                            data-state={d.state}
                            data-node={n.node.name}
                            data-index={d.device.index}
                            title={describe(n.node, d)}
                            aria-label={describe(n.node, d)}
                            onClick={() => setPicked({ node: n.node.name, index: d.device.index })}
                          >
                            {d.device.index}
                          </button>
                        ))}
                      </div>
                    </div>
                  ))}
                </section>
              ))}
            </section>
          ))}
          {data && tree.length === 0 && <p class="empty">No devices{flavor ? ` of ${flavor}` : ''}.</p>}
        </div>
        <aside class="device-panel" aria-label="Device details" aria-live="polite">
          {pickedDevice ? (
            <div data-testid="device-panel">
              <h2>
                {pickedDevice.node.name} · device {pickedDevice.d.device.index}
              </h2>
              <dl>
                <dt>flavor</dt><dd>{pickedDevice.d.device.flavor}</dd>
                <dt>state</dt><dd>{pickedDevice.d.state}{pickedDevice.d.simulated ? ' (simulated)' : ''}</dd>
                <dt>health</dt><dd>{pickedDevice.d.device.health || '–'}</dd>
                <dt>allocated</dt><dd>{(pickedDevice.d.device.allocatedMilli || 0) / 1000}</dd>
                <dt>utilization</dt><dd>{utilization(pickedDevice.d.device)}</dd>
                <dt>memory</dt><dd>{human('memory', pickedDevice.d.device.memoryBytes)}</dd>
                <dt>cluster / pool</dt><dd>{pickedDevice.node.cluster} / {pickedDevice.node.pool}</dd>
              </dl>
              <h3>Held by</h3>
              {pickedDevice.d.held.length === 0 && !(pickedDevice.d.device.hiddenMilli > 0) ? (
                <p data-testid="held-by">nobody</p>
              ) : (
                <ul data-testid="held-by">
                  {pickedDevice.d.held.map((h) => (
                    <li>
                      <Link to={`workloads/${encodeURIComponent(h.id)}`}>{h.name}</Link>
                      {h.task ? ` task ${h.task},` : ''} {h.milli / 1000} of the device{h.queue ? `, queue ${h.queue}` : ''}
                    </li>
                  ))}
                  {pickedDevice.d.device.hiddenMilli > 0 && (
                    <li>a workload of another tenant (your roles do not show it), {pickedDevice.d.device.hiddenMilli / 1000} of the device</li>
                  )}
                </ul>
              )}
            </div>
          ) : (
            <p class="hint">Click a device to see who holds it.</p>
          )}
        </aside>
      </div>
    </section>
  );
}
