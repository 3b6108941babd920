// Which WhatsApp Web version to announce: the current one from web.whatsapp.com (cached), else Baileys' bundled one.
import { fetchLatestWaWebVersion, type WAVersion } from 'baileys';
import type { Logger } from '../../platform/logger.js';

const cacheMs = 6 * 3600_000;
const lookupTimeoutMs = 5_000;
/** After a failed lookup the bundled version is used for a while, so retries against a dead network do not wait on it. */
const failureCacheMs = 10 * 60_000;
let cached: { version: WAVersion; at: number } | undefined;
let failedAt: number | undefined;

/**
 * The version for a new socket. Only looked up when talking to WhatsApp itself (a configured WA_WEBSOCKET_URL, e.g.
 * a test server, gets Baileys' bundled version and no outside request). Undefined means "Baileys' default".
 */
export async function waWebVersion(useWhatsApp: boolean, logger: Logger): Promise<WAVersion | undefined> {
  if (!useWhatsApp) return undefined;
  if (cached && Date.now() - cached.at < cacheMs) return cached.version;
  if (failedAt !== undefined && Date.now() - failedAt < failureCacheMs) return undefined;
  const result = await fetchLatestWaWebVersion({ signal: AbortSignal.timeout(lookupTimeoutMs) });
  if (!result.isLatest) {
    failedAt = Date.now();
    logger.warn('could not read the current WhatsApp Web version; using the one bundled with baileys');
    return undefined;
  }
  failedAt = undefined;
  cached = { version: result.version, at: Date.now() };
  return result.version;
}
