// Unit tests of the dashboard's pure models (no browser): node --test web/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holders, deviceState, ledgerTree, stateCounts } from '../src/ledger.js';
import { queueRows, cohortTree, flowText } from '../src/queues.js';
import { nodeRows, hiddenWork, devicesByFlavor } from '../src/nodes.js';
import { columnLabel, cellText } from '../src/columns.js';
import { utilization } from '../src/format.js';
import { last24h, hourLabels, allocationRows } from '../src/allocation.js';

const A100 = 'gpu/nvidia/A100-80G';

test('device states: free, allocated, shared, unhealthy', () => {
  const node = { name: 'n1', state: 'Ready' };
  assert.equal(deviceState(node, { health: 'Healthy', allocatedMilli: 0 }, []), 'free');
  assert.equal(deviceState(node, { health: 'Healthy', allocatedMilli: 1000 }, [{ name: 'a' }]), 'allocated');
  assert.equal(deviceState(node, { health: 'Healthy', allocatedMilli: 500 }, [{ name: 'a' }]), 'shared');
  assert.equal(deviceState(node, { health: 'Healthy', allocatedMilli: 1000 }, [{ name: 'a' }, { name: 'b' }]), 'shared');
  assert.equal(deviceState(node, { health: 'Unhealthy', allocatedMilli: 1000 }, [{ name: 'a' }]), 'unhealthy');
  assert.equal(deviceState({ name: 'n2', state: 'NotReady' }, { health: 'Healthy' }, []), 'unhealthy');
});

test('holders are the server\'s device holders, with queue and task from the caller\'s workloads', () => {
  const nodes = [{ name: 'n1', devices: [
    { index: 2, holders: [{ workload: 'wl-1', name: 'run', milli: 1000 }], hiddenMilli: 0 },
    { index: 3, holders: [], hiddenMilli: 1000 },
  ] }];
  const m = holders(nodes, [
    { name: 'run', id: 'wl-1', state: 'Running', queue: 'q', placements: [{ node: 'n1', group: 0, replica: 1, devices: [{ index: 2, milli: 1000 }] }] },
  ]);
  assert.deepEqual([...m.keys()], ['n1/2']);
  assert.deepEqual(m.get('n1/2')[0], { name: 'run', id: 'wl-1', milli: 1000, queue: 'q', task: '0.1' });
  // A device held only by work the caller may not see: no holder, and shared with it counts as two.
  assert.equal(deviceState({ state: 'Ready' }, { health: 'Healthy', allocatedMilli: 1000, hiddenMilli: 1000 }, []), 'allocated');
  assert.equal(deviceState({ state: 'Ready' }, { health: 'Healthy', allocatedMilli: 1000, hiddenMilli: 500 }, [{ name: 'a' }]), 'shared');
});

test('nodes page: "another tenant" only when the server says hidden work holds the node', () => {
  const admin = { name: 'n1', allocatedCpuMilli: 4000, devices: [{ index: 0, allocatedMilli: 1000, holders: [{ workload: 'wl-1', name: 'a', milli: 1000 }], hiddenMilli: 0 }], hiddenCpuMilli: 0, hiddenMemoryBytes: 0 };
  // The caller's workload list need not hold the placement (an admin's demo): no inference.
  assert.equal(nodeRows([admin], [])[0].hidden, false);
  assert.deepEqual(nodeRows([admin], [])[0].holders, [{ name: 'a', id: 'wl-1' }]);
  const member = { ...admin, devices: [{ index: 0, allocatedMilli: 1000, holders: [], hiddenMilli: 1000 }] };
  assert.equal(nodeRows([member], [])[0].hidden, true);
  assert.equal(hiddenWork({ name: 'cpu', devices: [], hiddenCpuMilli: 2000 }), true);
  const [f] = devicesByFlavor({ devices: [{ flavor: A100, allocatedMilli: 1000, utilization: 0.5 }, { flavor: A100, utilization: 0.25 }] });
  assert.equal(f.count, 2);
  assert.equal(f.utilization, 0.375);
});

test('usage columns for people: headers with the currency, 2 decimals for hours and money, 1 for %', () => {
  assert.equal(columnLabel('deviceHours'), 'Device-hours');
  assert.equal(columnLabel('cost', 'EUR'), 'Cost (EUR)');
  assert.equal(columnLabel('idleCost', 'USD'), 'Idle cost (USD)');
  assert.equal(columnLabel('meanUtilizationPercent'), 'Mean utilization (%)');
  assert.equal(columnLabel('someNewColumn'), 'Some new column');
  assert.equal(cellText('deviceHours', 52), '52.00');
  assert.equal(cellText('cost', 131.956), '131.96');
  assert.equal(cellText('idlePercent', 12.345), '12.3');
  assert.equal(cellText('workloads', 3), '3');
  assert.equal(cellText('tenant', 'nlp'), 'nlp');
  assert.equal(utilization({ utilization: 0.756 }), '75.6%');
  assert.equal(utilization({}), 'not reported');
});

