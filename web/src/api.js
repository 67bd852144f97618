// The REST client of the dashboard: every call carries the bearer token kept in session storage
// (the login page puts it there); a 401 forgets it and sends the user back to the login page.
const KEY = 'abacus.token';

export function token() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let onUnauthenticated = () => {};
// Registers what to do when the server answers 401 (the app shows the login page).
export function setUnauthenticatedHandler(fn) {
  onUnauthenticated = fn;
}

// Sends one request to /api/v1/...; resolves with the response, rejects with ApiError carrying
// the server's error message.
export async function request(path, { method = 'GET', body, headers = {}, raw = false } = {}) {
  const res = await fetch(path, {
    method,
    body,
    headers: { Authorization: `Bearer ${token()}`, ...headers },
  });
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const j = await res.json();
      if (j && j.error && j.error.message) message = j.error.message;
    } catch (_) {
      /* not JSON */
    }
    if (res.status === 401) {
      setToken('');
      onUnauthenticated(message);
    }
    throw new ApiError(res.status, message);
  }
  return raw ? res : res.json();
}

// GET as JSON.
export const get = (path) => request(path);

// GET newline-delimited JSON (the audit log) as an array.
export async function getLines(path) {
  const res = await request(path, { raw: true });
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

// Builds a query string from an object, skipping empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// POST a JSON body (the action routes: cancel, hold, scale, quota, cordon, drain, …).
export const post = (path, body = {}) =>
  request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

// The actions the caller's roles allow on a workload or node, as the server decides them
// (GET /api/v1/whoami?workload=W or ?node=N, docs/api.md): a Set of action names.
export async function allowed(about) {
  const who = await get('/api/v1/whoami' + query(about));
  return new Set(who.may || []);
}
