// The manager's shell: log in with a key, then the pages (instances, one instance, health, cluster) under a header.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import { forgetKey, openSession, storedKey, type Session } from './session';
import { go, href, useRoute } from './hooks';
import { Field } from './ui';
import { InstancesPage } from './pages/instances';
import { CreatePage } from './pages/create';
import { InstancePage } from './pages/instance';
import { HealthPage } from './pages/health';
import { ClusterPage } from './pages/cluster';

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const route = useRoute();

  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    openSession(key)
      .then(setSession)
      .catch(() => forgetKey())
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return <p class="loading">Loading…</p>;
  if (!session) return <Login onSession={setSession} />;

  const logOut = () => {
    forgetKey();
    setSession(null);
    go('');
  };

  // An instance key drives its own instance only: it opens on it.
  const [page, name, tab] = route;
  let body = <InstancesPage session={session} />;
  if (page === 'new' && session.kind === 'global') body = <CreatePage session={session} />;
  else if (page === 'instances' && name) body = <InstancePage key={name} session={session} name={name} tab={tab ?? 'overview'} />;
  else if (page === 'health') body = <HealthPage session={session} />;
  else if (page === 'cluster') body = <ClusterPage session={session} />;
  else if (session.kind === 'instance' && session.instance)
    body = <InstancePage key={session.instance} session={session} name={session.instance} tab="overview" />;

  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href={href('')}>
          <img src="/manager/favicon.svg" alt="" width="28" height="28" />
          <span>Switchboard</span>
        </a>
        <nav aria-label="Main">
          <a href={href('')} aria-current={page === undefined || page === 'instances' ? 'page' : undefined}>
            Instances
          </a>
          <a href={href('health')} aria-current={page === 'health' ? 'page' : undefined}>
            Health
          </a>
          {session.kind === 'global' && (
            <a href={href('cluster')} aria-current={page === 'cluster' ? 'page' : undefined}>
              Cluster
            </a>
          )}
          <a href="/messenger/docs" target="_blank" rel="noreferrer">
            API docs
          </a>
        </nav>
        <div class="who">
          <span class="key-kind">{session.kind === 'global' ? 'Global key' : `Instance key · ${session.instance ?? ''}`}</span>
          <button type="button" class="secondary" onClick={logOut}>
            Log out
          </button>
        </div>
      </header>
      <main>{body}</main>
    </div>
  );
}

function Login({ onSession }: { onSession: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setErrors([]);
    try {
      onSession(await openSession(key.trim()));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401)
        setErrors(['That key is not valid: use the global key (AUTHENTICATION_API_KEY) or an instance key.']);
      else setErrors([error instanceof Error ? error.message : String(error)]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form class="card" onSubmit={submit} aria-labelledby="login-title">
        <div class="brand big">
          <img src="/manager/favicon.svg" alt="" width="40" height="40" />
          <h1 id="login-title">Switchboard manager</h1>
        </div>
        <p class="muted">Log in with the global API key, or with an instance key to manage that instance only. The key stays in this tab.</p>
        <Field label="API key" errors={errors}>
          {(id, describedBy) => (
            <input
              id={id}
              name="apikey"
              type="password"
              autocomplete="current-password"
              required
              value={key}
              aria-describedby={describedBy}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={busy || key.trim() === ''}>
          {busy ? 'Checking…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}
