// The dashboard's shell: login gate, navigation, and a small path router under /ui/.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { token, setToken, setUnauthenticatedHandler } from './api.js';
import { Login } from './pages/Login.jsx';
import { Ledger } from './pages/Ledger.jsx';
import { Overview } from './pages/Overview.jsx';
import { Nodes } from './pages/Nodes.jsx';
import { Queues } from './pages/Queues.jsx';
import { Workloads } from './pages/Workloads.jsx';
import { Workload } from './pages/Workload.jsx';
import { Usage } from './pages/Usage.jsx';
import { Audit } from './pages/Audit.jsx';
import { Link, navigate, currentRoute } from './router.js';
import './style.css';

const PAGES = [
  ['overview', 'Overview'],
  ['ledger', 'Ledger'],
  ['nodes', 'Nodes'],
  ['queues', 'Queues'],
  ['workloads', 'Workloads'],
  ['usage', 'Usage and cost'],
  ['audit', 'Audit'],
];

function Page({ route }) {
  const [head, ...rest] = route.split('/');
  switch (head) {
    case 'ledger': return <Ledger />;
    case 'nodes': return <Nodes />;
    case 'queues': return <Queues />;
    case 'workloads': return rest.length ? <Workload name={rest.join('/')} /> : <Workloads />;
    case 'usage': return <Usage />;
    case 'audit': return <Audit />;
    default: return <Overview />;
  }
}

function App() {
  const [route, setRoute] = useState(currentRoute());
  const [authed, setAuthed] = useState(!!token());
  const [notice, setNotice] = useState('');
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    addEventListener('popstate', on);
    setUnauthenticatedHandler((message) => {
      setNotice(message);
      setAuthed(false);
    });
    return () => removeEventListener('popstate', on);
  }, []);
  if (!authed || route === 'login') {
    return (
      <Login
        notice={notice}
        onLogin={() => {
          setNotice('');
          setAuthed(true);
          if (route === 'login' || route === '') navigate('overview');
        }}
      />
    );
  }
  const active = route.split('/')[0] || 'overview';
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">Abacus</span>
        <nav aria-label="Pages">
          {PAGES.map(([to, label]) => (
            <Link to={to} class={active === to ? 'active' : ''} aria-current={active === to ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <button
          type="button"
          class="logout"
          onClick={() => {
            setToken('');
            setAuthed(false);
          }}
        >
          Log out
        </button>
      </header>
      <main>
        <Page route={route} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app'));
