// Where an instance's events go: its webhook (URL, events, by-events, base64, headers, signing secret), websocket, RabbitMQ, NATS.
import { useEffect, useState } from 'preact/hooks';
import { messagesByField, type SinkSettings } from '../api';
import { Check, Errors, Field, Notice } from '../ui';
import { EventPicker } from './event-picker';
import type { InstanceView } from './instance-view';

/** A Standard Webhooks secret made in this browser: `whsec_` and 24 random bytes in base64. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** Header lines `Name: value` as an object; values of headers shown redacted are sent back as they are not known. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return headers;
}

export function EventsTab({ view }: { view: InstanceView }) {
  return (
    <div class="grid two">
      <WebhookForm view={view} />
      <div class="stack">
        <SinkForm view={view} kind="websocket" title="Websocket" hint="socket.io namespace /<instance> on this port (needs WEBSOCKET_ENABLED)" />
        <SinkForm view={view} kind="rabbitmq" title="RabbitMQ" hint="a topic exchange named after the instance (needs RABBITMQ_URI)" />
        <SinkForm view={view} kind="nats" title="NATS" hint="subjects <instance>.<event> (needs NATS_URL)" />
      </div>
    </div>
  );
}

function WebhookForm({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [loaded, setLoaded] = useState(false);
  const [enabled, setEnabled] = useState(false);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [byEvents, setByEvents] = useState(false);
  const [base64, setBase64] = useState(false);
  const [headers, setHeaders] = useState('');
  const [signed, setSigned] = useState(false);
  const [secretAction, setSecretAction] = useState<'keep' | 'new' | 'remove'>('keep');
  const [shownSecret, setShownSecret] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    session.api
      .webhook(name)
      .then((found) => {
        if (found) {
          setEnabled(found.enabled);
          setUrl(found.url);
          setEvents(found.events);
          setByEvents(found.webhookByEvents);
          setBase64(found.webhookBase64);
          setSigned(found.signed);
          setHeaders(
            Object.entries(found.headers ?? {})
              .map(([key, value]) => `${key}: ${value}`)
              .join('\n'),
          );
        }
        setLoaded(true);
      })
      .catch((error: unknown) => setGeneral([String(error instanceof Error ? error.message : error)]));
  }, [session, name]);

  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    setShownSecret(null);
    const body: Record<string, unknown> = { enabled, url: url.trim(), events, byEvents, base64 };
    const parsed = parseHeaders(headers);
    // Headers shown redacted keep their stored value unless every one is given again.
    if (!Object.values(parsed).includes('[redacted]')) body.headers = parsed;
    const secret = secretAction === 'new' ? newSecret() : null;
    if (secret) body.secret = secret;
    if (secretAction === 'remove') body.secret = null;
    try {
      await session.api.setWebhook(name, body);
      setErrors({});
      setGeneral([]);
      setSaved(true);
      setSigned(secretAction === 'keep' ? signed : secretAction === 'new');
      setSecretAction('keep');
      if (secret) setShownSecret(secret);
    } catch (error) {
      const sorted = messagesByField(error, ['url', 'events', 'headers', 'secret', 'enabled']);
      setErrors(sorted.byField);
      setGeneral(sorted.general);
    }
  };

  if (!loaded) return <Errors messages={general} />;
  return (
    <form class="card" onSubmit={save} aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook</h2>
      <Errors messages={general} />
      <Check label="Enabled" checked={enabled} onChange={setEnabled} />
      <Field label="URL" hint="http:// or https://; every event is POSTed here" errors={errors.url}>
        {(id, describedBy) => (
          <input
            id={id}
            name="url"
            type="url"
            value={url}
            placeholder="https://example.com/hooks/whatsapp"
            aria-describedby={describedBy}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        )}
      </Field>
      <Check label="By events" hint="each event to <URL>/<event-name>" checked={byEvents} onChange={setByEvents} />
      <Check label="Media in base64" hint="received media carried in the event" checked={base64} onChange={setBase64} />
      <Field label="Headers" hint="one per line, Name: value (values already stored show as [redacted])" errors={errors.headers}>
        {(id, describedBy) => (
          <textarea id={id} name="headers" rows={3} value={headers} aria-describedby={describedBy} onInput={(e) => setHeaders(e.currentTarget.value)} />
        )}
      </Field>
      <fieldset>
        <legend>Signing (Standard Webhooks)</legend>
        <p class="muted small">
          {signed
            ? 'Deliveries are signed with a secret of this webhook.'
            : 'No secret of this webhook: deliveries are signed only with the server-wide one, if set.'}
        </p>
        <label class="check">
          <input type="radio" name="secret" checked={secretAction === 'keep'} onChange={() => setSecretAction('keep')} />
          <span>Keep as it is</span>
        </label>
        <label class="check">
          <input type="radio" name="secret" checked={secretAction === 'new'} onChange={() => setSecretAction('new')} />
          <span>Make a new secret (shown once)</span>
        </label>
        {signed && (
          <label class="check">
            <input type="radio" name="secret" checked={secretAction === 'remove'} onChange={() => setSecretAction('remove')} />
            <span>Remove the secret</span>
          </label>
        )}
        {errors.secret && <Errors messages={errors.secret} />}
      </fieldset>
      <EventPicker legend="Events" events={events} onChange={setEvents} />
      {errors.events && <Errors messages={errors.events} />}
      <div class="actions">
        <button type="submit">Save webhook</button>
      </div>
      {saved && <Notice>Webhook saved.</Notice>}
      {shownSecret && (
        <div class="alert warn" role="status">
          <p>The signing secret, shown this once; give it to the receiver to check signatures:</p>
          <code class="secret" data-testid="webhook-secret">
            {shownSecret}
          </code>
        </div>
      )}
    </form>
  );
}

function SinkForm({ view, kind, title, hint }: { view: InstanceView; kind: 'websocket' | 'rabbitmq' | 'nats'; title: string; hint: string }) {
  const { session, name } = view;
  const [settings, setSettings] = useState<SinkSettings>({ enabled: false, events: [] });
  const [errors, setErrors] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    session.api
      .sink(kind, name)
      .then((found) => found && setSettings(found))
      .catch(() => undefined);
  }, [session, name, kind]);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    try {
      await session.api.setSink(kind, name, settings);
      setErrors([]);
      setSaved(true);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  return (
    <form class="card" onSubmit={save} aria-label={title}>
      <h2>{title}</h2>
      <p class="muted small">{hint}</p>
      <Errors messages={errors} />
      <Check label={`${title} enabled`} checked={settings.enabled} onChange={(enabled) => setSettings({ ...settings, enabled })} />
      {settings.enabled && <EventPicker legend={`${title} events`} events={settings.events} onChange={(events) => setSettings({ ...settings, events })} />}
      <div class="actions">
        <button type="submit">Save {title}</button>
        {saved && <Notice>Saved.</Notice>}
      </div>
    </form>
  );
}
