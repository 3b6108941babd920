// The key of this tab: kept in session storage (gone with the tab), never in a URL; and what kind of key it is.
import { Api, ApiError } from './api';

const storageKey = 'switchboard.apikey';

export interface Session {
  key: string;
  api: Api;
  /** The global key may do everything; an instance key only its own instance. */
  kind: 'global' | 'instance';
  /** The instance of an instance key. */
  instance?: string;
}

export function storedKey(): string | null {
  return sessionStorage.getItem(storageKey);
}

export function forgetKey(): void {
  sessionStorage.removeItem(storageKey);
}

/** Checks a key against the API and learns its kind; a wrong key throws the API's 401. */
export async function openSession(key: string): Promise<Session> {
  const api = new Api(key);
  const own = await api.instances();
  // Naming an instance that cannot exist: the global key answers 404 (or an empty list), an instance key 403.
  let kind: Session['kind'] = 'global';
  try {
    await api.instances('-');
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 403) kind = 'instance';
    else if (error.status !== 404) throw error;
  }
  sessionStorage.setItem(storageKey, key);
  return { key, api, kind, ...(kind === 'instance' && own[0] ? { instance: own[0].instance.instanceName } : {}) };
}
