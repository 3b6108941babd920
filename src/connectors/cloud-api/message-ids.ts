// Meta's message ids (wamid.…) beside ours, kept in the store's per-instance key table so every node sees them.
import type { SessionKeyStore } from '../../core/connector.js';

const wamidToKey = 'cloud-api.wamid';
const keyToWamid = 'cloud-api.key';
const uploadedMedia = 'cloud-api.media';

/**
 * Our sends keep the key id chosen when they were accepted (the answer and the events carry it); Meta names the same
 * message with its own wamid. Status webhooks name the wamid, replies and reactions need it: both directions are kept.
 * Received messages keep Meta's wamid as their key id, so they need no entry.
 */
export class MessageIds {
  constructor(private readonly keys: SessionKeyStore) {}

  async remember(instanceId: string, keyId: string, wamid: string): Promise<void> {
    await this.keys.set(instanceId, [
      { type: wamidToKey, id: wamid, value: keyId },
      { type: keyToWamid, id: keyId, value: wamid },
    ]);
  }

  /** Our key ids of these wamids (the ones we sent); received wamids are their own key ids and are absent. */
  async keyIdsOf(instanceId: string, wamids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(wamids)];
    return new Map(Object.entries(await this.keys.get(instanceId, wamidToKey, unique)));
  }

  /** The wamid to name a message by on the Graph API: ours mapped, a received one (already a wamid) as it is. */
  async wamidOf(instanceId: string, keyId: string): Promise<string> {
    const found = await this.keys.get(instanceId, keyToWamid, [keyId]);
    return found[keyId] ?? keyId;
  }

  /** A media id from an earlier attempt of the same send (Meta keeps uploads 30 days), so a retry does not upload again. */
  async uploadedMediaOf(instanceId: string, blobId: string): Promise<string | undefined> {
    return (await this.keys.get(instanceId, uploadedMedia, [blobId]))[blobId];
  }

  async rememberUpload(instanceId: string, blobId: string, mediaId: string | null): Promise<void> {
    await this.keys.set(instanceId, [{ type: uploadedMedia, id: blobId, value: mediaId }]);
  }
}
