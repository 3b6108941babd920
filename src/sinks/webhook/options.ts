// A webhook's own settings (URL, by-events, base64, headers, sealed secret) read out of its stored sink options.
import type { SinkConfig } from '../../core/event-sink.js';

export interface WebhookOptions {
  url: string;
  byEvents: boolean;
  base64: boolean;
  headers: Record<string, string>;
  secretSealed?: string;
}

export function webhookOptions(config: SinkConfig): WebhookOptions {
  const o = config.options;
  return {
    url: typeof o.url === 'string' ? o.url : '',
    byEvents: o.byEvents === true,
    base64: o.base64 === true,
    headers: (o.headers as Record<string, string> | undefined) ?? {},
    secretSealed: typeof o.secretSealed === 'string' ? o.secretSealed : undefined,
  };
}
