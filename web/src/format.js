// Number and time formatting shared by the pages. Ledger units: millicores, bytes, milli-devices.

// "gpu/nvidia/A100-80G" -> device resource; cpu and memory are not.
export const isDevice = (resource) => resource !== 'cpu' && resource !== 'memory';

// A ledger quantity in the unit people read: devices, cores or GiB.
export function human(resource, value) {
  if (value === undefined || value === null) return '–';
  if (resource === 'memory') return `${round(value / 2 ** 30)} GiB`;
  if (resource === 'cpu') return `${round(value / 1000)} cores`;
  return `${round(value / 1000)}`;
}

export function round(x, digits = 2) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

// Seconds as "3d 4h", "5m 10s", "42s".
export function duration(seconds) {
  if (seconds === undefined || seconds === null || !isFinite(seconds)) return '–';
  let s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s}s`;
  return `${s}s`;
}

// An ISO time as local "YYYY-MM-DD HH:MM:SS".
export function when(iso) {
  if (!iso) return '–';
  const t = new Date(iso);
  if (isNaN(t)) return iso;
  const p = (n) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())} ${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
}

// The short name of a flavor: "gpu/nvidia/A100-80G" -> "A100-80G".
export const shortFlavor = (f) => (f || '').split('/').pop();

// A device's measured utilization as its agent last reported it (0..1 on GET /api/v1/nodes) in
// percent with one decimal; "not reported" for simulated devices and agents that sent none.
export function utilization(device) {
  const u = device && device.utilization;
  if (u === undefined || u === null || !isFinite(u)) return 'not reported';
  return `${(100 * u).toFixed(1)}%`;
}

// A number with exactly `digits` decimals ("12.50"), "–" when it is not a number.
export function fixed(x, digits = 2) {
  const n = Number(x);
  return x === '' || x === null || x === undefined || !isFinite(n) ? '–' : n.toFixed(digits);
}
