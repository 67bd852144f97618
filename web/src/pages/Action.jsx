// An action button (cancel, hold, scale, approve, cordon, drain, …): asks to confirm in a dialog
// saying what will happen, then calls the server's route (which checks the roles again and audits
// it) and shows the answer or the server's error. Pages render it only when GET /api/v1/whoami
// lists the action for the caller.
import { useState } from 'preact/hooks';

// `label`: the button's text; `confirm`: the sentence in the dialog; `run`: async () => message
// shown after success; `children`: extra fields in the dialog (a replica count, a grace).
export function Action({ label, confirm, run, onDone, children, danger = false, testid }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const go = async () => {
    setBusy(true);
    try {
      const msg = await run();
      setResult({ ok: true, text: msg || `${label}: done` });
      setOpen(false);
      if (onDone) onDone();
    } catch (e) {
      setResult({ ok: false, text: `${label}: ${e.message}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" class={danger ? 'danger' : ''} data-testid={testid} onClick={() => { setResult(null); setOpen(true); }}>
        {label}
      </button>
      {open && (
        <div class="dialog-backdrop">
          <div class="dialog" role="dialog" aria-modal="true" aria-label={`Confirm ${label}`}>
            <p>{confirm}</p>
            {children}
            {result && !result.ok && <p class="error" role="alert">{result.text}</p>}
            <div class="dialog-buttons">
              <button type="button" onClick={() => setOpen(false)} disabled={busy}>Cancel</button>
              <button type="button" class={danger ? 'danger primary' : 'primary'} onClick={go} disabled={busy}>
                Confirm {label.toLowerCase()}
              </button>
            </div>
          </div>
        </div>
      )}
      {!open && result && (
        <span class={result.ok ? 'action-ok' : 'error'} role="status">{result.text}</span>
      )}
    </span>
  );
}
