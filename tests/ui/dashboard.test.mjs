// The dashboard in a real browser (issue 10): a real `abacus up --demo` on a free 127.0.0.1
// port with its own data folder, driven by playwright-core with Debian's chromium (no browser
// download). It logs in, reads the ledger heatmap, opens a pending workload and reads its
// reason, watches a queue's borrowed bar change after a submission, downloads a CSV and looks
// at the audit page; screenshots of every page (1280x800, and the ledger on a narrow screen) go
// to --out. Exit 0: passed; 77: skipped (no chromium or playwright-core); else failed.
//
//   node tests/ui/dashboard.test.mjs --abacus build/release/abacus --out build/release/ui-test
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []),
);
const ABACUS = resolve(args.abacus || join(ROOT, 'build/release/abacus'));
const OUT = resolve(args.out || join(ROOT, 'build/ui-test'));
const CHROMIUM = process.env.ABACUS_CHROMIUM || '/usr/bin/chromium';
const SKIP = 77;

function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(SKIP);
}

let chromium;
try {
  chromium = createRequire(join(ROOT, 'web', 'package.json'))('playwright-core').chromium;
} catch (e) {
  skip(`playwright-core is not installed in web/node_modules (run \`make build\`, which runs npm ci): ${e.message}`);
}
if (!existsSync(CHROMIUM)) skip(`no chromium at ${CHROMIUM} (scripts/install-deps.sh installs Debian's chromium)`);
if (!existsSync(ABACUS)) {
  console.error(`FAIL: no abacus binary at ${ABACUS}`);
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let step = 'start';
function check(cond, message) {
  if (!cond) throw new Error(`${step}: ${message}`);
}
// Polls fn until it returns a truthy value; throws with `message` after `ms`.
async function waitFor(fn, message, ms = 20000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`${step}: timed out waiting for ${message}${last ? ` (${last.message})` : ''}`);
    await sleep(200);
  }
}

