// The login page: asks for an API token (admin, user or viewer token), checks it against the
// server and keeps it in session storage (gone when the tab closes).
import { useState } from 'preact/hooks';
import { request, setToken } from '../api.js';

export function Login({ onLogin, notice }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState(notice || '');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setToken(value.trim());
    try {
      await request('/readyz');
      onLogin();
    } catch (err) {
      if (err.status !== 503) {
        setToken('');
        setError(err.message);
      } else {
        onLogin(); // a valid token; the server is still starting
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Abacus</h1>
        <p>Sign in with an API token: the admin token (<code>DATA/admin.token</code>) or one from <code>abacus token create</code>.</p>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
        <button type="submit" disabled={busy || !value.trim()}>Sign in</button>
        {error && <p class="error" role="alert">{error}</p>}
      </form>
    </main>
  );
}
