// One instance: its state and account, linking (QR, pairing code, the sandbox's scan), actions, and its tabs.
import { useEffect, useState } from 'preact/hooks';
import type { ConnectionState, InstanceListing, QrAnswer } from '../api';
import type { Session } from '../session';
import { go, href, useNow, usePoll } from '../hooks';
import { followEvents, type LiveEvent, type LiveStatus } from '../live';
import { ago, numberOf } from '../format';
import { Avatar, ConfirmButton, Errors, Field, Notice, StateBadge } from '../ui';
import { SettingsTab } from './settings';
import { EventsTab } from './events';
import { DeliveriesTab } from './deliveries';
import { LiveTab } from './live';
import { MessagesTab } from './messages';
import { ChatTab } from './chat';
import type { InstanceView } from './instance-view';

const tabs = [
  ['overview', 'Overview'],
  ['chat', 'Chat'],
  ['messages', 'Send'],
  ['settings', 'Settings'],
  ['events', 'Events'],
  ['deliveries', 'Deliveries'],
  ['live', 'Live events'],
] as const;

export function InstancePage({ session, name, tab }: { session: Session; name: string; tab: string }) {
  const [listing, setListing] = useState<InstanceListing | null>(null);
  const [state, setState] = useState<ConnectionState>('close');
  const [lastActivity, setLastActivity] = useState<string | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [live, setLive] = useState<LiveStatus>('connecting');
  const [nudge, setNudge] = useState(0);

  const load = async () => {
    try {
      const [list, current] = await Promise.all([session.api.instances(name), session.api.connectionState(name)]);
      setListing(list[0]?.instance ?? null);
      setState(current.instance.state);
      setLastActivity(current.instance.lastActivityAt ?? null);
      setErrors(list[0] ? [] : [`There is no instance "${name}".`]);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  usePoll(load, live === 'live' ? 5000 : 2000, [name, nudge, live]);

  useEffect(
    () =>
      followEvents(
        session.key,
        name,
        (event) => {
          setEvents((list) => [event, ...list].slice(0, 300));
          if (/connection|qrcode|logout|status/i.test(event.event)) setNudge((n) => n + 1);
        },
        setLive,
      ),
    [session, name],
  );

  if (!listing) {
    return (
      <section>
        <p>
          <a href={href('')}>← Instances</a>
        </p>
        {errors.length ? <Errors messages={errors} /> : <p class="loading">Loading…</p>}
      </section>
    );
  }

  const view: InstanceView = { session, name, listing, state, events, live, refresh: () => setNudge((n) => n + 1) };
  const sandbox = listing.integration.integration === 'SANDBOX';
  const shownTabs = tabs.filter(([id]) => id !== 'chat' || sandbox);

  return (
    <section aria-labelledby="instance-title">
      {session.kind === 'global' && (
        <p class="crumbs">
          <a href={href('')}>← Instances</a>
        </p>
      )}
      <div class="page-head instance-head">
        <div class="account">
          <Avatar url={listing.profilePictureUrl} name={listing.profileName || name} />
          <div>
            <h1 id="instance-title">{name}</h1>
            <div class="muted small">
              {listing.integration.integration}
              {listing.owner ? ` · +${numberOf(listing.owner)}` : ''}
              {listing.profileName ? ` · ${listing.profileName}` : ''}
              {` · last activity ${ago(lastActivity)}`}
            </div>
          </div>
        </div>
        <StateBadge state={state} />
      </div>
      <Errors messages={errors} />
      <nav class="tabs" aria-label="Instance">
        {shownTabs.map(([id, label]) => (
          <a key={id} href={href('instances', name, id)} aria-current={tab === id ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <div class="tab-body">
        {tab === 'overview' && <Overview view={view} />}
        {tab === 'chat' && sandbox && <ChatTab view={view} />}
        {tab === 'messages' && <MessagesTab view={view} />}
        {tab === 'settings' && <SettingsTab view={view} />}
        {tab === 'events' && <EventsTab view={view} />}
        {tab === 'deliveries' && <DeliveriesTab view={view} />}
        {tab === 'live' && <LiveTab view={view} />}
      </div>
    </section>
  );
}

function Overview({ view }: { view: InstanceView }) {
  const { session, name, listing, state } = view;
  const [notice, setNotice] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const act = (what: string, task: () => Promise<unknown>) => async () => {
    setErrors([]);
    setNotice('');
    try {
      await task();
      setNotice(what);
      view.refresh();
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  return (
    <div class="grid two">
      <div class="card">
        {state === 'open' ? (
          <div class="linked" data-testid="linked">
            <h2>Linked</h2>
            <p>
              This instance is connected as <strong>{listing.profileName || 'an account without a name'}</strong>
              {listing.owner ? <> (+{numberOf(listing.owner)})</> : null}.
            </p>
            {listing.profileStatus ? <p class="muted">{listing.profileStatus}</p> : null}
          </div>
        ) : (
          <Linking view={view} />
        )}
      </div>
      <div class="card">
        <h2>Actions</h2>
        <Errors messages={errors} />
        {notice && <Notice>{notice}</Notice>}
        <div class="actions column">
          <ConfirmButton label="Restart" question="Restart the connection?" onConfirm={act('Restarted.', () => session.api.restart(name))} />
          <ConfirmButton label="Unlink" question="Log the account out of this instance?" onConfirm={act('Logged out.', () => session.api.logout(name))} />
          <ConfirmButton
            label="Delete"
            danger
            question={`Delete ${name} and everything stored for it?`}
            onConfirm={async () => {
              try {
                await session.api.remove(name);
                go('');
              } catch (error) {
                setErrors([error instanceof Error ? error.message : String(error)]);
              }
            }}
          />
        </div>
        {session.kind === 'global' && listing.apikey && (
          <details class="key">
            <summary>Instance key</summary>
            <code class="secret">{listing.apikey}</code>
          </details>
        )}
      </div>
    </div>
  );
}

/** How long a shown code stays valid (the sandbox's; WhatsApp's are shorter and refreshed sooner). */
const codeLifeMs = 60_000;

function Linking({ view }: { view: InstanceView }) {
  const { session, name, listing } = view;
  const sandbox = listing.integration.integration === 'SANDBOX';
  const [qr, setQr] = useState<QrAnswer | null>(null);
  const [shownAt, setShownAt] = useState(0);
  const [errors, setErrors] = useState<string[]>([]);
  const [pairNumber, setPairNumber] = useState('');
  const [pairing, setPairing] = useState<string | null>(null);
  const [scanNumber, setScanNumber] = useState('');
  const [scanName, setScanName] = useState('');
  const [scanErrors, setScanErrors] = useState<string[]>([]);
  const now = useNow();

  const show = (answer: QrAnswer) => {
    setQr((before) => {
      if (answer.code !== before?.code) setShownAt(Date.now());
      return answer;
    });
  };
  const fetchCode = async () => {
    try {
      const answer = await session.api.connect(name);
      if (answer.instance) return view.refresh();
      show(answer);
      setErrors([]);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  // Linking starts when asked (or is already under way): looking at a closed instance does not start it.
  const [started, setStarted] = useState(view.state === 'connecting');
  const active = started || view.state === 'connecting';
  // The code on screen follows the service: asked again every few seconds, and at once on a qrcode.updated event.
  usePoll(
    async () => {
      if (active) await fetchCode();
    },
    5000,
    [name, active],
  );
  const latestQr = view.events.find((event) => event.event === 'qrcode.updated');
  useEffect(() => {
    if (latestQr && active) void fetchCode();
    // Asked again only when a new qrcode.updated event arrives.
  }, [latestQr]);

  const remaining = qr?.code ? Math.min(codeLifeMs / 1000, Math.max(0, Math.ceil((shownAt + codeLifeMs - now) / 1000))) : 0;

  const requestPairing = async (event: Event) => {
    event.preventDefault();
    setErrors([]);
    try {
      const answer = await session.api.connect(name, pairNumber.trim());
      setPairing(answer.pairingCode ?? null);
      if (!answer.pairingCode) setErrors(['No pairing code came back; try the QR code, or check the number.']);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };

  const scan = async (event: Event) => {
    event.preventDefault();
    setScanErrors([]);
    try {
      setStarted(true);
      const code = qr?.code ?? (await session.api.connect(name)).code;
      if (!code) throw new Error('There is no code to scan yet; wait a moment.');
      await session.api.scan(code, scanNumber.trim(), scanName.trim() || undefined);
      view.refresh();
    } catch (error) {
      setScanErrors([error instanceof Error ? error.message : String(error)]);
    }
  };

  return (
    <div class="linking">
      <h2>Link this instance</h2>
      <Errors messages={errors} />
      {qr?.base64 ? (
        <figure class="qr">
          <img src={qr.base64.startsWith('data:') ? qr.base64 : `data:image/png;base64,${qr.base64}`} alt="QR code to scan with the phone" data-testid="qr" />
          <figcaption>
            {sandbox ? 'Scan it below with any number' : 'WhatsApp → Linked devices → Link a device, then scan'} ·{' '}
            <span aria-live="polite">{remaining > 0 ? `new code in ${remaining} s` : 'refreshing…'}</span>
          </figcaption>
        </figure>
      ) : (
        <p class="muted">
          {active ? (
            'Waiting for a code…'
          ) : (
            <button type="button" onClick={() => setStarted(true)}>
              Start linking
            </button>
          )}
        </p>
      )}
      {sandbox ? (
        <form class="sub" onSubmit={scan} aria-label="Link with a number">
          <h3>Link with a number</h3>
          <p class="muted small">The sandbox's phone: scans the code above as this number.</p>
          <Errors messages={scanErrors} />
          <Field label="Phone number" hint="digits with country code, e.g. 5511900000001">
            {(id) => <input id={id} name="scanNumber" inputMode="numeric" required value={scanNumber} onInput={(e) => setScanNumber(e.currentTarget.value)} />}
          </Field>
          <Field label="Profile name (optional)">
            {(id) => <input id={id} name="scanName" value={scanName} onInput={(e) => setScanName(e.currentTarget.value)} />}
          </Field>
          <button type="submit" disabled={session.kind !== 'global'}>
            Link with number
          </button>
          {session.kind !== 'global' && <p class="muted small">Scanning needs the global key.</p>}
        </form>
      ) : listing.integration.integration === 'WHATSAPP-BAILEYS' ? (
        <form class="sub" onSubmit={requestPairing} aria-label="Pairing code">
          <h3>Or use a pairing code</h3>
          <Field label="Phone number" hint="with country code; then WhatsApp → Linked devices → Link with phone number">
            {(id) => <input id={id} name="pairNumber" inputMode="numeric" required value={pairNumber} onInput={(e) => setPairNumber(e.currentTarget.value)} />}
          </Field>
          <button type="submit">Get a pairing code</button>
          {pairing && (
            <p class="pairing" aria-live="polite">
              {pairing}
            </p>
          )}
        </form>
      ) : null}
    </div>
  );
}