// ---- the server: abacus up --demo on a free port, its own data folder and HOME
const home = mkdtempSync(join(tmpdir(), 'abacus-ui-'));
const data = join(home, 'data');
mkdirSync(OUT, { recursive: true });
const server = spawn(ABACUS, ['up', '--demo', '--data', data, '--listen', '127.0.0.1:0', '--no-config'], {
  env: { ...process.env, HOME: home, ABACUS_EXAMPLES: join(ROOT, 'examples') },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let serverLog = '';
server.stderr.on('data', (d) => {
  serverLog = (serverLog + d).slice(-8000);
});
let browser;
async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  if (server.exitCode === null) {
    server.kill('SIGINT');
    await Promise.race([new Promise((r) => server.once('exit', r)), sleep(15000)]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  rmSync(home, { recursive: true, force: true });
}

let url;
let token;
async function api(path, init = {}) {
  const res = await fetch(url + path, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers || {}) } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method || 'GET'} ${path}: ${res.status} ${text}`);
  return text && (res.headers.get('content-type') || '').includes('json') ? JSON.parse(text) : text;
}

async function shot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
}

async function main() {
  const t0 = Date.now();
  step = 'server start';
  await waitFor(() => existsSync(join(data, 'server.url')), 'DATA/server.url', 30000);
  url = readFileSync(join(data, 'server.url'), 'utf8').trim();
  token = readFileSync(join(data, 'admin.token'), 'utf8').trim();
  // The demo is in once its pending workloads have reasons.
  await waitFor(async () => {
    const w = await api('/api/v1/workloads?state=Pending');
    return w.items.some((x) => x.name === 'pangu-pretrain' && x.pendingReason);
  }, 'the demo workloads', 30000);

  step = 'serving';
  const index = await fetch(`${url}/ui/`);
  check(index.status === 200, `GET /ui/ without a token: ${index.status}`);
  check((index.headers.get('content-type') || '').startsWith('text/html'), 'index.html content type');
  const html = await index.text();
  const asset = html.match(/\/ui\/assets\/[^"]+\.js/);
  check(asset, 'index.html names a hashed script (is web/dist built into the binary?)');
  const js = await fetch(url + asset[0]);
  check(js.status === 200 && /javascript/.test(js.headers.get('content-type')), 'the script is served as JavaScript');
  check(/immutable/.test(js.headers.get('cache-control') || ''), 'hashed assets are cacheable for good');
  const deep = await fetch(`${url}/ui/workloads/anything`);
  check(deep.status === 200 && (await deep.text()) === html, 'SPA fallback: /ui/workloads/anything is index.html');
  check((await fetch(`${url}/api/v1/nodes`)).status === 401, 'the API still needs the token');
  // A security team's first look: the page runs only its own scripts and is never framed.
  const csp = index.headers.get('content-security-policy') || '';
  check(/script-src 'self'/.test(csp) && /frame-ancestors 'none'/.test(csp), `Content-Security-Policy: ${csp}`);
  check(index.headers.get('x-frame-options') === 'DENY', `X-Frame-Options: ${index.headers.get('x-frame-options')}`);

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // Whatever the policy refuses shows as a console message: the dashboard must need nothing it refuses.
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) pageErrors.push(m.text());
  });

  // ---- log in: a wrong token is refused, the admin token lets us in
  step = 'login';
  await page.goto(`${url}/ui/`);
  await page.getByLabel('API token').fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  await shot(page, 'login');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  check(await page.evaluate(() => sessionStorage.getItem('abacus.token')) === token, 'the token is kept in session storage');

  // ---- overview: device totals per flavor, cluster and pool add up to the inventory; waits; counts
  step = 'overview';
  const devicesAll = (await api('/api/v1/devices')).items;
  await page.getByTestId('flavor-totals').waitFor();
  await waitFor(async () => {
    const cells = await page.locator('[data-testid=flavor-totals] tbody tr td:nth-child(4)').allTextContents();
    return cells.reduce((s, c) => s + Number(c), 0) === devicesAll.length;
  }, `overview device totals adding up to ${devicesAll.length}`);
  const pendingNow = (await api('/api/v1/workloads?state=Pending')).total;
  check(Number(await page.getByTestId('count-pending').textContent()) === pendingNow, `pending count ${pendingNow}`);
  check((await page.locator('[data-testid=longest-waits] tbody tr').allTextContents()).some((r) => r.includes('pangu-pretrain')),
    'the longest waits name the oldest pending workload');
  // The 24 h allocation chart: the usage report by flavor and hour, one line per flavor holding devices.
  const hourly = await api(`/api/v1/reports/usage?by=flavor,hour&format=json&from=24h`);
  check(hourly.rows.length > 0 && /^\d{4}-\d\d-\d\dT\d\d:00:00Z$/.test(hourly.rows[0].period), `hourly usage rows: ${JSON.stringify(hourly.rows[0])}`);
  await page.locator('[data-testid=allocation-chart] canvas').waitFor();
  const flavorsHeld = [...new Set(hourly.rows.filter((r) => r.deviceHours > 0).map((r) => r.flavor))];
  // The page polls the report every 3 s: a workload admitted after its last poll (the demo's NPU
  // job, say) gets its line at the next one.
  await waitFor(async () => {
    const lines = await page.locator('[data-testid=allocation-chart] .u-legend .u-series').allTextContents();
    return flavorsHeld.every((f) => lines.some((l) => l.includes(f)));
  }, `the allocation chart to have a line for each of ${flavorsHeld.join(', ')}`);
  await shot(page, 'overview');
  await page.getByRole('link', { name: 'Ledger' }).click();

  // ---- ledger: one cell per device of the demo, holders on hover and click, flavor filter
  step = 'ledger';
  const devices = (await api('/api/v1/devices')).items;
  await waitFor(async () => (await page.locator('[data-testid=device]').count()) === devices.length, `${devices.length} device cells`);
  const llama = await api('/api/v1/workloads/llama-ft');
  const held = llama.placements[0];
  const cell = page.locator(`[data-testid=device][data-node="${held.node}"][data-index="${held.devices[0].index}"]`);
  check((await cell.getAttribute('data-state')) === 'allocated', `${held.node}/${held.devices[0].index} is allocated`);
  check((await cell.getAttribute('title')).includes('llama-ft'), 'hover title names the holder');
  // The admin sees every holder: no device says "another tenant" (the server's hiddenMilli is 0).
  check(await page.locator('[data-testid=device][title*="another tenant"]').count() === 0, 'the admin sees no hidden work in the ledger');
  await cell.click();
  await page.getByTestId('device-panel').getByText('llama-ft').waitFor();
  const counts = {};
  for (const s of ['free', 'allocated', 'shared', 'unhealthy']) counts[s] = Number(await page.getByTestId(`count-${s}`).textContent());
  check(counts.free > 0 && counts.allocated > 0, `free and allocated devices in the demo: ${JSON.stringify(counts)}`);
  check(counts.free + counts.allocated + counts.shared + counts.unhealthy === devices.length, `the state counts add up to ${devices.length}`);
  check(Number(await page.getByTestId('count-simulated').textContent()) > 0, 'simulated devices are marked');
  // The demo's nodes are in cluster dc1, which examples/org.yaml declares with its location.
  const where = await page.getByTestId('cluster-where-dc1').textContent();
  check(where.includes('cn-hangzhou-b') && where.includes('idc-hz-1'), `cluster dc1 shows where it is: ${where}`);
  // Each row says its flavor; each pool its per-flavor totals.
  check((await page.getByTestId('row-flavor').first().textContent()).length > 0, 'rows are labelled with their flavor');
  check(await page.locator('[data-testid^=totals-dc1-] [data-flavor]').count() > 0, 'per-flavor totals per pool');
  await shot(page, 'ledger');
  const t4 = devices.filter((d) => d.flavor === 'gpu/nvidia/T4').length;
  await page.getByLabel('Flavor').selectOption('gpu/nvidia/T4');
  await waitFor(async () => (await page.locator('[data-testid=device]').count()) === t4, `${t4} T4 cells after filtering`);
  await page.getByLabel('Flavor').selectOption('');

  // ---- nodes: every node (CPU-only ones too); cordon, uncordon and drain, each confirmed
  step = 'nodes';
  const nodes = (await api('/api/v1/nodes')).items;
  await page.getByRole('link', { name: 'Nodes' }).click();
  await waitFor(async () => (await page.getByTestId('node-row').count()) === nodes.length, `${nodes.length} node rows`);
  const cpuOnly = nodes.find((n) => (n.devices || []).length === 0);
  check(cpuOnly, 'the demo has a CPU-only node');
  check((await page.getByTestId(`node-devices-${cpuOnly.name}`).textContent()).includes('CPU only'), `${cpuOnly.name} is listed as CPU only`);
  check((await page.getByTestId(`node-holders-${held.node}`).textContent()).includes('llama-ft'), `${held.node} names llama-ft as a holder`);
  // Who holds a device is the server's (holders, hiddenMilli); the admin may see everything, so no
  // node says "work of another tenant".
  const heldDevice = nodes.find((n) => n.name === held.node).devices.find((d) => d.index === held.devices[0].index);
  check(heldDevice.holders.some((h) => h.workload === llama.id && h.name === 'llama-ft') && heldDevice.hiddenMilli === 0,
    `GET /api/v1/nodes names llama-ft on its device: ${JSON.stringify(heldDevice)}`);
  const nodeTexts = await page.locator('[data-testid^=node-holders-]').allTextContents();
  check(!nodeTexts.some((t) => t.includes('another tenant')), `the admin sees no work of another tenant: ${nodeTexts.join(' | ')}`);
  // Measured utilization: what the agents reported (GET /api/v1/nodes devices[].utilization), or "not reported".
  for (const n of nodes.filter((x) => (x.devices || []).length)) {
    const text = await page.getByTestId(`node-utilization-${n.name}`).textContent();
    let reported = n.devices.filter((d) => typeof d.utilization === 'number');
    if (reported.length === 0 && !text.includes('not reported')) {
      // The agent's first sample landed after the list above was read: the page shows newer data.
      const now = (await api('/api/v1/nodes')).items.find((x) => x.name === n.name);
      reported = now.devices.filter((d) => typeof d.utilization === 'number');
    }
    if (reported.length === 0) check(text.includes('not reported'), `${n.name}: utilization not reported (${text})`);
    for (const d of reported) check(text.includes(`#${d.index} ${(100 * d.utilization).toFixed(1)}%`), `${n.name} device ${d.index} utilization in ${text}`);
  }
  await shot(page, 'nodes');
  await page.getByTestId(`cordon-${cpuOnly.name}`).click();
  await page.getByRole('dialog').waitFor();
  await shot(page, 'nodes-confirm');
  await page.getByRole('button', { name: 'Confirm cordon' }).click();
  await waitFor(async () => (await api(`/api/v1/nodes/${cpuOnly.name}`)).schedulingState === 'Cordoned', `${cpuOnly.name} cordoned`);
  await waitFor(async () => (await page.getByTestId(`node-state-${cpuOnly.name}`).textContent()).startsWith('Cordoned'), 'the page shows the cordon');
  await page.getByTestId(`uncordon-${cpuOnly.name}`).click();
  await page.getByRole('button', { name: 'Confirm uncordon' }).click();
  await waitFor(async () => (await api(`/api/v1/nodes/${cpuOnly.name}`)).schedulingState === 'Ready', `${cpuOnly.name} uncordoned`);
  const spare = nodes.find((n) => n.name !== cpuOnly.name && (n.devices || []).length > 0 && !(n.devices || []).some((d) => d.allocatedMilli > 0));
  if (spare) {
    await page.getByTestId(`drain-${spare.name}`).click();
    await page.getByLabel('Grace (e.g. 10m, 0)').fill('0');
    await page.getByRole('button', { name: 'Confirm drain' }).click();
    await waitFor(async () => ['Draining', 'Drained'].includes((await api(`/api/v1/nodes/${spare.name}`)).schedulingState), `${spare.name} drained`);
    await api(`/api/v1/nodes/${spare.name}/uncordon`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
  }

  // ---- workloads: filter to Pending, open pangu-pretrain, read its reason in plain words
  step = 'workloads';
  await page.getByRole('link', { name: 'Workloads' }).click();
  await page.getByLabel('State').selectOption('Pending');
  await waitFor(async () => {
    const states = await page.locator('[data-testid=workload-row] .state').allTextContents();
    return states.length > 0 && states.every((s) => s === 'Pending');
  }, 'only pending rows');
  await shot(page, 'workloads');
  await page.locator('[data-testid=workload-row][data-name="pangu-pretrain"] a').click();
  const explain = await api('/api/v1/workloads/pangu-pretrain/explain');
  await page.getByTestId('explain-message').waitFor();
  check((await page.getByTestId('explain-message').textContent()) === explain.reason.message, 'the explain message is the server\'s');
  // pangu-pretrain asks 32 NPUs of a queue that can never hold more than 16: NeverFits (issue 20.13).
  check(explain.reason.code === 'NeverFits', 'pangu-pretrain never fits');
  check((await page.getByTestId('explain-plain').textContent()).startsWith('It can never run as asked'), 'the reason in plain words');
  check((await page.getByTestId('workload-state').textContent()) === 'Pending', 'state Pending');
  check((await page.locator('[data-testid=events] li').count()) >= 1, 'events timeline');
  // A workload that never ran a task: no request for logs (it would be a 404).
  check(await page.getByTestId('no-logs').count() === 1, 'no logs asked of a workload that ran no task');
  await shot(page, 'workload-pending');

  // ---- actions on a workload: hold, release, scale, cancel — each confirmed, each checked through the API
  step = 'workload actions';
  const mk = (name, extra = '') => ['kind: BatchJob', `name: ${name}`, 'project: nlp/llm', 'queue: nlp-dev', 'spec:', '  command: ["sleep", "600"]',
    '  tasks: 4', '  parallelism: 1', '  taskGroups:', '    - name: main', '      resources: {cpu: 1, memory: 1Gi}', extra].join('\n');
  await api('/api/v1/workloads', { method: 'POST', body: mk('ui-act'), headers: { 'Content-Type': 'application/yaml' } });
  const act = await api('/api/v1/workloads/ui-act');
  await page.goto(`${url}/ui/workloads/${act.id}`);
  await page.getByTestId('action-cancel').waitFor();
  await page.getByTestId('action-scale').click();
  await page.getByLabel('Replicas').fill('2');
  await page.getByRole('button', { name: 'Confirm scale' }).click();
  await waitFor(async () => (await api(`/api/v1/workloads/${act.id}/events`)).items.some((e) => /Scale/.test(e.type)), 'ui-act scaled');
  await page.getByTestId('action-cancel').click();
  await page.getByRole('button', { name: 'Confirm cancel' }).click();
  await waitFor(async () => (await api(`/api/v1/workloads/${act.id}`)).state === 'Cancelled', 'ui-act cancelled');
  await waitFor(async () => (await page.getByTestId('workload-state').textContent()) === 'Cancelled', 'the page shows Cancelled');
  // Hold and release on a waiting workload (one that can never fit waits forever).
  await api('/api/v1/workloads', { method: 'POST', body: mk('ui-hold').replace('cpu: 1,', 'cpu: 100000,'), headers: { 'Content-Type': 'application/yaml' } });
  const hw = await api('/api/v1/workloads/ui-hold');
  await page.goto(`${url}/ui/workloads/${hw.id}`);
  await page.getByTestId('action-hold').click();
  await shot(page, 'workload-confirm');
  await page.getByRole('button', { name: 'Confirm hold' }).click();
  await waitFor(async () => (await api(`/api/v1/workloads/${hw.id}`)).hold === 'Held', 'ui-hold held');
  await page.getByTestId('action-release').click();
  await page.getByRole('button', { name: 'Confirm release' }).click();
  await waitFor(async () => !(await api(`/api/v1/workloads/${hw.id}`)).hold, 'ui-hold released');
  // Approve and Reject an Experiment's temporary quota: 2 A100 is above nlp's auto-approve limit
  // (examples/org.yaml: 1), so the request waits for a tenant admin; the experiment asks more CPU
  // than any node has, so it keeps waiting whatever the answer.
  const exp = (name) => ['kind: Experiment', `name: ${name}`, 'project: nlp/llm', 'queue: nlp-dev', 'spec:', '  command: ["sleep", "600"]',
    '  taskGroups:', '    - name: nb', '      resources: {cpu: 100000, memory: 1Gi}',
    '  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 2, expires: 1h}', ''].join('\n');
  for (const [name, button, answered] of [['ui-quota-yes', 'approve', 'TemporaryQuotaApproved'], ['ui-quota-no', 'reject', 'TemporaryQuotaRejected']]) {
    await api('/api/v1/workloads', { method: 'POST', body: exp(name), headers: { 'Content-Type': 'application/yaml' } });
    const ew = await api(`/api/v1/workloads/${name}`);
    await waitFor(async () => (await api(`/api/v1/workloads/${ew.id}/events`)).items.some((e) => e.type === 'TemporaryQuotaRequested'),
      `${name}'s temporary quota request`);
    await page.goto(`${url}/ui/workloads/${ew.id}`);
    await page.getByTestId(`action-${button}`).click();
    await page.getByRole('dialog').waitFor();
    check((await page.getByRole('dialog').textContent()).includes(ew.id), `the ${button} dialog names ${ew.id}`);
    if (button === 'approve') await shot(page, 'workload-quota-confirm');
    await page.getByRole('button', { name: `Confirm ${button} quota` }).click();
    await waitFor(async () => (await api(`/api/v1/workloads/${ew.id}/events`)).items.some((e) => e.type === answered), `${name}: ${answered}`);
    await waitFor(async () => (await page.getByTestId(`action-${button}`).count()) === 0, `no ${button} button once answered`);
  }
  const audited = await (await fetch(`${url}/api/v1/audit?since=1h`, { headers: { Authorization: `Bearer ${token}` } })).text();
  for (const a of ['scale', 'cancel', 'hold', 'release', 'cordon', 'uncordon', 'quota-decision']) {
    check(audited.split('\n').some((l) => l.includes(`"action":"${a}"`)), `the ${a} is audited`);
  }
  // The caller's roles decide the buttons: a member of another project sees none.
  const made = await api('/api/v1/users', { method: 'POST', body: 'kind: User\nname: ui-viewer\nroles: [{role: viewer}]\n', headers: { 'Content-Type': 'application/yaml' } });
  check(made, 'a viewer user');
  const vt = (await api('/api/v1/tokens', { method: 'POST', body: JSON.stringify({ user: 'ui-viewer' }), headers: { 'Content-Type': 'application/json' } })).token;
  const viewerWho = await (await fetch(`${url}/api/v1/whoami?workload=${hw.id}`, { headers: { Authorization: `Bearer ${vt}` } })).json();
  check(viewerWho.name === 'ui-viewer' && !viewerWho.may.includes('cancel'), `a viewer may not cancel: ${JSON.stringify(viewerWho)}`);
  const vpage = await context.newPage();
  await vpage.goto(`${url}/ui/`);
  await vpage.evaluate((t) => sessionStorage.setItem('abacus.token', t), vt);
  await vpage.goto(`${url}/ui/workloads/${hw.id}`);
  await vpage.getByTestId('workload-state').waitFor();
  await vpage.waitForLoadState('networkidle');
  check(await vpage.locator('[data-testid^=action-]').count() === 0, 'a viewer sees no action buttons');
  await vpage.goto(`${url}/ui/nodes`);
  await vpage.getByTestId('node-row').first().waitFor();
  await vpage.waitForLoadState('networkidle');
  check(await vpage.locator('[data-testid^=cordon-]').count() === 0, 'a viewer sees no cordon buttons');
  await vpage.close();

  // ---- queues: nlp-dev's borrowed A100 bar changes after a submission, without a reload
  step = 'queues';
  await page.getByRole('link', { name: 'Queues' }).click();
  const A100 = 'gpu/nvidia/A100-80G';
  const borrowed = page.getByTestId(`borrowed-nlp-dev-${A100}`);
  await borrowed.waitFor();
  const before = Number(await borrowed.getAttribute('data-value'));
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  await shot(page, 'queues-before');
  const q0 = (await api('/api/v1/queues/nlp-dev')).usage.find((u) => u.resource === A100);
  const need = Math.ceil((q0.nominal - q0.used) / 1000) + 2; // two devices above nominal
  const job = [
    'kind: BatchJob', 'name: ui-borrow', 'project: nlp/llm', 'queue: nlp-dev', 'spec:', '  command: ["sleep", "600"]',
    '  tasks: 1', '  parallelism: 1', '  taskGroups:', '    - name: main',
    `      resources: {cpu: 4, memory: 16Gi, accelerators: {flavor: ${A100}, count: ${need}}}`, '',
  ].join('\n');
  await api('/api/v1/workloads', { method: 'POST', body: job, headers: { 'Content-Type': 'application/yaml' } });
  const after = await waitFor(async () => {
    const w = await api('/api/v1/workloads/ui-borrow');
    if (w.state === 'Pending') return null;
    const u = (await api('/api/v1/queues/nlp-dev')).usage.find((x) => x.resource === A100);
    return u.borrowed / 1000; // the server's number (GET /api/v1/queues), which the page shows
  }, 'ui-borrow admitted');
  check(after > before, `the submission borrows (${before} -> ${after})`);
  await waitFor(async () => Number(await borrowed.getAttribute('data-value')) === after, `the borrowed bar to show ${after}`);
  check(await page.evaluate(() => window.__sameDocument === true), 'the page refreshed itself without reloading');
  check((await page.locator('.tree .cohort').count()) >= 1, 'the cohort tree');
  await page.getByTestId(`summary-nlp-dev-${A100}`).waitFor();
  check((await page.getByTestId('queue-summary').locator('th').allTextContents()).includes('borrowing limit'), 'the summary labels the borrowing limit');
  await shot(page, 'queues');

  // ---- usage and cost: chart, tables, CSV download
  step = 'usage';
  await page.getByRole('link', { name: 'Usage and cost' }).click();
  await page.getByTestId('usage-table').waitFor();
  await page.locator('[data-testid=usage-chart] canvas').waitFor();
  await page.getByTestId('idle-table').waitFor();
  await page.getByTestId('utilization-table').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  const csvPath = join(OUT, 'usage.csv');
  await download.saveAs(csvPath);
  const csv = readFileSync(csvPath, 'utf8').trim().split('\n');
  check(csv[0].startsWith('period,tenant,workloads,deviceHours'), `CSV header: ${csv[0]}`);
  check(csv.length >= 2 && csv.slice(1).some((l) => l.includes(',nlp,')), 'CSV has the nlp tenant');
  check(download.suggestedFilename().endsWith('.csv'), 'a .csv file name');
  // Headers for people, the currency from the report (its price list), 2 decimals for hours and money.
  const usageJson = await api(`/api/v1/reports/usage?by=tenant,day&format=json&from=30d`);
  const heads = await page.locator('[data-testid=usage-table] th').allTextContents();
  check(heads.includes('Device-hours') && heads.includes(`Cost (${usageJson.currency})`) && usageJson.currency,
    `usage headers for people with the currency ${usageJson.currency}: ${heads.join(', ')}`);
  const hoursCol = heads.indexOf('Device-hours') + 1;
  const hoursCells = await page.locator(`[data-testid=usage-table] tbody td:nth-child(${hoursCol})`).allTextContents();
  check(hoursCells.length > 0 && hoursCells.every((c) => /^\d+\.\d\d$/.test(c)), `device-hours with 2 decimals: ${hoursCells.join(', ')}`);
  const pctCells = await page.locator('[data-testid=utilization-table] th').allTextContents();
  check(pctCells.some((h) => h.endsWith('(%)')), `percent headers: ${pctCells.join(', ')}`);
  await shot(page, 'usage');

  // ---- audit: chain verified, searching finds the submission's entry
  step = 'audit';
  await page.getByRole('link', { name: 'Audit' }).click();
  await page.getByTestId('chain-status').getByText('Chain verified').waitFor();
  await page.getByLabel('Search', { exact: true }).fill('ui-borrow');
  await waitFor(async () => {
    const rows = await page.locator('[data-testid=audit] tbody tr').allTextContents();
    return rows.length > 0 && rows.every((r) => r.includes('ui-borrow')) && rows.some((r) => r.includes('create'));
  }, 'the audit entry of the submission, found by searching its name');
  await page.getByLabel('Search', { exact: true }).fill('');
  // At 1400 px the result column is on screen in full: the table does not scroll sideways, and
  // every result cell ends inside the viewport.
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.locator('[data-testid=audit-result]').first().waitFor();
  const auditFit = await page.evaluate(() => {
    const wrap = document.querySelector('[data-testid=audit]').parentElement;
    const cells = [...document.querySelectorAll('[data-testid=audit-result]')].slice(0, 50);
    return { scroll: wrap.scrollWidth - wrap.clientWidth, outside: cells.filter((c) => c.getBoundingClientRect().right > window.innerWidth).length };
  });
  check(auditFit.scroll <= 1 && auditFit.outside === 0, `the audit result column fits at 1400 px: ${JSON.stringify(auditFit)}`);
  await shot(page, 'audit');
  await page.setViewportSize({ width: 1280, height: 800 });

  // ---- every form control has an accessible label
  step = 'accessibility';
  for (const route of ['overview', 'ledger', 'nodes', 'queues', 'workloads', 'usage', 'audit']) {
    await page.goto(`${url}/ui/${route}`);
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    await page.waitForLoadState('networkidle');
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, button')]
        .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    check(unlabelled.length === 0, `${route}: unlabelled controls ${unlabelled.join(' | ')}`);
  }

  // ---- narrow screen: every page fits without sideways scrolling (wide tables scroll in their box)
  step = 'narrow';
  await page.setViewportSize({ width: 390, height: 844 });
  for (const route of ['overview', 'nodes', 'queues', 'workloads', `workloads/${llama.id}`, 'usage', 'audit', 'ledger']) {
    await page.goto(`${url}/ui/${route}`);
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    await page.waitForLoadState('networkidle');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    check(overflow <= 1, `${route}: no horizontal overflow on a narrow screen (${overflow}px)`);
  }
  await waitFor(async () => (await page.locator('[data-testid=device]').count()) === devices.length, 'cells on a narrow screen');
  await shot(page, 'ledger-narrow');

  check(pageErrors.length === 0, `no script errors in the page: ${pageErrors.join('; ')}`);
  console.log(`PASS: dashboard test in ${((Date.now() - t0) / 1000).toFixed(1)}s; screenshots in ${OUT}`);
}

main()
  .then(async () => {
    await cleanup();
    process.exit(0);
  })
  .catch(async (e) => {
    console.error(`FAIL: ${e.message}`);
    if (serverLog) console.error(`--- server stderr (tail) ---\n${serverLog}`);
    await cleanup();
    process.exit(1);
  });
