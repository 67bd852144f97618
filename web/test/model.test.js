// Unit tests of the dashboard's pure models (no browser): node --test web/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holders, deviceState, ledgerTree, stateCounts } from '../src/ledger.js';
import { queueRows, cohortTree, ledgerQuantity } from '../src/queues.js';

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

test('borrowed is use above nominal; lent spreads it over idle lendable quota in the cohort tree', () => {
  const cohorts = [{ name: 'root' }, { name: 'child', parent: 'root' }];
  const queues = [
    // borrows 3 above its nominal 4
    { name: 'borrower', cohort: 'child', quotas: [{ resource: A100, nominal: '4' }], usage: [{ resource: A100, nominal: 4000, used: 7000 }] },
    // idle 8, no lending limit
    { name: 'big', cohort: 'root', quotas: [{ resource: A100, nominal: '8' }], usage: [{ resource: A100, nominal: 8000, used: 0 }] },
    // idle 4 but lends at most 1
    { name: 'capped', cohort: 'root', quotas: [{ resource: A100, nominal: '4', lendingLimit: '1' }], usage: [{ resource: A100, nominal: 4000, used: 0 }] },
    // another cohort: lends nothing to these
    { name: 'other', cohort: 'elsewhere', quotas: [], usage: [{ resource: A100, nominal: 8000, used: 0 }] },
  ];
  const rows = Object.fromEntries(queueRows(queues, cohorts).map((q) => [q.queue.name, q.rows[0]]));
  assert.equal(rows.borrower.borrowed, 3000);
  assert.equal(rows.borrower.lent, 0);
  // lendable: big 8000, capped 1000 -> 3000 borrowed split 8:1
  assert.ok(Math.abs(rows.big.lent - (3000 * 8) / 9) < 1e-6);
  assert.ok(Math.abs(rows.capped.lent - (3000 * 1) / 9) < 1e-6);
  assert.equal(rows.other.lent, 0);
  assert.equal(rows.big.borrowed, 0);
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

test('quota quantities in ledger units', () => {
  assert.equal(ledgerQuantity('cpu', '128'), 128000);
  assert.equal(ledgerQuantity('cpu', '500m'), 500);
  assert.equal(ledgerQuantity('memory', '1Ti'), 2 ** 40);
  assert.equal(ledgerQuantity('memory', '2G'), 2e9);
  assert.equal(ledgerQuantity(A100, '8'), 8000);
  assert.equal(ledgerQuantity(A100, 'lots'), undefined);
});
