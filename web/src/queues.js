// The queue page's model: per queue and resource, nominal, used, borrowed (use above nominal)
// and lent (what queues of the same cohort tree borrow, spread over the lenders' idle lendable
// quota in proportion to it — the rule of the borrowing report, docs/metering.md); the cohort tree.

// The root cohort of `name` (cohorts may nest).
function rootOf(name, cohorts) {
  const parent = new Map((cohorts || []).map((c) => [c.name, c.parent || '']));
  let cur = name;
  for (let i = 0; i < 64 && parent.get(cur); i++) cur = parent.get(cur);
  return cur;
}

// Lendable idle quota: nominal - used, at most the lending limit when there is one.
function lendable(u, lendingLimitMilli) {
  const idle = Math.max(0, (u.nominal || 0) - (u.used || 0));
  return lendingLimitMilli === undefined ? idle : Math.min(idle, lendingLimitMilli);
}

const BINARY = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
const DECIMAL = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };

// A quota quantity in the ledger's unit: millicores for cpu ("8", "500m"), bytes for memory
// ("1Ti", "512Gi", "1G"), milli-devices for accelerators ("8"); undefined when unreadable.
export function ledgerQuantity(resource, q) {
  const m = /^([0-9]+(?:\.[0-9]+)?)([a-zA-Z]*)$/.exec(String(q ?? '').trim());
  if (!m) return undefined;
  const x = Number(m[1]);
  const unit = m[2];
  if (resource === 'memory') {
    if (unit === '') return x;
    const f = BINARY[unit] || DECIMAL[unit];
    return f ? x * f : undefined;
  }
  if (unit === 'm') return x;
  return unit === '' ? x * 1000 : undefined;
}

// Returns [{queue, rows: [{resource, nominal, used, borrowed, lent, borrowingLimit}]}].
export function queueRows(queues, cohorts) {
  const items = queues || [];
  // Per root cohort and resource: total borrowed and each queue's lendable idle quota.
  const borrowedTotal = new Map();
  const lendableOf = new Map();
  const lendableTotal = new Map();
  for (const q of items) {
    const root = q.cohort ? rootOf(q.cohort, cohorts) : `queue:${q.name}`;
    for (const u of q.usage || []) {
      const key = `${root}|${u.resource}`;
      const borrowed = Math.max(0, (u.used || 0) - (u.nominal || 0));
      borrowedTotal.set(key, (borrowedTotal.get(key) || 0) + borrowed);
      const quota = (q.quotas || []).find((x) => x.resource === u.resource);
      const limit = quota && quota.lendingLimit !== undefined ? ledgerQuantity(u.resource, quota.lendingLimit) : undefined;
      const l = lendable(u, limit);
      lendableOf.set(`${q.name}|${u.resource}`, l);
      lendableTotal.set(key, (lendableTotal.get(key) || 0) + l);
    }
  }
  return items.map((q) => {
    const root = q.cohort ? rootOf(q.cohort, cohorts) : `queue:${q.name}`;
    const rows = (q.usage || []).map((u) => {
      const key = `${root}|${u.resource}`;
      const borrowed = Math.max(0, (u.used || 0) - (u.nominal || 0));
      // What others borrow: the cohort's borrowing minus this queue's own.
      const others = (borrowedTotal.get(key) || 0) - borrowed;
      const total = lendableTotal.get(key) || 0;
      const mine = lendableOf.get(`${q.name}|${u.resource}`) || 0;
      const lent = total > 0 && others > 0 ? Math.min(mine, (others * mine) / total) : 0;
      return { resource: u.resource, nominal: u.nominal || 0, used: u.used || 0, borrowed, lent, borrowingLimit: u.borrowingLimit };
    });
    return { queue: q, rows };
  });
}

// The cohort tree: [{name, description, queues: [names], children: [...]}], roots first; queues
// without a cohort come as a root named "(no cohort)".
export function cohortTree(cohorts, queues) {
  const nodes = new Map((cohorts || []).map((c) => [c.name, { name: c.name, description: c.description || '', queues: [], children: [] }]));
  const roots = [];
  for (const c of cohorts || []) {
    const n = nodes.get(c.name);
    if (c.parent && nodes.has(c.parent)) nodes.get(c.parent).children.push(n);
    else roots.push(n);
  }
  const loose = { name: '(no cohort)', description: '', queues: [], children: [] };
  for (const q of queues || []) {
    if (q.cohort && nodes.has(q.cohort)) nodes.get(q.cohort).queues.push(q.name);
    else loose.queues.push(q.name);
  }
  if (loose.queues.length) roots.push(loose);
  return roots;
}
