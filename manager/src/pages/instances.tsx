// The instance list: live state, owner, profile, last activity, queued sends and delivery trouble; search and filter.
import { useEffect, useState } from 'preact/hooks';
import type { InstanceActivity, InstanceListing } from '../api';
import type { Session } from '../session';
import { href, useNow, usePoll } from '../hooks';
import { followEvents, type LiveStatus } from '../live';
import { ago, numberOf } from '../format';
import { Avatar, Errors, StateBadge } from '../ui';

interface Row {
  listing: InstanceListing;
  activity?: InstanceActivity;
}

export function InstancesPage({ session }: { session: Session }) {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [search, setSearch] = useState('');
  const [state, setState] = useState('all');
  const [live, setLive] = useState<LiveStatus>('connecting');
  const [nudge, setNudge] = useState(0);
  const now = useNow();

  const load = async () => {
    try {
      const [listings, activity] = await Promise.all([session.api.instances(), session.api.activity()]);
      const byName = new Map(activity.instances.map((a) => [a.instanceName, a]));
      setRows(listings.map(({ instance }) => ({ listing: instance, activity: byName.get(instance.instanceName) })));
      setErrors([]);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  // Polling keeps the list true without the websocket; with it, a change is shown at once.
  usePoll(load, live === 'live' ? 5000 : 2500, [nudge, live]);
  useEffect(() => {
    if (session.kind !== 'global') return;
    return followEvents(
      session.key,
      null,
      (event) => {
        if (/connection|instance|qrcode|logout/i.test(event.event)) setNudge((n) => n + 1);
      },
      setLive,
    );
  }, [session]);

  const shown = (rows ?? []).filter(({ listing, activity }) => {
    const current = activity?.state ?? listing.status;
    if (state !== 'all' && current !== state) return false;
    const needle = search.trim().toLowerCase();
    if (!needle) return true;
    return [listing.instanceName, listing.owner, listing.profileName, listing.integration.integration].some((v) => v?.toLowerCase().includes(needle));
  });

  return (
    <section aria-labelledby="instances-title">
      <div class="page-head">
        <h1 id="instances-title">Instances</h1>
        {session.kind === 'global' && (
          <a class="button" href={href('new')}>
            New instance
          </a>
        )}
      </div>
      <div class="toolbar">
        <label class="inline">
          <span>Search</span>
          <input type="search" value={search} placeholder="name, number, profile…" onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <label class="inline">
          <span>State</span>
          <select value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="all">all</option>
            <option value="open">open</option>
            <option value="connecting">connecting</option>
            <option value="close">close</option>
          </select>
        </label>
        <span class="muted small" title="How the list stays current">
          {live === 'live' ? 'live (websocket)' : 'refreshing every few seconds'}
        </span>
      </div>
      <Errors messages={errors} />
      {rows === null ? (
        <p class="loading">Loading…</p>
      ) : rows.length === 0 ? (
        <div class="empty card">
          <p>No instances yet.</p>
          {session.kind === 'global' && (
            <p>
              <a href={href('new')}>Create one</a>: a SANDBOX instance links without a phone.
            </p>
          )}
        </div>
      ) : (
        <div class="table-wrap">
          <table class="instances">
            <thead>
              <tr>
                <th scope="col">Instance</th>
                <th scope="col">State</th>
                <th scope="col">Account</th>
                <th scope="col">Last activity</th>
                <th scope="col" class="num">
                  Queued sends
                </th>
                <th scope="col" class="num">
                  Failing
                </th>
                <th scope="col" class="num">
                  Dead-lettered
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map(({ listing, activity }) => (
                <tr key={listing.instanceId} data-instance={listing.instanceName}>
                  <td data-label="Instance">
                    <a href={href('instances', listing.instanceName)} class="strong">
                      {listing.instanceName}
                    </a>
                    <div class="muted small">{listing.integration.integration}</div>
                  </td>
                  <td data-label="State">
                    <StateBadge state={activity?.state ?? listing.status} />
                  </td>
                  <td data-label="Account">
                    {listing.owner ? (
                      <span class="account">
                        <Avatar url={listing.profilePictureUrl} name={listing.profileName || numberOf(listing.owner)} />
                        <span>
                          <span class="strong">{listing.profileName || '—'}</span>
                          <span class="muted small block">+{numberOf(listing.owner)}</span>
                        </span>
                      </span>
                    ) : (
                      <span class="muted">not linked</span>
                    )}
                  </td>
                  <td data-label="Last activity">{ago(activity?.lastActivityAt, now)}</td>
                  <td data-label="Queued sends" class="num">
                    {activity?.queuedSends ?? 0}
                  </td>
                  <td data-label="Failing" class={`num${activity?.deliveries.failing ? ' warn' : ''}`}>
                    {activity?.deliveries.failing ?? 0}
                  </td>
                  <td data-label="Dead-lettered" class={`num${activity?.deliveries.dead ? ' bad' : ''}`}>
                    {activity?.deliveries.dead ? <a href={href('instances', listing.instanceName, 'deliveries')}>{activity.deliveries.dead}</a> : 0}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p class="muted">No instance matches.</p>}
        </div>
      )}
    </section>
  );
}
