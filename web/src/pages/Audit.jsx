// Audit page: the hash-chained log, searchable, newest first, and the chain's verification
// status. Admins see everything, tenant admins their tenant's entries (the server filters).
import { useState } from 'preact/hooks';
import { get, getLines, query } from '../api.js';
import { usePoll } from '../poll.js';
import { when } from '../format.js';
import { PageHead, ErrorBox, Select } from './common.jsx';

const WINDOWS = [
  ['1h', 'last hour'],
  ['24h', 'last day'],
  ['168h', 'last week'],
  ['720h', 'last 30 days'],
];

// What an entry changed: "before → after".
const change = (e) => [e.before, e.after].filter(Boolean).join(' → ');
const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function Audit() {
  const [since, setSince] = useState('24h');
  const [text, setText] = useState('');
  const { data, error, at } = usePoll(async () => {
    const [entries, verify] = await Promise.all([
      getLines(`/api/v1/audit${query({ since })}`),
      get('/api/v1/audit?verify=1').catch((e) => ({ unavailable: e.message })),
    ]);
    return { entries, verify };
  }, [since], 5000);
  const needle = text.trim().toLowerCase();
  const entries = (data ? data.entries : [])
    .filter((e) => !needle || JSON.stringify(e).toLowerCase().includes(needle))
    .slice()
    .reverse();
  const v = data && data.verify;
  return (
    <section>
      <PageHead title="Audit" at={at} error={error} />
      {v && (
        <p class={`chain ${v.unavailable ? 'unknown' : v.ok ? 'ok' : 'bad'}`} role="status" data-testid="chain-status">
          {v.unavailable
            ? `Chain verification: ${v.unavailable}`
            : v.ok
              ? `Chain verified: ${v.entries} entries, intact.`
              : `Chain broken at entry ${v.firstBadSeq}: ${v.reason}`}
        </p>
      )}
      <form class="filters" role="search" aria-label="Search the audit log" onSubmit={(e) => e.preventDefault()}>
        <label class="field" for="a-text">
          <span>Search</span>
          <input id="a-text" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="actor, action, object, result…" />
        </label>
        <Select id="a-since" label="Window" value={since} onChange={setSince} options={WINDOWS} all={null} />
      </form>
      <ErrorBox error={error} />
      <div class="table-wrap">
        <table data-testid="audit">
          <thead>
            <tr>
              <th scope="col">seq</th><th scope="col">time</th><th scope="col">actor</th><th scope="col">action</th>
              <th scope="col">object</th><th scope="col">tenant</th><th scope="col">result</th><th scope="col">change</th>
            </tr>
          </thead>
          <tbody>
            {entries.slice(0, 1000).map((e) => (
              <tr>
                <td class="num">{e.seq}</td>
                <td>{when(e.time)}</td>
                <td>{e.actor}</td>
                <td>{e.action}</td>
                <td>{e.object ? `${e.object.kind} ${e.object.name}` : ''}</td>
                <td>{e.tenant}</td>
                <td class={`result${e.result === 'ok' ? '' : ' bad'}`} data-testid="audit-result">{e.result}{e.reason ? `: ${e.reason}` : ''}</td>
                <td class="change" title={change(e)}>{clip(change(e), 160)}</td>
              </tr>
            ))}
            {data && entries.length === 0 && <tr><td colSpan={8} class="empty">no entries</td></tr>}
          </tbody>
        </table>
      </div>
      {data && <p class="muted">{entries.length} of {data.entries.length} entries{entries.length > 1000 ? ' (first 1000 shown)' : ''}</p>}
    </section>
  );
}
