// Queues page: per queue and flavor, bars of nominal quota, used, borrowed and lent (from and to
// whom, the server's numbers); pending
// count and oldest wait; the cohort tree.
import { get } from '../api.js';
import { usePoll } from '../poll.js';
import { queueRows, cohortTree, flowText } from '../queues.js';
import { human, duration, isDevice } from '../format.js';
import { Link } from '../router.js';
import { PageHead, ErrorBox } from './common.jsx';

// The summary table: one row per queue and resource with quota or use, in people's units.
function Summary({ rows, oldest }) {
  return (
    <div class="table-wrap card">
      <table data-testid="queue-summary">
        <caption class="muted">Per queue and resource; borrowing limit "none" means the queue may borrow without limit.</caption>
        <thead>
          <tr>
            <th scope="col">queue</th><th scope="col">resource</th><th scope="col">used</th><th scope="col">nominal</th>
            <th scope="col">borrowing limit</th><th scope="col">borrowed</th><th scope="col">lent</th><th scope="col">pending</th><th scope="col">oldest wait</th>
          </tr>
        </thead>
        <tbody>
          {rows.flatMap(({ queue, rows: rs }) =>
            rs.filter((r) => r.nominal > 0 || r.used > 0).map((r, i) => (
              <tr data-testid={`summary-${queue.name}-${r.resource}`}>
                <td>{i === 0 ? queue.name : ''}</td>
                <td>{r.resource}</td>
                <td class="num">{human(r.resource, r.used)}</td>
                <td class="num">{human(r.resource, r.nominal)}</td>
                <td class="num">{r.borrowingLimit === undefined || r.borrowingLimit === null ? 'none' : human(r.resource, r.borrowingLimit)}</td>
                <td class="num">{human(r.resource, r.borrowed)}</td>
                <td class="num">{human(r.resource, r.lent)}</td>
                <td class="num">{i === 0 ? queue.pending : ''}</td>
                <td class="num">{i === 0 ? (queue.pending ? duration(oldest.get(queue.name)) : '–') : ''}</td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </div>
  );
}

const BARS = [
  ['nominal', 'nominal quota'],
  ['used', 'used'],
  ['borrowed', 'borrowed'],
  ['lent', 'lent'],
];

function Bars({ queue, row }) {
  const scale = Math.max(row.nominal + (row.borrowingLimit || 0), row.used, row.nominal, 1);
  return (
    <div class="bars" role="group" aria-label={`${queue} ${row.resource}`} data-testid={`bars-${queue}-${row.resource}`}>
      <div class="resource">{row.resource}</div>
      {BARS.map(([k, label]) => (
        <div class="bar-line">
          <span class="bar-label">{label}</span>
          <span class="bar-track">
            <span class={`bar ${k}`} style={{ width: `${Math.min(100, (100 * row[k]) / scale)}%` }} />
          </span>
          <span class="bar-value" data-testid={`${k}-${queue}-${row.resource}`} data-value={row[k] / (isDevice(row.resource) ? 1000 : 1)}>
            {human(row.resource, row[k])}
          </span>
        </div>
      ))}
      {row.borrowedFrom.length > 0 && (
        <div class="flows muted" data-testid={`from-${queue}-${row.resource}`}>
          borrowed from {flowText(row.resource, row.borrowedFrom, human)}
        </div>
      )}
      {row.lentTo.length > 0 && (
        <div class="flows muted" data-testid={`to-${queue}-${row.resource}`}>
          lent to {flowText(row.resource, row.lentTo, human)}
        </div>
      )}
    </div>
  );
}

function Tree({ nodes }) {
  return (
    <ul class="tree">
      {nodes.map((n) => (
        <li>
          <span class="cohort">cohort {n.name}</span>
          {n.description && <span class="muted"> — {n.description}</span>}
          {n.queues.length > 0 && (
            <ul>
              {n.queues.map((q) => (
                <li class="queue-leaf">queue {q}</li>
              ))}
            </ul>
          )}
          {n.children.length > 0 && <Tree nodes={n.children} />}
        </li>
      ))}
    </ul>
  );
}

export function Queues() {
  const { data, error, at } = usePoll(async () => {
    const [queues, cohorts, pending] = await Promise.all([
      get('/api/v1/queues'),
      get('/api/v1/cohorts'),
      get('/api/v1/workloads?state=Pending&limit=5000'),
    ]);
    return { queues: queues.items, cohorts: cohorts.items, pending: pending.items };
  });
  const rows = data ? queueRows(data.queues) : [];
  const oldest = new Map();
  const now = Date.now() * 1000;
  for (const w of data ? data.pending : []) {
    const waited = (now - (w.submittedUs || now)) / 1e6;
    oldest.set(w.queue, Math.max(oldest.get(w.queue) || 0, waited));
  }
  return (
    <section>
      <PageHead title="Queues" at={at} error={error} />
      <ErrorBox error={error} />
      <Summary rows={rows} oldest={oldest} />
      <h2>Details</h2>
      <div class="queues-layout">
        <div class="queue-cards">
          {rows.map(({ queue, rows }) => {
            const shown = rows.filter((r) => r.nominal > 0 || r.used > 0);
            return (
              <article class="card" aria-label={`queue ${queue.name}`} data-testid={`queue-${queue.name}`}>
                <header>
                  <h2>{queue.name}</h2>
                  <span class="muted">
                    tenant {queue.tenant}
                    {queue.cohort ? ` · cohort ${queue.cohort}` : ''}
                  </span>
                  <span class="stat">
                    pending <b data-testid={`pending-${queue.name}`}>{queue.pending}</b>
                  </span>
                  <span class="stat">
                    admitted <b>{queue.admitted}</b>
                  </span>
                  <span class="stat">
                    oldest wait <b data-testid={`oldest-${queue.name}`}>{queue.pending ? duration(oldest.get(queue.name)) : '–'}</b>
                  </span>
                </header>
                {shown.length === 0 && <p class="muted">no quota</p>}
                {shown.map((r) => (
                  <Bars queue={queue.name} row={r} />
                ))}
                {queue.pending > 0 && (
                  <details data-testid={`pending-list-${queue.name}`}>
                    <summary>pending workloads</summary>
                    <ul>
                      {data.pending.filter((w) => w.queue === queue.name).map((w) => (
                        <li>
                          <Link to={`workloads/${encodeURIComponent(w.id)}`}>{w.name}</Link> <span class="muted">({w.id})</span>
                          {w.pendingReason ? ` — ${w.pendingReason.code}` : ''}
                        </li>
                      ))}
                    </ul>
                  </details>
                )}
              </article>
            );
          })}
        </div>
        <aside class="card cohorts" aria-label="Cohort tree">
          <h2>Cohort tree</h2>
          {data && <Tree nodes={cohortTree(data.cohorts, data.queues)} />}
        </aside>
      </div>
    </section>
  );
}
