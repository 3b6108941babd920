// Creating an instance of any integration kind, with the API's validation messages beside the field they name.
import { useState } from 'preact/hooks';
import { messagesByField, type Created, type CreateInput } from '../api';
import type { Session } from '../session';
import { go, href } from '../hooks';
import { Check, Errors, Field } from '../ui';

interface Kind {
  name: string;
  label: string;
  about: string;
  number?: { label: string; hint: string; required?: boolean };
  token: { label: string; hint: string; required?: boolean };
  businessId?: boolean;
  qrcode?: boolean;
}

const kinds: Kind[] = [
  {
    name: 'SANDBOX',
    label: 'Sandbox',
    about: 'A messenger simulated inside Switchboard: link it with any number from this page, no phone needed.',
    token: { label: 'Instance key (optional)', hint: '16+ characters; left empty, one is generated' },
  },
  {
    name: 'WHATSAPP-BAILEYS',
    label: 'WhatsApp (phone link)',
    about: 'WhatsApp Web multi-device: link a phone by scanning the QR code or with a pairing code.',
    number: { label: 'Phone number for a pairing code (optional)', hint: 'with country code, e.g. 5511999998888' },
    token: { label: 'Instance key (optional)', hint: '16+ characters; left empty, one is generated' },
    qrcode: true,
  },
  {
    name: 'WHATSAPP-BUSINESS',
    label: 'WhatsApp Cloud API',
    about: "Meta's Cloud API: give the access token, the phone-number id and the business account id.",
    number: { label: 'Phone-number id', hint: 'the id Meta shows for the number (digits)', required: true },
    token: { label: 'Meta access token', hint: 'a system-user token of the business', required: true },
    businessId: true,
  },
  {
    name: 'EVOLUTION',
    label: 'Evolution channel',
    about: 'Bring your own transport: messages arrive through /messenger/webhook/evolution.',
    number: { label: 'Routing id (optional)', hint: 'the id your transport uses for this channel' },
    token: { label: 'Instance key (optional)', hint: '16+ characters; left empty, one is generated' },
  },
];

const fields = ['instanceName', 'integration', 'token', 'number', 'businessId', 'qrcode'];

export function CreatePage({ session }: { session: Session }) {
  const [kindName, setKindName] = useState('SANDBOX');
  const [name, setName] = useState('');
  const [token, setToken] = useState('');
  const [number, setNumber] = useState('');
  const [businessId, setBusinessId] = useState('');
  const [qrcode, setQrcode] = useState(true);
  const [byField, setByField] = useState<Record<string, string[]>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const kind = kinds.find((k) => k.name === kindName) ?? kinds[0];

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const input: CreateInput = { instanceName: name.trim(), integration: kind.name };
    if (token.trim()) input.token = token.trim();
    if (kind.number && number.trim()) input.number = number.trim();
    if (kind.businessId && businessId.trim()) input.businessId = businessId.trim();
    // A sandbox starts linking at once: its page shows the code to scan.
    if (kind.qrcode) input.qrcode = qrcode;
    else if (kind.name === 'SANDBOX') input.qrcode = true;
    try {
      setCreated(await session.api.create(input));
      setByField({});
      setGeneral([]);
    } catch (error) {
      const sorted = messagesByField(error, fields);
      setByField(sorted.byField);
      setGeneral(sorted.general);
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    const instanceName = created.instance.instanceName;
    return (
      <section class="card narrow" aria-labelledby="created-title">
        <h1 id="created-title">Instance {instanceName} created</h1>
        <p>Its key, for scripts and for logging in to this page as this instance only (it is also shown on the instance's page to the global key):</p>
        <p>
          <code class="secret" data-testid="instance-key">
            {created.hash.apikey}
          </code>
        </p>
        <div class="actions">
          <button type="button" onClick={() => go('instances', instanceName)}>
            Link it now
          </button>
          <a class="button secondary" href={href('')}>
            Back to the list
          </a>
        </div>
      </section>
    );
  }

  return (
    <section class="card narrow" aria-labelledby="create-title">
      <h1 id="create-title">New instance</h1>
      <form onSubmit={submit} noValidate>
        <Errors messages={general} />
        <fieldset>
          <legend>Integration</legend>
          <div class="kinds">
            {kinds.map((k) => (
              <label key={k.name} class={`kind${k.name === kind.name ? ' chosen' : ''}`}>
                <input type="radio" name="integration" value={k.name} checked={k.name === kind.name} onChange={() => setKindName(k.name)} />
                <span class="strong">{k.label}</span>
                <small class="muted">{k.name}</small>
              </label>
            ))}
          </div>
          <p class="muted small">{kind.about}</p>
        </fieldset>
        <Field label="Name" hint="1–64 letters, digits, - _ . starting with a letter or digit" errors={byField.instanceName}>
          {(id, describedBy) => (
            <input id={id} name="instanceName" required value={name} aria-describedby={describedBy} onInput={(e) => setName(e.currentTarget.value)} />
          )}
        </Field>
        {kind.number && (
          <Field label={kind.number.label} hint={kind.number.hint} errors={byField.number}>
            {(id, describedBy) => (
              <input
                id={id}
                name="number"
                inputMode="numeric"
                value={number}
                aria-describedby={describedBy}
                onInput={(e) => setNumber(e.currentTarget.value)}
              />
            )}
          </Field>
        )}
        {kind.businessId && (
          <Field label="Business account id" hint="the WhatsApp Business Account id" errors={byField.businessId}>
            {(id, describedBy) => (
              <input id={id} name="businessId" value={businessId} aria-describedby={describedBy} onInput={(e) => setBusinessId(e.currentTarget.value)} />
            )}
          </Field>
        )}
        <Field label={kind.token.label} hint={kind.token.hint} errors={byField.token}>
          {(id, describedBy) => (
            <input
              id={id}
              name="token"
              type="password"
              autocomplete="off"
              value={token}
              aria-describedby={describedBy}
              onInput={(e) => setToken(e.currentTarget.value)}
            />
          )}
        </Field>
        {kind.qrcode && <Check label="Start linking at once (QR code)" checked={qrcode} onChange={setQrcode} />}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create instance'}
          </button>
          <a class="button secondary" href={href('')}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
