// The overview's 24 h allocation chart: the usage report by flavor and hour
// (GET /api/v1/reports/usage?by=flavor,hour) over the last 24 hours, as allocated device-hours per
// hour per flavor — an hour's value is the mean number of devices held during it.

const HOUR = 3600e3;

// The report window: from the start of the hour 23 hours before `now` to `now` (24 hours on the
// chart, the last one still running). Returns {from, to} as RFC 3339 strings.
export function last24h(now = new Date()) {
  const start = Math.floor(now.getTime() / HOUR) * HOUR - 23 * HOUR;
  return { from: new Date(start).toISOString().replace('.000Z', 'Z'), to: now.toISOString() };
}

// The 24 hour labels the server uses for that window ("2026-03-01T08:00:00Z"), oldest first.
export function hourLabels(from) {
  const start = Date.parse(from);
  return Array.from({ length: 24 }, (_, i) => new Date(start + i * HOUR).toISOString().replace('.000Z', 'Z'));
}

// Chart rows [{period, group, value}] from the report's rows: one per hour and flavor that has
// device-hours (CPU-only work has none), every hour of `periods` present for every flavor (0
// when nothing was allocated), so the lines do not skip idle hours.
export function allocationRows(reportRows, periods) {
  const flavors = [...new Set((reportRows || []).filter((r) => Number(r.deviceHours) > 0).map((r) => r.flavor))].sort();
  const value = new Map();
  for (const r of reportRows || []) value.set(`${r.period}\u0000${r.flavor}`, (value.get(`${r.period}\u0000${r.flavor}`) || 0) + (Number(r.deviceHours) || 0));
  const rows = [];
  for (const f of flavors) for (const p of periods) rows.push({ period: p, group: f, value: value.get(`${p}\u0000${f}`) || 0 });
  return rows;
}

// "2026-03-01T08:00:00Z" -> "08:00" in the browser's time zone.
export function hourTick(label) {
  const t = new Date(label);
  return isNaN(t) ? label : `${String(t.getHours()).padStart(2, '0')}:00`;
}
