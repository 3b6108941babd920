// Baileys auth state kept in the store: the creds as the instance's session record, Signal keys as many small rows.
import {
  BufferJSON,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from 'baileys';
import type { ConnectorHost } from '../../core/connector.js';
import type { Logger } from '../../platform/logger.js';

/** Marks a session record as this connector's (another kind's record, or a damaged one, means "no session"). */
const SESSION_KIND = 'whatsapp-web';

export interface StoreAuth {
  readonly state: AuthenticationState;
  /** True once a phone linked this device (pairing completed): only then is the session worth keeping. */
  linked(): boolean;
  /** Writes the creds to the store when linked (before that they live in memory only). */
  saveCreds(): Promise<void>;
  /** Forgets the pairing attempt of an unlinked session (a pairing code sets `me` before the phone confirms). */
  resetUnlinked(): void;
  /**
   * Ends the session's writes: key writes baileys still makes afterwards (a pre-key upload in flight, say) are
   * dropped, so forgetting the session cannot be undone by them.
   */
  close(): void;
}

function toPlain(value: unknown): Record<string, unknown> {
  // Round trip through BufferJSON so every Buffer becomes {type:'Buffer', data:<base64>}.
  return JSON.parse(JSON.stringify(value, BufferJSON.replacer)) as Record<string, unknown>;
}

/** The session record stored for linked creds (what `loadStoreAuth` reads back); an import writes the same. */
export function sessionRecordOf(creds: AuthenticationCreds): Record<string, unknown> {
  return { kind: SESSION_KIND, creds: toPlain(creds) };
}

/** A signal key's value as its session-key row holds it (BufferJSON text). */
export function storedKeyValue(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer);
}

/** Whether creds are of a device a phone linked (pairing completed): only then is a session worth keeping. */
export function credsLinked(creds: AuthenticationCreds): boolean {
  return Boolean(creds.me && creds.account);
}

function credsFromRecord(record: Record<string, unknown> | null): AuthenticationCreds | null {
  if (!record || record.kind !== SESSION_KIND || typeof record.creds !== 'object' || record.creds === null) return null;
  // The reviver turns the stored {type:'Buffer'} objects back into Buffers; the shape is the one saveCreds wrote.
  return JSON.parse(JSON.stringify(record.creds), BufferJSON.reviver) as AuthenticationCreds;
}

/** The Signal key store on the host's session-key rows; a batch of changes is written in one transaction. */
function hostKeyStore(host: ConnectorHost, instanceId: string, closed: () => boolean): SignalKeyStore {
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const rows = await host.sessionKeys.get(instanceId, type, ids);
      const result: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [id, text] of Object.entries(rows)) {
        let value: unknown = JSON.parse(text, BufferJSON.reviver);
        if (type === 'app-state-sync-key' && value) {
          value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
        }
        // Values are what set() wrote for this type.
        result[id] = value as SignalDataTypeMap[T];
      }
      return result;
    },
    async set(data: SignalDataSet) {
      if (closed()) return;
      const entries: { type: string; id: string; value: string | null }[] = [];
      for (const [type, values] of Object.entries(data)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          entries.push({ type, id, value: value === null || value === undefined ? null : storedKeyValue(value) });
        }
      }
      await host.sessionKeys.set(instanceId, entries);
    },
    async clear() {
      await host.sessionKeys.clear(instanceId);
    },
  };
}

/**
 * Loads the auth state of an instance: its stored creds when it is linked, else fresh creds (and any keys left by
 * an earlier unfinished linking are dropped, so a new link starts clean).
 */
export async function loadStoreAuth(host: ConnectorHost, instanceId: string, logger: Logger): Promise<StoreAuth> {
  const stored = credsFromRecord(await host.loadSession(instanceId));
  if (!stored) await host.sessionKeys.clear(instanceId);
  const creds = stored ?? initAuthCreds();
  // Baileys' ILogger is structurally what pino gives; keys are cached in memory (5 min) in front of the store.
  let closed = false;
  const keys = makeCacheableSignalKeyStore(
    hostKeyStore(host, instanceId, () => closed),
    logger,
  );
  const state: AuthenticationState = { creds, keys };
  const linked = () => credsLinked(state.creds);
  return {
    state,
    linked,
    async saveCreds() {
      if (!linked() || closed) return;
      await host.saveSession(instanceId, sessionRecordOf(state.creds));
    },
    close() {
      closed = true;
    },
    resetUnlinked() {
      if (linked()) return;
      state.creds.me = undefined;
      state.creds.pairingCode = undefined;
    },
  };
}
