// A workload's page: summary, why it waits (explain, in plain words) when pending, tasks and
// placements, the events timeline and the tail of its logs; the actions the caller's roles allow
// (cancel, hold/release, scale, approve/reject a temporary quota), each confirmed first.
import { useState } from 'preact/hooks';
import { get, post, query, allowed } from '../api.js';
import { Action } from './Action.jsx';
import { usePoll } from '../poll.js';
import { when, human, duration } from '../format.js';
import { Link } from '../router.js';
import { PageHead, ErrorBox } from './common.jsx';

// The reason codes of docs/scheduler.md in a sentence.
const PLAIN = {
  Quota: 'It waits for quota: its queue, with what its cohort can lend or reclaim, does not have enough left.',
  NoFlavor: 'Its queue offers no flavor this workload accepts, so it cannot be admitted there.',
  Placement: 'Quota allows it, but no set of nodes has room for it right now.',
  WaitingForPreemption: 'Room is being made for it: preempted workloads are stopping.',
  BlockedByStrictFIFO: 'Its queue admits strictly in order and the workload at the head is stuck.',
  ReservedForGang: 'Capacity is held for a gang workload ahead of it.',
  NeverFits: 'It can never run as asked, whatever else finishes: the reason names the limit it exceeds.',
  HeldForPreemptor: 'It was preempted to give capacity back; that capacity goes first to the workload that reclaimed it.',
};

function Explain({ name }) {
  const { data, error } = usePoll(() => get(`/api/v1/workloads/${encodeURIComponent(name)}/explain`), [name]);
  if (error) return <ErrorBox error={error} />;
  if (!data || !data.reason) return null;
  const r = data.reason;
  return (
    <section class="card explain" aria-label="Why it is pending" data-testid="explain">
      <h2>Why it is pending</h2>
      <p class="plain" data-testid="explain-plain">{PLAIN[r.code] || `Reason: ${r.code}.`}</p>
      <p data-testid="explain-message">{r.message}</p>
      <ul>
        {r.quota && <li><b>quota:</b> {r.quota}</li>}
        {r.placement && <li><b>placement:</b> {r.placement}</li>}
        {r.preemption && <li><b>preemption:</b> {r.preemption}</li>}
        {r.position !== undefined && <li><b>queue position:</b> {r.position}, {r.ahead || 0} ahead</li>}
        {r.waitedSeconds !== undefined && <li><b>waited:</b> {duration(r.waitedSeconds)} at priority {r.effectivePriority}</li>}
      </ul>
    </section>
  );
}

function Logs({ name, running }) {
  const { data, error } = usePoll(async () => {
    try {
      return await get(`/api/v1/workloads/${encodeURIComponent(name)}/logs${query({ tail: 8192 })}`);
    } catch (e) {
      if (e.status === 404) return { content: '', none: e.message };
      throw e;
    }
  }, [name, running]);
  return (
    <section class="card" aria-label="Logs">
      <h2>Logs{data && data.taskId ? ` · ${data.taskId} ${data.stream}` : ''}</h2>
      <ErrorBox error={error} />
      {data && data.none ? <p class="muted">{data.none}</p> : <pre class="logs" data-testid="logs">{data ? data.content : ''}</pre>}
    </section>
  );
}

const FINISHED = new Set(['Succeeded', 'Failed', 'Cancelled']);
const WAITING = new Set(['Pending', 'Requeued']);
const SCALES = new Set(['InferenceService', 'BatchJob']);

// True once a task of the workload started somewhere (its logs may then exist): a Started or
// TaskEnded event, or a placement past 'placed'. A workload that never ran has no logs to ask for.
export function ranATask(w, events) {
  if ((events || []).some((e) => e.type === 'Started' || e.type === 'TaskEnded')) return true;
  return (w.placements || []).some((p) => p.phase && p.phase !== 'Pending' && p.phase !== 'placed');
}

// True while an Experiment's temporary quota request waits for a tenant admin's answer.
export function quotaAsked(events) {
  let last = '';
  for (const e of events || []) {
    if (e.type === 'TemporaryQuotaRequested' || e.type === 'TemporaryQuotaApproved' || e.type === 'TemporaryQuotaRejected') last = e.type;
  }
  return last === 'TemporaryQuotaRequested';
}

