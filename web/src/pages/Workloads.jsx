// Workloads page: the list, filterable by kind, state, tenant, queue and name.
import { useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { usePoll } from '../poll.js';
import { when } from '../format.js';
import { Link } from '../router.js';
import { PageHead, ErrorBox, Select } from './common.jsx';

const KINDS = ['TrainingJob', 'InferenceService', 'Experiment', 'Evaluation', 'BatchJob'];
const STATES = ['Pending', 'Admitted', 'Running', 'Succeeded', 'Failed', 'Cancelled'];

export function Workloads() {
  const [f, setF] = useState({ kind: '', state: '', tenant: '', queue: '', name: '' });
  const set = (k) => (v) => setF({ ...f, [k]: v });
  const { data, error, at } = usePoll(async () => {
    const [list, queues, tenants] = await Promise.all([
      get('/api/v1/workloads' + query({ kind: f.kind, state: f.state, tenant: f.tenant, queue: f.queue, limit: 1000 })),
      get('/api/v1/queues'),
      get('/api/v1/tenants'),
    ]);
    return { items: list.items, total: list.total, queues: queues.items.map((q) => q.name), tenants: tenants.items.map((t) => t.name) };
  }, [f.kind, f.state, f.tenant, f.queue]);
  const needle = f.name.trim().toLowerCase();
  const items = (data ? data.items : []).filter((w) => !needle || w.name.toLowerCase().includes(needle) || w.id.includes(needle));
  return (
    <section>
      <PageHead title="Workloads" at={at} error={error} />
      <form class="filters" role="search" aria-label="Filter workloads" onSubmit={(e) => e.preventDefault()}>
        <Select id="f-kind" label="Kind" value={f.kind} onChange={set('kind')} options={KINDS} />
        <Select id="f-state" label="State" value={f.state} onChange={set('state')} options={STATES} />
        <Select id="f-tenant" label="Tenant" value={f.tenant} onChange={set('tenant')} options={data ? data.tenants : []} />
        <Select id="f-queue" label="Queue" value={f.queue} onChange={set('queue')} options={data ? data.queues : []} />
        <label class="field" for="f-name">
          <span>Name</span>
          <input id="f-name" type="search" value={f.name} onInput={(e) => set('name')(e.currentTarget.value)} placeholder="name or id" />
        </label>
      </form>
      <ErrorBox error={error} />
      <div class="table-wrap">
        <table data-testid="workloads">
          <thead>
            <tr>
              <th scope="col">name</th><th scope="col">kind</th><th scope="col">state</th><th scope="col">project</th>
              <th scope="col">queue</th><th scope="col">submitted</th><th scope="col">why pending</th>
            </tr>
          </thead>
          <tbody>
            {items.map((w) => (
              <tr data-testid="workload-row" data-name={w.name}>
                <td><Link to={`workloads/${encodeURIComponent(w.id)}`}>{w.name}</Link></td>
                <td>{w.kind}</td>
                <td><span class={`state ${w.state}`}>{w.state}</span></td>
                <td>{w.project}</td>
                <td>{w.queue}</td>
                <td>{when(w.submittedAt)}</td>
                <td class="reason">{w.pendingReason ? w.pendingReason.code : ''}</td>
              </tr>
            ))}
            {data && items.length === 0 && (
              <tr><td colSpan={7} class="empty">no workloads match</td></tr>
            )}
          </tbody>
        </table>
      </div>
      {data && <p class="muted">{items.length} shown of {data.total}</p>}
    </section>
  );
}
