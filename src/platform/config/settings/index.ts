// Every setting of the service, declared once, in the README's order; the Config type is what they read into.
import type { SettingValues } from '../tree.js';
import { linking, media, operations, secrets, sending, server } from './service.js';
import { mediaConversion } from './media-conversion.js';
import { pacing } from './pacing.js';
import { rateLimit } from './rate-limit.js';
import { nats, rabbitmq, websocket } from './sinks.js';
import { webhook } from './webhook.js';
import { history } from './history.js';
import { logging } from './logging.js';
import { cluster } from './cluster.js';
import { waBusiness, waWeb } from './whatsapp.js';

export const settings = {
  ...server,
  ...logging,
  ...media,
  ...mediaConversion,
  ...sending,
  ...history,
  ...pacing,
  ...linking,
  ...webhook,
  ...secrets,
  ...websocket,
  waWeb,
  waBusiness,
  ...rabbitmq,
  ...nats,
  ...operations,
  ...cluster,
  ...rateLimit,
};

/** The configuration the service runs with (see src/platform/config/settings/ for each field's variable and meaning). */
export type Config = SettingValues<typeof settings>;
