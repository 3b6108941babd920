// The settings of the streaming event sinks: socket.io, RabbitMQ and NATS JetStream.
import { eventFilter, flag, matching, optionalText, requiredWhen, text, wholeNumber } from '../declare.js';

export const websocket = {
  websocketEnabled: flag({
    env: 'WEBSOCKET_ENABLED',
    default: false,
    meaning:
      "Serve socket.io on the HTTP port (path `/socket.io`): namespace `/<instance name>` per instance, for the global key or that instance's own key, filtered by `websocket/set`. The key goes in the handshake (`auth.apikey`, `apikey` header or query); no address skips it.",
  }),
  websocketGlobalEvents: flag({
    env: 'WEBSOCKET_GLOBAL_EVENTS',
    default: false,
    meaning:
      'With WEBSOCKET_ENABLED: every event of every instance, unfiltered, also goes to the default namespace `/` (global key only). When off, `/` refuses connections.',
  }),
};

const rabbitmqEnabled = flag({
  env: 'RABBITMQ_ENABLED',
  default: false,
  meaning: 'Publish events to RabbitMQ (publisher confirms; an event leaves the outbox only once confirmed).',
});

export const rabbitmq = {
  rabbitmqEnabled,
  rabbitmqUri: optionalText({
    env: 'RABBITMQ_URI',
    checks: [requiredWhen(rabbitmqEnabled), matching(/^amqps?:\/\//, 'must start with amqp:// or amqps://')],
    meaning: '`amqp(s)://user:pass@host:5672/vhost`; required when RABBITMQ_ENABLED=true.',
  }),
  rabbitmqExchangeName: text({
    env: 'RABBITMQ_EXCHANGE_NAME',
    default: 'evolution_exchange',
    meaning:
      'Durable topic exchange of the global events (routing key = event name, e.g. `messages.upsert`). Instance events go to the exchange named after the instance.',
  }),
  rabbitmqGlobalEnabled: flag({
    env: 'RABBITMQ_GLOBAL_ENABLED',
    default: false,
    meaning: "Send every instance's events to RABBITMQ_EXCHANGE_NAME too.",
  }),
  rabbitmqGlobalEvents: eventFilter({ prefix: 'RABBITMQ', meaning: 'Global RabbitMQ filter, same rule as WEBHOOK_EVENTS_<NAME>.' }),
  rabbitmqPrefixKey: text({ env: 'RABBITMQ_PREFIX_KEY', default: '', meaning: 'Prefix of the global queue names (`<prefix>.<event>`).' }),
  rabbitmqDeclareQueues: flag({
    env: 'RABBITMQ_DECLARE_QUEUES',
    default: true,
    meaning:
      "Declare and bind Evolution's durable quorum queues `<instance>.<event>` and `[<prefix>.]<event>`, so events are kept until consumed. Off: exchanges only; bind your own queues.",
  }),
};

const natsEnabled = flag({
  env: 'NATS_ENABLED',
  default: false,
  meaning: 'Publish events to NATS JetStream (subject `<instance>.<event>`, acknowledged by the stream, deduplicated by Nats-Msg-Id).',
});

export const nats = {
  natsEnabled,
  natsUrl: optionalText({
    env: 'NATS_URL',
    aliases: ['NATS_URI'],
    checks: [requiredWhen(natsEnabled)],
    meaning: "`nats://[user:pass@]host:4222` (comma list for a cluster); Evolution's NATS_URI is read too. Required when NATS_ENABLED=true.",
  }),
  natsGlobalEnabled: flag({
    env: 'NATS_GLOBAL_ENABLED',
    default: false,
    meaning: "Send every instance's events to the global subjects `[<NATS_PREFIX_KEY>.]<event>` too.",
  }),
  natsGlobalEvents: eventFilter({ prefix: 'NATS', meaning: 'Global NATS filter, same rule as WEBHOOK_EVENTS_<NAME>.' }),
  natsPrefixKey: text({
    env: 'NATS_PREFIX_KEY',
    default: '',
    checks: [matching(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated words (no spaces or wildcards)', { exceptEmpty: true })],
    meaning: 'Prefix of the global subjects.',
  }),
  natsStream: text({
    env: 'NATS_STREAM',
    default: 'SWITCHBOARD',
    checks: [matching(/^[A-Za-z0-9_-]+$/, 'may hold letters, digits, - and _ only')],
    meaning: 'JetStream stream holding the events; created when missing, subjects `<instance>.>` added as needed.',
  }),
  natsStreamMaxAgeMs: wholeNumber({
    env: 'NATS_STREAM_MAX_AGE_SECONDS',
    default: 7 * 86400,
    min: 0,
    max: 3650 * 86400,
    scale: 1000,
    meaning: 'Age limit given to the stream when Switchboard creates it (0 = none).',
  }),
};
