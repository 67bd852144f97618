// Unit tests of the dashboard's pure models (no browser): node --test web/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holders, deviceState, ledgerTree, stateCounts } from '../src/ledger.js';
import { queueRows, cohortTree, flowText } from '../src/queues.js';

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

test('holders come from admitted and running placements, not finished tasks', () => {
  const m = holders([
    { name: 'run', id: 'wl-1', state: 'Running', queue: 'q', placements: [{ node: 'n1', group: 0, replica: 0, devices: [{ index: 2, milli: 1000 }] }] },
    { name: 'done', id: 'wl-2', state: 'Succeeded', queue: 'q', placements: [{ node: 'n1', group: 0, replica: 0, devices: [{ index: 3, milli: 1000 }] }] },
    { name: 'exited', id: 'wl-3', state: 'Running', queue: 'q', placements: [{ node: 'n1', group: 0, replica: 1, phase: 'Exited', devices: [{ index: 4, milli: 1000 }] }] },
  ]);
  assert.deepEqual([...m.keys()], ['n1/2']);
  assert.equal(m.get('n1/2')[0].name, 'run');
  assert.equal(m.get('n1/2')[0].task, '0.0');
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
