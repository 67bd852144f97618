// Report columns for people: the header a column gets on the page and how its numbers are
// written (2 decimals for hours and money, 1 for percentages, counts as they are). The report's
// JSON keeps its machine names (docs/api.md); the CSV download is the server's, unchanged.

const WORDS = {
  period: 'Period',
  tenant: 'Tenant',
  project: 'Project',
  queue: 'Queue',
  flavor: 'Flavor',
  cluster: 'Cluster',
  pool: 'Pool',
  kind: 'Kind',
  node: 'Node',
  workload: 'Workload',
  workloads: 'Workloads',
  devices: 'Devices',
  nodes: 'Nodes',
  deviceHours: 'Device-hours',
  cpuCoreHours: 'Core-hours',
  memoryGiBHours: 'GiB-hours',
  deviceCost: 'Device cost',
  cpuCost: 'CPU cost',
  memoryCost: 'Memory cost',
  cost: 'Cost',
  idleCost: 'Idle cost',
  allocatedDeviceHours: 'Allocated device-hours',
  measuredDeviceHours: 'Measured device-hours',
  idleDeviceHours: 'Idle device-hours',
  reportedDeviceHours: 'Reported device-hours',
  downDeviceHours: 'Down device-hours',
  drainedDeviceHours: 'Drained device-hours',
  capacityDeviceHours: 'Capacity device-hours',
  meanUtilizationPercent: 'Mean utilization (%)',
  allocationPercent: 'Allocation (%)',
  allocatedPercent: 'Allocated (%)',
  idlePercent: 'Idle (%)',
  downPercent: 'Down (%)',
  drainedPercent: 'Drained (%)',
};

// The kind of a column: 'money', 'hours', 'percent' or '' (anything else).
export function columnKind(name) {
  if (/[cC]ost$/.test(name)) return 'money';
  if (/Hours$/.test(name)) return 'hours';
  if (/Percent$/.test(name)) return 'percent';
  return '';
}

// "deviceHours" -> "Device-hours", "cost" with currency "USD" -> "Cost (USD)"; an unknown
// camelCase name is split into words.
export function columnLabel(name, currency) {
  let label = WORDS[name];
  if (!label) {
    const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
    label = words.charAt(0).toUpperCase() + words.slice(1);
  }
  if (columnKind(name) === 'money' && currency) label += ` (${currency})`;
  return label;
}

// A cell as the page writes it: hours and money with 2 decimals, percentages with 1.
export function cellText(name, value) {
  if (value === null || value === undefined || value === '') return '';
  const digits = { money: 2, hours: 2, percent: 1 }[columnKind(name)];
  if (digits === undefined || typeof value !== 'number') return String(value);
  return value.toFixed(digits);
}
