// The queue page's model: per queue and resource, nominal, used, borrowed (from whom) and lent
// (to whom) as the server computes them (GET /api/v1/queues, usage[].borrowed, borrowedFrom,
// lent, lentTo: the rule of the borrowing report at this instant, docs/api.md); the cohort tree.

// Returns [{queue, rows: [{resource, nominal, used, borrowed, lent, borrowedFrom, lentTo,
// borrowingLimit}]}]; borrowedFrom/lentTo are [{queue, amount}] in ledger units.
export function queueRows(queues) {
  return (queues || []).map((q) => ({
    queue: q,
    rows: (q.usage || []).map((u) => ({
      resource: u.resource,
      nominal: u.nominal || 0,
      used: u.used || 0,
      borrowed: u.borrowed || 0,
      lent: u.lent || 0,
      borrowedFrom: u.borrowedFrom || [],
      lentTo: u.lentTo || [],
      borrowingLimit: u.borrowingLimit,
    })),
  }));
}

// "qc 16, (cohort) 2": who a row's flows go to or come from, in the resource's unit.
export function flowText(resource, flows, human) {
  return (flows || []).map((f) => `${f.queue} ${human(resource, f.amount)}`).join(', ');
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
