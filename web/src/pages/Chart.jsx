// A time-ordered line chart (uPlot) of one value per period and group: periods on the x axis as
// labels (hour "2026-12-03T08:00:00Z", day "2026-12-03", week, month), one series per group.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563', '#65a30d', '#9333ea'];

// rows: [{period, group, value}]; draws into a responsive box. `tick` writes a period on the
// axis (the label itself by default); `testid` names the box for tests.
export function PeriodChart({ rows, label, title, tick = (p) => p, testid = 'usage-chart' }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const periods = [...new Set(rows.map((r) => r.period))].sort();
    const groups = [...new Set(rows.map((r) => r.group))].sort();
    const at = new Map(periods.map((p, i) => [p, i]));
    const series = groups.map((g) => {
      const ys = periods.map(() => null);
      for (const r of rows) if (r.group === g) ys[at.get(r.period)] = (ys[at.get(r.period)] || 0) + r.value;
      return ys;
    });
    const width = Math.max(280, el.clientWidth || 600);
    const plot = new uPlot(
      {
        title,
        width,
        height: 260,
        scales: { x: { time: false, range: [-0.5, Math.max(periods.length - 0.5, 0.5)] } },
        axes: [
          { values: (u, splits) => splits.map((i) => (Number.isInteger(i) && periods[i] ? tick(periods[i]) : '')), incrs: [1, 2, 3, 4, 6, 12] },
          { label },
        ],
        series: [
          { label: 'period', value: (u, i) => (i === null || i === undefined ? '' : periods[Math.round(i)] || '') },
          ...groups.map((g, i) => ({
            label: g || '(all)',
            stroke: COLORS[i % COLORS.length],
            width: 2,
            points: { show: true, size: 7 },
          })),
        ],
      },
      [periods.map((_, i) => i), ...series],
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth || 600), height: 260 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [JSON.stringify(rows), label, title]);
  return <div class="chart" ref={box} role="img" aria-label={`${title}: ${label} per period`} data-testid={testid} />;
}
