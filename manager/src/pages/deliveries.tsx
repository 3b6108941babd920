// The webhook delivery log of an instance, by status, with each delivery's attempts and answer; redeliver one or all dead ones.
import { useState } from 'preact/hooks';
import type { Delivery, DeliveryStatus } from '../api';
import { usePoll } from '../hooks';
import { ago } from '../format';
import { Errors, Notice } from '../ui';
import type { InstanceView } from './instance-view';

const statuses: ('' | DeliveryStatus)[] = ['', 'pending', 'delivered', 'dead', 'cancelled'];

export function DeliveriesTab({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [status, setStatus] = useState<'' | DeliveryStatus>('');
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [notice, setNotice] = useState('');
  const [nudge, setNudge] = useState(0);

  usePoll(
    async () => {
      try {
        const page = await session.api.deliveries(name, status || undefined);
        setDeliveries(page.deliveries);
        setErrors([]);
      } catch (error) {
        setErrors([error instanceof Error ? error.message : String(error)]);
      }
    },
    3000,
    [name, status, nudge],
  );

  const redeliver = async (which: { deliveryId: number } | { status: 'dead' }) => {
    setNotice('');
    try {
      const { requeued } = await session.api.redeliver(name, which);
      setNotice(requeued === 1 ? 'One delivery queued again.' : `${requeued} deliveries queued again.`);
      setNudge((n) => n + 1);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };

  return (
    <section class="card" aria-labelledby="deliveries-title">
      <div class="page-head">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <button type="button" class="secondary" onClick={() => redeliver({ status: 'dead' })}>
          Redeliver all dead-lettered
        </button>
      </div>
      <fieldset class="toolbar filter">
        <legend class="sr-only">Filter by status</legend>
        {statuses.map((s) => (
          <button key={s || 'all'} type="button" class={`chip${s === status ? ' on' : ''}`} aria-pressed={s === status} onClick={() => setStatus(s)}>
            {s || 'all'}
          </button>
        ))}
      </fieldset>
      <Errors messages={errors} />
      {notice && <Notice>{notice}</Notice>}
      {deliveries === null ? (
        <p class="loading">Loading…</p>
      ) : deliveries.length === 0 ? (
        <p class="muted">No deliveries{status ? ` with status ${status}` : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="deliveries">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id} data-delivery={d.id} data-status={d.status}>
                  <td data-label="#">{d.id}</td>
                  <td data-label="Event">
                    <span class="strong">{d.event}</span>
                    <div class="muted small break">
                      {d.target} · {d.url}
                    </div>
                  </td>
                  <td data-label="Status">
                    <span class={`badge delivery-${d.status}`}>{d.status}</span>
                  </td>
                  <td data-label="Attempts" class="num">
                    {d.attempts}
                  </td>
                  <td data-label="Last answer" class="break">
                    {d.lastStatus !== null ? `HTTP ${d.lastStatus}` : ''}
                    {d.lastError ? <div class="muted small">{d.lastError}</div> : null}
                    {d.status === 'pending' && d.nextAttemptAt ? (
                      <div class="muted small">next try {new Date(d.nextAttemptAt).toLocaleTimeString()}</div>
                    ) : null}
                    {d.deliveredAt ? <div class="muted small">delivered {ago(d.deliveredAt)}</div> : null}
                  </td>
                  <td data-label="Created">{ago(d.createdAt)}</td>
                  <td>
                    {d.status !== 'pending' && (
                      <button type="button" class="secondary small" onClick={() => redeliver({ deliveryId: d.id })} aria-label={`Redeliver delivery ${d.id}`}>
                        Redeliver
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
