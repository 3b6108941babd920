// Messages between the webhook dispatcher and its sending thread, and the settings the thread starts with.
import type { Verdict } from '../outcome.js';
import type { SendRules, WebhookRequest } from '../ordered-send.js';

export interface ThreadSettings {
  rules: SendRules;
  /** OUTBOUND_DENY_PRIVATE for the thread's own guarded HTTP client. */
  denyPrivate: boolean;
}

export type ToThread = { type: 'send'; job: number; requests: WebhookRequest[]; startBefore: number } | { type: 'stop' };

export type FromThread = { type: 'sent'; job: number; verdicts: Verdict[] } | { type: 'stopped' };
