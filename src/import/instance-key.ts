// The key an imported instance answers to: Evolution's token when Switchboard can take it, a new one otherwise (said so).
import { generateApiKey } from '../platform/util/api-keys.js';

export interface KeyChoice {
  apikey: string;
  /** Why the token was not kept, or what to know about it. */
  warning?: string;
}

/** Keys shorter than this are accepted from Evolution (clients hold them) but flagged: new keys are longer. */
const shortKey = 16;

/**
 * Keeps Evolution's token unless it cannot be an instance key here: none, one no client could send in a header, the
 * global key, or one another instance already answers to (`inUseBy` names that instance).
 */
export function chooseKey(token: string | null, globalApiKey: string, inUseBy: (key: string) => string | undefined): KeyChoice {
  const fresh = (why: string): KeyChoice => ({
    apikey: generateApiKey(),
    warning: `${why}: a new key was generated (fetchInstances with the global key shows it)`,
  });
  if (!token) return fresh('no token in Evolution');
  if (!/^[\x21-\x7e]+$/.test(token)) return fresh('its token holds characters an apikey header cannot carry');
  if (token === globalApiKey) return fresh("its token is Switchboard's global key");
  const owner = inUseBy(token);
  if (owner) return fresh(`its token is already the key of instance "${owner}"`);
  if (token.length < shortKey) return { apikey: token, warning: `its key is shorter than ${shortKey} characters: consider giving it a longer one` };
  return { apikey: token };
}
