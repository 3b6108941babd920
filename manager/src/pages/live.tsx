// The instance's events as they happen, from the socket.io stream; each payload shown as text.
import { useEffect, useState } from 'preact/hooks';
import { Errors } from '../ui';
import type { InstanceView } from './instance-view';

export function LiveTab({ view }: { view: InstanceView }) {
  const { session, name, events, live } = view;
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [filter, setFilter] = useState('');

  useEffect(() => {
    session.api
      .sink('websocket', name)
      .then((found) => setEnabled(found?.enabled === true))
      .catch(() => setEnabled(null));
  }, [session, name]);

  const enable = async () => {
    try {
      await session.api.setSink('websocket', name, { enabled: true, events: [] });
      setEnabled(true);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  const shown = events.filter((event) => !filter || event.event.includes(filter.toLowerCase()));

  return (
    <section class="card" aria-labelledby="live-title">
      <div class="page-head">
        <h2 id="live-title">Live events</h2>
        <span class={`badge live-${live}`}>{live === 'live' ? 'connected' : live === 'connecting' ? 'connecting…' : 'websocket off'}</span>
      </div>
      <Errors messages={errors} />
      {live === 'unavailable' && <p class="muted">The service's websocket is off (WEBSOCKET_ENABLED=false): the other pages refresh by polling instead.</p>}
      {live !== 'unavailable' && enabled === false && (
        <p>
          This instance sends no events to the websocket yet.{' '}
          <button type="button" onClick={enable}>
            Send all its events to the websocket
          </button>
        </p>
      )}
      <label class="inline">
        <span>Filter</span>
        <input type="search" value={filter} placeholder="messages.upsert…" onInput={(e) => setFilter(e.currentTarget.value)} />
      </label>
      {shown.length === 0 ? (
        <p class="muted">No events yet since this page opened.</p>
      ) : (
        <ol class="event-log" aria-live="polite">
          {shown.map((event, i) => (
            <li key={event.id ?? i}>
              <div class="event-head">
                <span class="badge">{event.event}</span>
                <time class="muted small">{event.date_time}</time>
              </div>
              <pre>{JSON.stringify(event.data, null, 2)}</pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
