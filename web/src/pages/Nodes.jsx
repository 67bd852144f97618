// Nodes page: every node, CPU-only ones included, with its state (and cordon), heartbeat,
// devices per flavor, each device's measured utilization (its agent's last report), holders
// (as the server names them for the caller), and how much of it is allocated; cordon, uncordon and drain for
// callers whose roles allow node control (GET /api/v1/whoami?node=N), each confirmed first.
import { useState } from 'preact/hooks';
import { get, post, allowed } from '../api.js';
import { usePoll } from '../poll.js';
import { nodeRows, devicesByFlavor } from '../nodes.js';
import { shortFlavor, human, duration, round, utilization } from '../format.js';
import { Link } from '../router.js';
import { PageHead, ErrorBox } from './common.jsx';
import { Action } from './Action.jsx';

const pct = (used, total) => (total > 0 ? `${round((100 * used) / total, 0)}%` : '–');

function Heartbeat({ n }) {
  if (n.heartbeatAgeSeconds === undefined) return <span class="muted">{n.simulated ? 'simulated (no agent)' : '–'}</span>;
  return (
    <span class={n.heartbeatLate ? 'bad' : ''}>
      {duration(n.heartbeatAgeSeconds)} ago{n.heartbeatLate ? ' (late)' : ''}
    </span>
  );
}

function NodeActions({ n, refresh }) {
  const [grace, setGrace] = useState('10m');
  const base = `/api/v1/nodes/${encodeURIComponent(n.name)}`;
  const cordoned = n.schedulingState && n.schedulingState !== 'Ready' && n.schedulingState !== 'NotReady';
  return (
    <span class="actions">
      {!cordoned && (
        <Action label="Cordon" testid={`cordon-${n.name}`} confirm={`Cordon node ${n.name}? It takes no new work; what runs there keeps running.`}
          run={async () => { await post(`${base}/cordon`, { reason: 'cordoned from the dashboard' }); return `${n.name} cordoned`; }} onDone={refresh} />
      )}
      {cordoned && (
        <Action label="Uncordon" testid={`uncordon-${n.name}`} confirm={`Uncordon node ${n.name}? It takes new work again (a drain ends; requeued work stays requeued).`}
          run={async () => { await post(`${base}/uncordon`, {}); return `${n.name} uncordoned`; }} onDone={refresh} />
      )}
      {n.schedulingState !== 'Draining' && n.schedulingState !== 'Drained' && (
        <Action label="Drain" danger testid={`drain-${n.name}`}
          confirm={`Drain node ${n.name}? It is cordoned; preemptible work is checkpointed and requeued now, the rest when it ends or the grace is over.`}
          run={async () => { await post(`${base}/drain`, { grace, reason: 'drained from the dashboard' }); return `${n.name} draining`; }} onDone={refresh}>
          <label class="field" for={`grace-${n.name}`}>
            <span>Grace (e.g. 10m, 0)</span>
            <input id={`grace-${n.name}`} value={grace} onInput={(e) => setGrace(e.currentTarget.value)} />
          </label>
        </Action>
      )}
    </span>
  );
}

export function Nodes() {
  const { data, error, at, refresh } = usePoll(async () => {
    const [nodes, workloads] = await Promise.all([get('/api/v1/nodes'), get('/api/v1/workloads?limit=5000')]);
    // Node control is decided per node by the server; one node answers for the cluster-level rule.
    const may = nodes.items.length ? await allowed({ node: nodes.items[0].name }) : new Set();
    return { nodes: nodes.items, workloads: workloads.items, control: may.has('node-control') };
  });
  const rows = data ? nodeRows(data.nodes, data.workloads) : [];
  return (
    <section>
      <PageHead title="Nodes" at={at} error={error} />
      <ErrorBox error={error} />
      <div class="table-wrap">
        <table data-testid="nodes">
          <thead>
            <tr>
              <th scope="col">node</th><th scope="col">cluster / pool</th><th scope="col">state</th><th scope="col">heartbeat</th>
              <th scope="col">allocated CPU, memory</th><th scope="col">devices</th><th scope="col">measured utilization</th>
              <th scope="col">held by</th>{data && data.control && <th scope="col">actions</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ node: n, holders, hidden }) => (
              <tr data-testid="node-row" data-node={n.name}>
                <td>{n.name}</td>
                <td>{n.cluster}<br />{n.pool}</td>
                <td data-testid={`node-state-${n.name}`}>
                  {n.schedulingState || n.state}
                  {n.cordon && n.cordon.by ? <span class="muted"> by {n.cordon.by}{n.cordon.reason ? `: ${n.cordon.reason}` : ''}</span> : ''}
                </td>
                <td><Heartbeat n={n} /></td>
                <td class="num">{round((n.allocatedCpuMilli || 0) / 1000, 1)} / {human('cpu', n.cpuMilli)} ({pct(n.allocatedCpuMilli, n.cpuMilli)})<br />
                  {round((n.allocatedMemoryBytes || 0) / 2 ** 30, 0)} / {human('memory', n.memoryBytes)} ({pct(n.allocatedMemoryBytes, n.memoryBytes)})</td>
                <td class="wrap" data-testid={`node-devices-${n.name}`}>
                  {(n.devices || []).length === 0
                    ? 'none (CPU only)'
                    : devicesByFlavor(n).map((f) => `${f.count} × ${shortFlavor(f.flavor)} (${round(f.allocatedMilli / 1000)} allocated)`).join(', ')}
                </td>
                <td class="wrap" data-testid={`node-utilization-${n.name}`}>
                  {(n.devices || []).length === 0
                    ? '–'
                    : (n.devices || []).every((d) => typeof d.utilization !== 'number')
                      ? <span class="muted">not reported{n.simulated ? ' (simulated)' : ''}</span>
                      : (n.devices || []).map((d, i) => (
                        <>
                          {i > 0 && ', '}
                          <span data-testid={`util-${n.name}-${d.index}`}>#{d.index} {utilization(d)}</span>
                        </>
                      ))}
                </td>
                <td class="holders" data-testid={`node-holders-${n.name}`}>
                  {holders.map((h, i) => (
                    <>
                      {i > 0 && ', '}
                      <Link to={`workloads/${encodeURIComponent(h.id)}`}>{h.name}</Link> <span class="muted">({h.id})</span>
                    </>
                  ))}
                  {hidden && <span class="muted">{holders.length ? ', ' : ''}work of another tenant</span>}
                  {!hidden && holders.length === 0 && <span class="muted">nothing</span>}
                </td>
                {data.control && <td><NodeActions n={n} refresh={refresh} /></td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data && <p class="muted">{rows.length} nodes, {rows.filter((r) => !(r.node.devices || []).length).length} of them CPU-only</p>}
    </section>
  );
}
