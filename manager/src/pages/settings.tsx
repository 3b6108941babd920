// The seven behaviour settings of an instance.
import { useEffect, useState } from 'preact/hooks';
import { messagesByField, type Settings } from '../api';
import { Check, Errors, Field, Notice } from '../ui';
import type { InstanceView } from './instance-view';

const switches: [keyof Settings, string, string][] = [
  ['rejectCall', 'Reject calls', 'Incoming calls are declined'],
  ['groupsIgnore', 'Ignore groups', 'Group messages are not stored or announced'],
  ['alwaysOnline', 'Always online', 'The account shows as online'],
  ['readMessages', 'Read messages', 'Received messages are marked read at once'],
  ['readStatus', 'Read status posts', 'Status posts of contacts are marked seen'],
  ['syncFullHistory', 'Sync full history', 'Ask the phone for the whole history when linking'],
];

export function SettingsTab({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [settings, setSettings] = useState<Settings | null>(null);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    session.api
      .settings(name)
      .then((found) => setSettings(found))
      .catch((error: unknown) => setGeneral([String(error instanceof Error ? error.message : error)]));
  }, [session, name]);

  if (!settings) return <Errors messages={general} />;
  const change = (patch: Partial<Settings>) => {
    setSaved(false);
    setSettings({ ...settings, ...patch });
  };
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    try {
      const { rejectCall, msgCall, groupsIgnore, alwaysOnline, readMessages, readStatus, syncFullHistory } = settings;
      await session.api.setSettings(name, { rejectCall, msgCall, groupsIgnore, alwaysOnline, readMessages, readStatus, syncFullHistory });
      setErrors({});
      setGeneral([]);
      setSaved(true);
    } catch (error) {
      const sorted = messagesByField(error, ['msgCall', ...switches.map(([key]) => key)]);
      setErrors(sorted.byField);
      setGeneral(sorted.general);
    }
  };
  return (
    <form class="card narrow" onSubmit={save} aria-labelledby="settings-title">
      <h2 id="settings-title">Behaviour</h2>
      <Errors messages={general} />
      {switches.map(([key, label, hint]) => (
        <Check key={key} label={label} hint={hint} checked={settings[key] === true} onChange={(value) => change({ [key]: value })} />
      ))}
      <Field label="Message sent to a rejected caller" errors={errors.msgCall}>
        {(id, describedBy) => (
          <textarea
            id={id}
            name="msgCall"
            rows={2}
            value={settings.msgCall}
            aria-describedby={describedBy}
            onInput={(e) => change({ msgCall: e.currentTarget.value })}
          />
        )}
      </Field>
      <div class="actions">
        <button type="submit">Save settings</button>
        {saved && <Notice>Settings saved.</Notice>}
      </div>
    </form>
  );
}
