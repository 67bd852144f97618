// Usage and cost page: usage over time by tenant, project, flavor or queue with the report's
// window, a CSV download of the same report, utilization against allocation per flavor, and the
// idle (waste) table. Reports need an admin or unscoped viewer token.
import { useState } from 'preact/hooks';
import { get, request, query } from '../api.js';
import { usePoll } from '../poll.js';
import { PageHead, ErrorBox, Select, ReportTable } from './common.jsx';
import { PeriodChart } from './Chart.jsx';
import { columnLabel } from '../columns.js';

const BY = ['tenant', 'project', 'flavor', 'queue', 'kind', 'cluster', 'pool'];
const PERIODS = ['hour', 'day', 'week', 'month'];
const METRICS = [
  ['deviceHours', columnLabel('deviceHours')],
  ['cost', columnLabel('cost')],
  ['cpuCoreHours', columnLabel('cpuCoreHours')],
  ['memoryGiBHours', columnLabel('memoryGiBHours')],
];

const isoDay = (d) => d.toISOString().slice(0, 10);

export function Usage() {
  const today = new Date();
  const [f, setF] = useState({
    from: isoDay(new Date(today.getTime() - 29 * 86400e3)),
    to: isoDay(today),
    by: 'tenant',
    period: 'day',
    metric: 'deviceHours',
  });
  const set = (k) => (v) => setF({ ...f, [k]: v });
  const [downloadError, setDownloadError] = useState(null);
  // The window: from the start of `from` to the end of `to` (UTC days).
  const span = () => {
    const end = new Date(`${f.to}T00:00:00Z`);
    return { from: `${f.from}T00:00:00Z`, to: new Date(end.getTime() + 86400e3).toISOString() };
  };
  const params = (extra) => query({ ...span(), ...extra });
  const { data, error, at } = usePoll(async () => {
    const [usage, idle, evidence] = await Promise.all([
      get(`/api/v1/reports/usage${params({ by: `${f.by},${f.period}`, format: 'json' })}`),
      get(`/api/v1/reports/idle${params({ by: 'node,flavor', format: 'json' })}`),
      get(`/api/v1/reports/evidence${params({ format: 'json' })}`),
    ]);
    const section = (evidence.sections || []).find((s) => s.id === 'utilization');
    return { usage, idle, utilization: section && section.tables && section.tables[0], utilizationText: section && section.text };
  }, [f.from, f.to, f.by, f.period], 10000);
  const download = async () => {
    setDownloadError(null);
    try {
      const res = await request(`/api/v1/reports/usage${params({ by: `${f.by},${f.period}`, format: 'csv' })}`, { raw: true });
      const blob = new Blob([await res.text()], { type: 'text/csv' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `abacus-usage-${f.by}-${f.period}-${f.from}-${f.to}.csv`;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (e) {
      setDownloadError(e);
    }
  };
  const rows = data
    ? data.usage.rows.map((r) => ({ period: String(r.period), group: String(r[f.by] ?? ''), value: Number(r[f.metric]) || 0 }))
    : [];
  const metricLabel = data ? columnLabel(f.metric, data.usage.currency) : METRICS.find(([k]) => k === f.metric)[1];
  return (
    <section>
      <PageHead title="Usage and cost" at={at} error={error} />
      <form class="filters" aria-label="Report filters" onSubmit={(e) => e.preventDefault()}>
        <label class="field" for="u-from">
          <span>From</span>
          <input id="u-from" type="date" value={f.from} onChange={(e) => set('from')(e.currentTarget.value)} />
        </label>
        <label class="field" for="u-to">
          <span>To</span>
          <input id="u-to" type="date" value={f.to} onChange={(e) => set('to')(e.currentTarget.value)} />
        </label>
        <Select id="u-by" label="By" value={f.by} onChange={set('by')} options={BY} all={null} />
        <Select id="u-period" label="Period" value={f.period} onChange={set('period')} options={PERIODS} all={null} />
        <Select id="u-metric" label="Show" value={f.metric} onChange={set('metric')} options={METRICS} all={null} />
        <button type="button" onClick={download}>Download CSV</button>
      </form>
      <ErrorBox error={error || downloadError} />
      {data && (
        <>
          <section class="card" aria-label="Usage over time">
            <h2>{metricLabel} by {f.by} per {f.period}</h2>
            <PeriodChart rows={rows} label={metricLabel} title="" />
            <ReportTable report={data.usage} testid="usage-table" />
            {data.usage.notes && data.usage.notes.map((n) => <p class="muted">{n}</p>)}
          </section>
          <section class="card" aria-label="Utilization against allocation">
            <h2>Utilization against allocation</h2>
            {data.utilizationText && <p class="muted">{data.utilizationText}</p>}
            {data.utilization && <UtilBars table={data.utilization} />}
            <ReportTable report={data.utilization} testid="utilization-table" />
          </section>
          <section class="card" aria-label="Idle devices">
            <h2>Idle and waste</h2>
            <ReportTable report={data.idle} testid="idle-table" />
            {data.idle.notes && data.idle.notes.map((n) => <p class="muted">{n}</p>)}
          </section>
        </>
      )}
    </section>
  );
}

// Per flavor: allocation % of capacity next to mean measured utilization %.
function UtilBars({ table }) {
  const pct = (v) => Math.max(0, Math.min(100, Number(v) || 0));
  const utilKey = 'meanUtilizationPercent';
  const show = (v) => (v === null || v === undefined ? '–' : `${pct(v).toFixed(1)}%`);
  return (
    <div class="util">
      {table.rows.filter((r) => r.devices > 0).map((r) => (
        <div class="bars" role="group" aria-label={`utilization ${r.flavor}`}>
          <div class="resource">{r.flavor}</div>
          <div class="bar-line">
            <span class="bar-label">allocated</span>
            <span class="bar-track"><span class="bar used" style={{ width: `${pct(r.allocationPercent)}%` }} /></span>
            <span class="bar-value">{show(r.allocationPercent)}</span>
          </div>
          <div class="bar-line">
            <span class="bar-label">utilized</span>
            <span class="bar-track"><span class="bar nominal" style={{ width: `${pct(r[utilKey])}%` }} /></span>
            <span class="bar-value">{show(r[utilKey])}</span>
          </div>
        </div>
      ))}
    </div>
  );
}