function Actions({ w, events, refresh }) {
  const { data: may } = usePoll(() => allowed({ workload: w.id }), [w.id], 15000);
  const [replicas, setReplicas] = useState('');
  if (!may) return null;
  const base = `/api/v1/workloads/${encodeURIComponent(w.id)}`;
  const done = FINISHED.has(w.state);
  const shown = [];
  if (!done && may.has('cancel')) {
    shown.push(
      <Action label="Cancel" danger testid="action-cancel" confirm={`Cancel ${w.kind} ${w.name} (${w.id})? Its tasks are stopped and it does not run again.`}
        run={async () => { await post(`${base}/cancel`, { reason: 'cancelled from the dashboard' }); return `${w.name} cancelled`; }} onDone={refresh} />,
    );
  }
  if (!done && may.has('hold') && !w.hold && WAITING.has(w.state)) {
    shown.push(
      <Action label="Hold" testid="action-hold" confirm={`Hold ${w.name} (${w.id})? It stays out of scheduling until released.`}
        run={async () => { await post(`${base}/hold`); return `${w.name} held`; }} onDone={refresh} />,
    );
  }
  if (!done && may.has('hold') && w.hold) {
    shown.push(
      <Action label="Release" testid="action-release" confirm={`Release ${w.name} (${w.id}) from its ${w.hold.toLowerCase()} state? It competes for quota again.`}
        run={async () => { await post(`${base}/${w.hold === 'Suspended' ? 'resume' : 'release'}`); return `${w.name} released`; }} onDone={refresh} />,
    );
  }
  if (!done && may.has('scale') && SCALES.has(w.kind)) {
    shown.push(
      <Action label="Scale" testid="action-scale" confirm={`Scale ${w.kind} ${w.name} (${w.id}) to how many ${w.kind === 'BatchJob' ? 'parallel tasks' : 'replicas'}?`}
        run={async () => {
          const n = Number(replicas);
          if (!Number.isInteger(n) || n < 0) throw new Error(`"${replicas}" is not a whole number of replicas`);
          await post(`${base}/scale`, { replicas: n });
          return `${w.name} scaled to ${n}`;
        }} onDone={refresh}>
        <label class="field" for="scale-replicas">
          <span>Replicas</span>
          <input id="scale-replicas" type="number" min="0" value={replicas} onInput={(e) => setReplicas(e.currentTarget.value)} />
        </label>
      </Action>,
    );
  }
  if (!done && may.has('quota-change') && quotaAsked(events)) {
    const ask = JSON.stringify((w.spec && w.spec.temporaryQuota) || {});
    shown.push(
      <Action label="Approve quota" testid="action-approve" confirm={`Grant ${w.name} (${w.id}) its temporary quota ${ask}?`}
        run={async () => { await post(`${base}/quota`, { approve: true }); return 'temporary quota approved'; }} onDone={refresh} />,
      <Action label="Reject quota" danger testid="action-reject" confirm={`Refuse ${w.name} (${w.id}) its temporary quota ${ask}?`}
        run={async () => { await post(`${base}/quota`, { approve: false }); return 'temporary quota rejected'; }} onDone={refresh} />,
    );
  }
  if (shown.length === 0) return null;
  return <div class="actions" aria-label="Actions" role="group">{shown}</div>;
}

export function Workload({ name }) {
  const { data, error, at, refresh } = usePoll(async () => {
    const [w, events] = await Promise.all([
      get(`/api/v1/workloads/${encodeURIComponent(name)}`),
      get(`/api/v1/workloads/${encodeURIComponent(name)}/events`),
    ]);
    return { w, events: events.items };
  }, [name]);
  const w = data && data.w;
  return (
    <section>
      <PageHead title={w ? `${w.kind} ${w.name}` : name} at={at} error={error}>
        <Link to="workloads">← all workloads</Link>
      </PageHead>
      <ErrorBox error={error} />
      {w && (
        <>
          <Actions w={w} events={data.events} refresh={refresh} />
          <dl class="summary card">
            <dt>state</dt><dd><span class={`state ${w.state}`} data-testid="workload-state">{w.state}</span>{w.failureReason ? ` (${w.failureReason})` : ''}{w.hold ? <span data-testid="workload-hold"> · {w.hold} by {w.holdBy || '–'}</span> : ''}</dd>
            <dt>id</dt><dd>{w.id}</dd>
            <dt>project</dt><dd>{w.project}</dd>
            <dt>queue</dt><dd>{w.queue}</dd>
            <dt>priority class</dt><dd>{w.priorityClass}</dd>
            <dt>submitted</dt><dd>{when(w.submittedAt)}</dd>
            <dt>admitted</dt><dd>{when(w.admittedAt)}</dd>
            <dt>flavors</dt><dd>{(w.groupFlavors || []).join(', ') || '–'}</dd>
            <dt>requeues</dt><dd>{w.requeues}</dd>
          </dl>
          {w.state === 'Pending' && <Explain name={w.id} />}
          <section class="card" aria-label="Tasks and placements">
            <h2>Tasks and placements</h2>
            <div class="table-wrap">
              <table data-testid="placements">
                <thead>
                  <tr><th scope="col">task</th><th scope="col">node</th><th scope="col">devices</th><th scope="col">cpu</th><th scope="col">memory</th><th scope="col">phase</th><th scope="col">exit</th></tr>
                </thead>
                <tbody>
                  {(w.placements || []).map((p) => (
                    <tr>
                      <td>{p.group}.{p.replica}</td>
                      <td>{p.node}</td>
                      <td>{(p.devices || []).map((d) => `${d.index}${d.milli < 1000 ? ` (${d.milli / 1000})` : ''}`).join(', ') || '–'}</td>
                      <td>{human('cpu', p.cpuMilli)}</td>
                      <td>{human('memory', p.memoryBytes)}</td>
                      <td>{p.phase || 'placed'}</td>
                      <td>{p.signal ? `signal ${p.signal}` : p.exitCode ?? ''}{p.oomKilled ? ' OOM' : ''}</td>
                    </tr>
                  ))}
                  {(w.placements || []).length === 0 && <tr><td colSpan={7} class="empty">not placed</td></tr>}
                </tbody>
              </table>
            </div>
          </section>
          <section class="card" aria-label="Events">
            <h2>Events</h2>
            <ol class="timeline" data-testid="events">
              {data.events.map((e) => (
                <li>
                  <time>{when(e.time)}</time> <b>{e.type}</b> <span>{(e.details && e.details.message) || ''}</span>
                </li>
              ))}
            </ol>
          </section>
          {ranATask(w, data.events) ? (
            <Logs name={w.id} running={w.state} />
          ) : (
            <section class="card" aria-label="Logs">
              <h2>Logs</h2>
              <p class="muted" data-testid="no-logs">No task of this workload has run yet, so there are no logs.</p>
            </section>
          )}
        </>
      )}
    </section>
  );
}
