import { columnLabel, cellText } from '../columns.js';

// Small pieces shared by the pages: title bar with the live-refresh stamp, error box, select.
export function PageHead({ title, at, error, children }) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      <div class="head-tools">{children}</div>
      <span class="live" aria-live="polite" title="the page refreshes itself every few seconds">
        {error ? 'refresh failed' : at ? `live · ${at.toLocaleTimeString()}` : 'loading…'}
      </span>
    </div>
  );
}

export function ErrorBox({ error }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message || String(error)}
    </p>
  );
}

// A labelled <select>; options are strings or [value, label] pairs; '' means all.
export function Select({ id, label, value, onChange, options, all = 'all' }) {
  return (
    <label class="field" for={id}>
      <span>{label}</span>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {all !== null && <option value="">{all}</option>}
        {options.map((o) => {
          const [v, l] = Array.isArray(o) ? o : [o, o];
          return <option value={v}>{l}</option>;
        })}
      </select>
    </label>
  );
}

// A table of a report ({columns, rows, currency}); headers for people and numbers with sensible
// decimals (columns.js), right-aligned; a cost column names the report's currency.
export function ReportTable({ report, caption, testid }) {
  if (!report) return null;
  return (
    <div class="table-wrap">
      <table data-testid={testid}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>{report.columns.map((c) => <th scope="col" data-column={c}>{columnLabel(c, report.currency)}</th>)}</tr>
        </thead>
        <tbody>
          {report.rows.map((r) => (
            <tr>{report.columns.map((c) => <td class={typeof r[c] === 'number' ? 'num' : ''}>{cellText(c, r[c])}</td>)}</tr>
          ))}
          {report.rows.length === 0 && (
            <tr>
              <td colSpan={report.columns.length} class="empty">no rows in this window</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
