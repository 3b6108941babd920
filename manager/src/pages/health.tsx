// Health at a glance: the store, the queue's depth, how far the outbox lags, the version, and where to look further.
import { useState } from 'preact/hooks';
import type { Activity, Health } from '../api';
import type { Session } from '../session';
import { usePoll } from '../hooks';
import { Errors, Tiles, type Tile } from '../ui';

export function HealthPage({ session }: { session: Session }) {
  const [health, setHealth] = useState<Health | null>(null);
  const [activity, setActivity] = useState<Activity | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  usePoll(async () => {
    try {
      const [h, a] = await Promise.all([session.api.health(), session.api.activity()]);
      setHealth(h);
      setActivity(a);
      setErrors([]);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  }, 3000);
  const open = activity?.instances.filter((i) => i.state === 'open').length ?? 0;
  const tiles: Tile[] = [
    ['Service', health?.status ?? '…', health?.status === 'ok' ? 'good' : 'bad'],
    ['Store', health?.store ?? '…'],
    ['Version', health?.version ?? '…'],
    ['Instances open', activity ? `${open} of ${activity.instances.length}` : '…'],
    ['Queued sends', activity ? String(activity.totals.queuedSends) : '…'],
    ['Deliveries waiting', activity ? String(activity.totals.deliveries.pending) : '…'],
    ['Dead-lettered', activity ? String(activity.totals.deliveries.dead) : '…', activity?.totals.deliveries.dead ? 'bad' : undefined],
    ['Outbox lag', activity ? `${activity.totals.outboxLagSeconds} s` : '…', (activity?.totals.outboxLagSeconds ?? 0) > 60 ? 'bad' : undefined],
  ];
  return (
    <section aria-labelledby="health-title">
      <h1 id="health-title">Health</h1>
      <Errors messages={errors} />
      <Tiles tiles={tiles} />
      <p class="links">
        <a href="/messenger/docs" target="_blank" rel="noreferrer">
          API documentation (/messenger/docs)
        </a>
        <a href="/metrics" target="_blank" rel="noreferrer">
          Prometheus metrics (/metrics, with METRICS_ENABLED)
        </a>
        <a href="/health" target="_blank" rel="noreferrer">
          /health
        </a>
      </p>
    </section>
  );
}
