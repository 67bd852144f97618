// Overview page: devices per flavor (free / allocated / unhealthy) per cluster and pool, running
// against pending work, allocated device-hours per hour per flavor over the last 24 h (the usage
// report by flavor and hour), the queues that wait longest with the reason of their oldest
// workload, and the recent failures and preemptions.
import { get, query } from '../api.js';
import { usePoll } from '../poll.js';
import { flavorTotals } from '../nodes.js';
import { duration, when, shortFlavor } from '../format.js';
import { Link } from '../router.js';
import { last24h, hourLabels, allocationRows, hourTick } from '../allocation.js';
import { PageHead, ErrorBox } from './common.jsx';
import { PeriodChart } from './Chart.jsx';

// The last 24 h of the usage report by flavor and hour; a token whose roles may not read
// reports gets the reason instead of the chart.
async function allocation24h() {
  const window = last24h();
  try {
    const report = await get(`/api/v1/reports/usage${query({ by: 'flavor,hour', format: 'json', ...window })}`);
    return { rows: allocationRows(report.rows, hourLabels(window.from)) };
  } catch (e) {
    if (e.status === 403) return { denied: 'Your roles may not read usage reports (admins and unscoped viewers may).' };
    throw e;
  }
}

// Queues by their oldest pending workload, longest first: [{queue, count, waited, oldest}].
export function longestWaits(pending, nowUs) {
  const m = new Map();
  for (const w of pending || []) {
    const waited = (nowUs - (w.submittedUs || nowUs)) / 1e6;
    const e = m.get(w.queue) || { queue: w.queue, count: 0, waited: -1, oldest: null };
    e.count++;
    if (waited > e.waited) Object.assign(e, { waited, oldest: w });
    m.set(w.queue, e);
  }
  return [...m.values()].sort((a, b) => b.waited - a.waited);
}

export function Overview() {
  const { data, error, at } = usePoll(async () => {
    const [nodes, pending, running, admitted, failed, events, allocation] = await Promise.all([
      get('/api/v1/nodes'),
      get('/api/v1/workloads?state=Pending&limit=5000'),
      get('/api/v1/workloads?state=Running&limit=1'),
      get('/api/v1/workloads?state=Admitted&limit=1'),
      get('/api/v1/workloads?state=Failed&limit=10'),
      get('/api/v1/events'),
      allocation24h(),
    ]);
    return { nodes: nodes.items, pending: pending.items, running: running.total + admitted.total, failed: failed.items, events: events.items || [], allocation };
  }, [], 5000);
  const totals = data ? flavorTotals(data.nodes, { perPool: true }) : [];
  const waits = data ? longestWaits(data.pending, Date.now() * 1000).slice(0, 8) : [];
  const preemptions = data ? data.events.filter((e) => e.type === 'Preempted').slice(-10).reverse() : [];
  return (
    <section>
      <PageHead title="Overview" at={at} error={error} />
      <ErrorBox error={error} />
      {data && (
        <>
          <div class="tiles">
            <div class="tile">running or admitted<b data-testid="count-running">{data.running}</b></div>
            <div class="tile">pending<b data-testid="count-pending">{data.pending.length}</b></div>
            <div class="tile">nodes<b>{data.nodes.length}</b></div>
            <div class="tile">devices free<b>{totals.reduce((s, t) => s + t.free, 0)} of {totals.reduce((s, t) => s + t.total, 0)}</b></div>
          </div>
          <section class="card" aria-label="Devices per flavor">
            <h2>Devices per flavor, cluster and pool</h2>
            <div class="table-wrap">
              <table data-testid="flavor-totals">
                <thead><tr><th scope="col">cluster</th><th scope="col">pool</th><th scope="col">flavor</th><th scope="col">devices</th><th scope="col">free</th><th scope="col">allocated</th><th scope="col">unhealthy</th></tr></thead>
                <tbody>
                  {totals.map((t) => (
                    <tr data-flavor={t.flavor}>
                      <td>{t.cluster}</td><td>{t.pool}</td><td title={t.flavor}>{shortFlavor(t.flavor)}</td>
                      <td class="num">{t.total}</td><td class="num">{t.free}</td><td class="num">{t.allocated}</td><td class="num">{t.unhealthy}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <section class="card" aria-label="Allocation over the last 24 hours">
            <h2>Allocated devices per hour, last 24 h</h2>
            {data.allocation.denied
              ? <p class="muted" data-testid="allocation-denied">{data.allocation.denied}</p>
              : data.allocation.rows.length === 0
                ? <p class="muted" data-testid="allocation-empty">No device was allocated in the last 24 hours.</p>
                : <PeriodChart rows={data.allocation.rows} label="device-hours per hour" title="" tick={hourTick} testid="allocation-chart" />}
          </section>
          <div class="two-col">
            <section class="card" aria-label="Longest waits">
              <h2>Queues that wait longest</h2>
              <div class="table-wrap">
                <table data-testid="longest-waits">
                  <thead><tr><th scope="col">queue</th><th scope="col">pending</th><th scope="col">oldest wait</th><th scope="col">oldest workload and why</th></tr></thead>
                  <tbody>
                    {waits.map((q) => (
                      <tr>
                        <td>{q.queue}</td><td class="num">{q.count}</td><td class="num">{duration(q.waited)}</td>
                        <td class="wrap">
                          <Link to={`workloads/${encodeURIComponent(q.oldest.id)}`}>{q.oldest.name}</Link>
                          {q.oldest.pendingReason ? `: ${q.oldest.pendingReason.code}` : ''}
                        </td>
                      </tr>
                    ))}
                    {waits.length === 0 && <tr><td colSpan={4} class="empty">nothing waits</td></tr>}
                  </tbody>
                </table>
              </div>
            </section>
            <section class="card" aria-label="Recent failures and preemptions">
              <h2>Recent failures and preemptions</h2>
              <ul data-testid="recent-trouble">
                {data.failed.map((w) => (
                  <li>
                    failed: <Link to={`workloads/${encodeURIComponent(w.id)}`}>{w.name}</Link> <span class="muted">({w.id})</span>
                    {w.failureReason ? ` — ${w.failureReason}` : ''}
                  </li>
                ))}
                {preemptions.map((e) => (
                  <li>
                    preempted {when(e.time)}: <Link to={`workloads/${encodeURIComponent(e.workload)}`}>{e.name || e.workload}</Link>
                    {e.details && e.details.reason ? ` — ${e.details.reason}` : ''}
                  </li>
                ))}
                {data.failed.length === 0 && preemptions.length === 0 && <li class="muted">none</li>}
              </ul>
            </section>
          </div>
        </>
      )}
    </section>
  );
}
