// Path routing under /ui/ with the History API (the server answers index.html for any /ui/ path).
import { h } from 'preact';

export const BASE = '/ui/';

// The route below /ui/: "ledger", "workloads/NAME", ...
export function currentRoute() {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return decodeURIComponent(p.replace(/\/+$/, ''));
}

// Goes to a dashboard route without reloading the page.
export function navigate(route) {
  history.pushState(null, '', BASE + route);
  dispatchEvent(new PopStateEvent('popstate'));
}

// A link to a dashboard route (plain clicks stay in the page; ctrl/middle clicks open a tab).
export function Link({ to, children, ...rest }) {
  return h(
    'a',
    {
      href: BASE + to,
      onClick: (e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      },
      ...rest,
    },
    children,
  );
}