test('24 h allocation: 24 hour labels, every hour of every flavor, zero when idle', () => {
  const w = last24h(new Date('2026-03-01T10:20:00Z'));
  assert.equal(w.from, '2026-02-28T11:00:00Z');
  const hours = hourLabels(w.from);
  assert.equal(hours.length, 24);
  assert.equal(hours[23], '2026-03-01T10:00:00Z');
  const rows = allocationRows([
    { period: '2026-03-01T09:00:00Z', flavor: A100, deviceHours: 2 },
    { period: '2026-03-01T10:00:00Z', flavor: A100, deviceHours: 0.5 },
    { period: '2026-03-01T10:00:00Z', flavor: 'cpu', deviceHours: 0 }, // CPU-only work: no line
  ], hours);
  assert.equal(rows.length, 24);
  assert.deepEqual(rows.filter((r) => r.value > 0).map((r) => [r.period, r.value]), [['2026-03-01T09:00:00Z', 2], ['2026-03-01T10:00:00Z', 0.5]]);
});

test('ledger tree groups cluster -> pool -> node and filters by flavor', () => {
  const nodes = [
    { name: 'b', cluster: 'dc1', pool: 'p1', state: 'Ready', devices: [{ index: 0, flavor: A100, health: 'Healthy', allocatedMilli: 1000 }] },
    { name: 'a', cluster: 'dc1', pool: 'p1', state: 'Ready', simulated: true, devices: [{ index: 0, flavor: 'gpu/nvidia/T4', health: 'Healthy' }] },
    { name: 'cpu', cluster: 'dc1', pool: 'p2', state: 'Ready', devices: [] },
  ];
  const tree = ledgerTree(nodes, [], '');
  assert.equal(tree.length, 1);
  assert.deepEqual(tree[0].pools.map((p) => p.pool), ['p1']); // a node without devices is left out
  assert.deepEqual(tree[0].pools[0].nodes.map((n) => n.node.name), ['a', 'b']);
  assert.deepEqual(stateCounts(tree), { free: 1, allocated: 1, shared: 0, unhealthy: 0, simulated: 1 });
  const a100 = ledgerTree(nodes, [], A100);
  assert.deepEqual(a100[0].pools[0].nodes.map((n) => n.node.name), ['b']);
});

test('queue rows show the server\'s borrowed and lent with from and to whom', () => {
  const queues = [
    { name: 'qb', cohort: 'shared', usage: [{ resource: A100, nominal: 8000, used: 24000, borrowed: 16000, lent: 0, borrowedFrom: [{ queue: 'qc', amount: 16000 }], lentTo: [] }] },
    { name: 'qc', cohort: 'shared', usage: [{ resource: A100, nominal: 16000, used: 0, borrowed: 0, lent: 16000, borrowedFrom: [], lentTo: [{ queue: 'qb', amount: 16000 }] }] },
    { name: 'old', usage: [{ resource: A100, nominal: 1000, used: 0 }] }, // an older server: zeros, no flows
  ];
  const rows = Object.fromEntries(queueRows(queues).map((q) => [q.queue.name, q.rows[0]]));
  assert.equal(rows.qb.borrowed, 16000);
  assert.equal(rows.qc.lent, 16000);
  const human = (r, v) => String(v / 1000);
  assert.equal(flowText(A100, rows.qb.borrowedFrom, human), 'qc 16');
  assert.equal(flowText(A100, rows.qc.lentTo, human), 'qb 16');
  assert.equal(rows.old.borrowed, 0);
  assert.deepEqual(rows.old.lentTo, []);
});

test('cohort tree nests cohorts and lists their queues', () => {
  const tree = cohortTree(
    [{ name: 'research' }, { name: 'npu', parent: 'research' }],
    [{ name: 'q1', cohort: 'research' }, { name: 'q2', cohort: 'npu' }, { name: 'solo' }],
  );
  assert.equal(tree[0].name, 'research');
  assert.deepEqual(tree[0].queues, ['q1']);
  assert.equal(tree[0].children[0].name, 'npu');
  assert.deepEqual(tree[0].children[0].queues, ['q2']);
  assert.equal(tree[1].name, '(no cohort)');
  assert.deepEqual(tree[1].queues, ['solo']);
});
