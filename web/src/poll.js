// usePoll: loads data now and again every `ms` (default 3 s) while the page is visible, so
// pages follow the server without reloading. Returns {data, error, loading, refresh, at}.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';

export const POLL_MS = Number(sessionStorage.getItem('abacus.pollMs')) || 3000;

export function usePoll(load, deps = [], ms = POLL_MS) {
  const [state, setState] = useState({ data: null, error: null, loading: true, at: null });
  const gen = useRef(0);
  const refresh = useCallback(async () => {
    const mine = ++gen.current;
    try {
      const data = await load();
      if (mine === gen.current) setState({ data, error: null, loading: false, at: new Date() });
    } catch (e) {
      if (mine === gen.current) setState((s) => ({ ...s, error: e, loading: false, at: new Date() }));
    }
  }, deps); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    setState({ data: null, error: null, loading: true, at: null });
    refresh();
    const id = setInterval(() => {
      if (document.visibilityState !== 'hidden') refresh();
    }, ms);
    return () => {
      clearInterval(id);
      gen.current++;
    };
  }, [refresh, ms]);
  return { ...state, refresh };
}
