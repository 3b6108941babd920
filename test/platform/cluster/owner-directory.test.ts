// The owner directory: who holds an instance's live connection, as the store says it now (a live node, none yet, or
// no node ever given it).
import { describe, expect, it } from 'vitest';
import { OwnerDirectory } from '../../../src/platform/cluster/owner-directory.js';
import { storeTargets, suiteStore } from '../../support/harness.js';

const targets = await storeTargets();

describe.each(targets)('the owner directory on $name', (target) => {
  describe.skipIf(!target.available)('reading instance_owners and nodes', () => {
    const store = suiteStore(target);
    const now = 1_000_000;
    const deadAfterMs = 10_000;

    async function node(incarnation: string, heartbeatAt: number, stoppedAt: number | null, address: string | null = `http://${incarnation}:8080`) {
      await store()
        .db.insertInto('nodes')
        .values({ incarnation, node_id: incarnation, address, started_at: 0, heartbeat_at: heartbeatAt, stopped_at: stoppedAt })
        .execute();
    }
    async function owned(instanceId: string, owner: string | null) {
      await store().db.insertInto('instance_owners').values({ instance_id: instanceId, owner, generation: 1, since: now }).execute();
    }

    it('answers self, a live other node with its address, moving (no owner, dead, stopped) and unassigned', async () => {
      await node('me', now, null);
      await node('other', now - 2000, null);
      await node('dead', now - deadAfterMs - 1, null);
      await node('stopped', now, now - 10);
      await node('no-address', now, null, null);
      await owned('i-self', 'me');
      await owned('i-other', 'other');
      await owned('i-dead', 'dead');
      await owned('i-stopped', 'stopped');
      await owned('i-none', null);
      await owned('i-gone', 'forgotten-node');
      await owned('i-no-address', 'no-address');
      const directory = new OwnerDirectory({ db: store().db, self: 'me', deadAfterMs, now: () => now });

      expect(await directory.ownerOf('i-self')).toEqual({ incarnation: 'me', address: 'http://me:8080', self: true });
      expect(await directory.ownerOf('i-other')).toEqual({ incarnation: 'other', address: 'http://other:8080', self: false });
      expect(await directory.ownerOf('i-no-address')).toEqual({ incarnation: 'no-address', address: null, self: false });
      for (const id of ['i-dead', 'i-stopped', 'i-none', 'i-gone']) expect(await directory.ownerOf(id), id).toBe('moving');
      expect(await directory.ownerOf('i-never')).toBe('unassigned');

      // Asked again, it reads the store again: a change is seen at once.
      await store().db.updateTable('instance_owners').set({ owner: 'other' }).where('instance_id', '=', 'i-dead').execute();
      const [first, second] = await Promise.all([directory.ownerOf('i-dead'), directory.ownerOf('i-dead')]);
      expect(first).toEqual({ incarnation: 'other', address: 'http://other:8080', self: false });
      expect(second).toEqual(first);

      // An instance this node holds in memory is its own without a look at the store (even before its row is read).
      const holding = new OwnerDirectory({ db: store().db, self: 'me', deadAfterMs, now: () => now, heldHere: (id) => id === 'i-held' });
      expect(await holding.ownerOf('i-held')).toEqual({ incarnation: 'me', address: null, self: true });
      expect(await holding.ownerOf('i-other')).toEqual({ incarnation: 'other', address: 'http://other:8080', self: false });
    });
  });
});
