// The fleet at a glance (global key): every node sharing the store, its state, last heartbeat and instances owned.
import { useState } from 'preact/hooks';
import { ApiError, type Cluster, type ClusterNode } from '../api';
import { ago } from '../format';
import { useNow, usePoll } from '../hooks';
import type { Session } from '../session';
import { Errors, StateBadge, Tiles, type Tile } from '../ui';

/** How often the page asks again while it is open. */
const refreshMs = 3000;

export function ClusterPage({ session }: { session: Session }) {
  return (
    <section aria-labelledby="cluster-title">
      <h1 id="cluster-title">Cluster</h1>
      {session.kind === 'global' ? (
        <ClusterView session={session} />
      ) : (
        <div class="alert warn" role="status">
          <p>The cluster view needs the global key: an instance key sees its own instance only (GET /messenger/cluster answers it 403).</p>
        </div>
      )}
    </section>
  );
}

interface Snapshot {
  cluster: Cluster;
  store: string;
  at: number;
}

function ClusterView({ session }: { session: Session }) {
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const now = useNow();
  usePoll(async () => {
    try {
      const [cluster, health] = await Promise.all([session.api.cluster(), session.api.health()]);
      setSnapshot({ cluster, store: health.store, at: Date.now() });
      setErrors([]);
    } catch (error) {
      setErrors([explain(error)]);
    }
  }, refreshMs);

  if (!snapshot) return errors.length > 0 ? <Errors messages={errors} /> : <p class="loading">Loading…</p>;
  const { cluster, store } = snapshot;
  const alive = cluster.nodes.filter((node) => node.state === 'alive');
  const owned = cluster.nodes.reduce((sum, node) => sum + node.instances, 0);
  const singleNode = store === 'sqlite';
  // A node stopped cleanly handed its work over; a dead one (silent) is what needs a look.
  const anyDead = cluster.nodes.some((node) => node.state === 'dead');
  const tiles: Tile[] = [
    ['Nodes alive', `${alive.length} of ${cluster.nodes.length}`, anyDead ? 'bad' : alive.length === cluster.nodes.length ? 'good' : undefined],
    ['Instances owned', String(owned)],
    ['Answered by', cluster.self.nodeId],
    ['Dead after (no heartbeat)', `${cluster.deadAfterMs / 1000} s`],
  ];
  return (
    <>
      <p class="muted small" title="How the page stays current">
        Refreshing every {refreshMs / 1000} s · last answer {ago(new Date(snapshot.at).toISOString(), now)}
      </p>
      <Errors messages={errors} />
      {singleNode && (
        <div class="alert ok" role="status">
          <p>This store (SQLite) is single-node: one node runs everything. A fleet of nodes shares a PostgreSQL store.</p>
        </div>
      )}
      <Tiles tiles={tiles} />
      <div class="table-wrap">
        <table class="cluster">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Address</th>
              <th scope="col">State</th>
              <th scope="col">Last heartbeat</th>
              <th scope="col">Started</th>
              <th scope="col" class="num">
                Instances owned
              </th>
            </tr>
          </thead>
          <tbody>
            {cluster.nodes.map((node) => (
              <NodeRow key={node.incarnation} node={node} now={now} />
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted small">
        Incarnations seen in the last 24 hours, newest first: a node that restarts shows a new incarnation, its earlier one stopped. Instances owned: their
        connections and sends run on that node.
      </p>
    </>
  );
}

function NodeRow({ node, now }: { node: ClusterNode; now: number }) {
  return (
    <tr data-node={node.nodeId} class={node.self ? 'self' : undefined}>
      <td data-label="Node">
        <span class="strong">{node.nodeId}</span>
        {node.self && <span class="badge this-node">this node</span>}
        <div class="muted small mono" title="Incarnation: one life of the node, new at every start">
          {node.incarnation}
        </div>
      </td>
      <td data-label="Address" class="mono">
        {node.address ?? '—'}
      </td>
      <td data-label="State">
        <span title={node.stoppedAt ? `Stopped ${new Date(node.stoppedAt).toLocaleString()}` : undefined}>
          <StateBadge state={node.state} />
        </span>
      </td>
      <td data-label="Last heartbeat">{ago(node.heartbeatAt, now)}</td>
      <td data-label="Started">{ago(node.startedAt, now)}</td>
      <td data-label="Instances owned" class="num">
        {node.instances}
      </td>
    </tr>
  );
}

/** What went wrong, in words a person can act on. */
function explain(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return 'The key is no longer accepted (401): log out and log in again with the global key.';
    if (error.status === 403) return 'This key may not see the cluster (403): the cluster view needs the global key.';
    return `The cluster could not be read: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}
