// Settings of the WHATSAPP-BUSINESS integration (Meta Cloud API) and the stable verify token derived when none is set.
import { createHmac } from 'node:crypto';

export interface CloudApiSettings {
  /** Graph API base address without the version (`WA_BUSINESS_URL`, default https://graph.facebook.com). */
  url: string;
  /** Graph API version path segment (`WA_BUSINESS_VERSION`, default v20.0). */
  version: string;
  /** The token Meta must echo in the webhook verification handshake (`WA_BUSINESS_TOKEN_WEBHOOK`). */
  verifyToken: string;
  /** App secrets that may sign webhook posts (`WA_BUSINESS_APP_SECRET`, comma list for rotation); empty refuses every post. */
  appSecrets: string[];
  /** Time limit of one Graph API request (`WA_BUSINESS_TIMEOUT_MS`). */
  timeoutMs: number;
}

/**
 * The verify token used when `WA_BUSINESS_TOKEN_WEBHOOK` is unset: derived from the secrets key, so it is unguessable,
 * survives restarts and is the same on every node (they share SECRETS_KEY) without another file to keep.
 */
export function deriveVerifyToken(secretsKey: Buffer): string {
  return createHmac('sha256', secretsKey).update('switchboard/wa-business/verify-token').digest('base64url').slice(0, 32);
}

/** The `/<version>` path segment; a version given without its `v` (`20.0`) is accepted. */
export function versionSegment(version: string): string {
  const trimmed = version.trim().replace(/^\/+|\/+$/g, '');
  return /^\d/.test(trimmed) ? `v${trimmed}` : trimmed;
}
