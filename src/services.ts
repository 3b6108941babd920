// The composition root: builds every part of the service on one store and wires them together.
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import type { Store } from './platform/store/db.js';
import { SecretsBox } from './platform/util/secrets-box.js';
import { InstanceRegistry } from './instances/registry.js';
import { InstanceLifecycle } from './instances/lifecycle.js';
import { InstanceOwnership } from './instances/ownership.js';
import { removeOwnerOf } from './instances/owner-queries.js';
import { InstanceConnectorHost } from './instances/connector-host.js';
import { InstanceRemoval } from './instances/removal.js';
import { removeSessionsOf, SessionStore } from './instances/sessions.js';
import { InstanceService } from './instances/service.js';
import { SinkConfigs } from './events/sink-configs.js';
import { EventWriter, type OutboxSink } from './events/writer.js';
import type { SinkCreation } from './core/event-sink.js';
import { sendRules, WebhookDispatcher } from './sinks/webhook/dispatcher.js';
import { NodeRegistry } from './platform/cluster/node-registry.js';
import { createMediaResolver, mediaResolverSettings } from './sinks/webhook/media-resolver.js';
import { ThreadSender } from './sinks/webhook/thread/host.js';
import { StatusRecorder } from './messages/status-recorder.js';
import { SendWorkers } from './messages/send-worker.js';
import { ApiPriority } from './platform/util/api-priority.js';
import { SendQueue } from './messages/send-queue.js';
import { SendWakeups } from './messages/send-wakeups.js';
import { SendService } from './messages/send-service.js';
import { SendOutcomes } from './messages/send-outcomes.js';
import { KindRegistry } from './connectors/kind-registry.js';
import { connectorKinds, type KindEntry } from './connectors/kinds.js';
import { removeMediaBlobsOf, removeMessagesOf } from './messages/removal.js';
import { removeEventLogOf, removeSinkSettingsOf } from './events/removal.js';
import type { Connector } from './core/connector.js';
import type { Instance } from './core/instance.js';
import { Metrics } from './observability/metrics.js';
import { EventRetention } from './events/retention.js';
import { OutboxSignal } from './events/outbox-signal.js';
import { JobLease } from './platform/cluster/job-lease.js';
import { createEventSinks } from './sinks/list.js';
import type { WebsocketSink } from './sinks/websocket/sink.js';
import { SandboxMediaStore } from './connectors/sandbox/media-store.js';
import { OutgoingMessages } from './messages/outgoing.js';
import { Ffmpeg } from './media/ffmpeg.js';
import { ChatOperations } from './messages/chat-operations.js';
import { ProfileOperations } from './instances/profile.js';
import { KnownAddressBook } from './history/known.js';
import { HistoryRecorder } from './history/recorder.js';
import { HistoryReads } from './history/reads.js';
import { ChatMarks } from './history/chat-marks.js';
import { removeHistoryOf } from './history/removal.js';
import { eventSourceOf } from './core/event-envelope.js';
import type { Pacing } from './core/pacing.js';
import type { PacingClock } from './messages/pacing-gate.js';
import { MessageChanges } from './messages/message-changes.js';
import { SentMessageChanges } from './messages/sent-message-changes.js';
import { BlockOperations } from './messages/block-operations.js';
import { MediaDownloads } from './messages/media-download.js';
import { GroupOperations } from './groups/service.js';
import { LabelBook } from './history/label-book.js';
import { LabelOperations } from './history/labels.js';
import { removeTemplatesOf, TemplateOperations } from './messages/templates.js';
import { ProxyStore, removeProxyOf } from './instances/proxies.js';
import { ProxyService } from './instances/proxy-service.js';
import { probeProxy } from './platform/net/proxy-probe.js';

export interface Services {
  config: Config;
  logger: Logger;
  store: Store;
  box: SecretsBox;
  globalApiKey: string;
  registry: InstanceRegistry;
  sinks: SinkConfigs;
  events: EventWriter;
  /** The registered connector kinds: what each integration is and can do. */
  kinds: KindRegistry;
  /** Where connectors report; it stores and announces what they report. */
  connectorHost: InstanceConnectorHost;
  /** Starts and stops connectors and send workers. */
  lifecycle: InstanceLifecycle;
  /** What every feature keeps of an instance, deleted with it (hooks run in a unit: a delete, an import replacing one). */
  removal: InstanceRemoval;
  instances: InstanceService;
  /** Each instance's outbound proxy: set, find, and applied to what it sends out. */
  proxies: ProxyService;
  workers: SendWorkers;
  /** Told of every API request: background work lets a busy API go first. */
  priority: ApiPriority;
  sends: SendService;
  /** The send use cases behind the send routes. */
  outgoing: OutgoingMessages;
  /** Media conversions in a child process (voice notes, round videos), a bounded number at once. */
  ffmpeg: Ffmpeg;
  /** Privacy, presence and read receipts through the live connection. */
  chats: ChatOperations;
  /** Profiles, the own name and "about", and reading privacy settings. */
  profiles: ProfileOperations;
  /** Stored messages, chats, contacts and statuses read back (the find routes). */
  historyReads: HistoryReads;
  /** Archiving chats and marking them unread or read. */
  chatMarks: ChatMarks;
  /** Deleting own messages for everyone and editing them. */
  messageChanges: SentMessageChanges;
  /** Blocking and unblocking accounts. */
  blocks: BlockOperations;
  /** Media messages' bytes through the connector that has them. */
  mediaDownloads: MediaDownloads;
  /** Groups: creating and administering them, invites, participants, settings. */
  groups: GroupOperations;
  /** Labels and chats' labels. */
  labels: LabelOperations;
  /** Meta message templates (WHATSAPP-BUSINESS). */
  templates: TemplateOperations;
  webhooks: WebhookDispatcher;
  /** This node in the store: its incarnation and heartbeat, and who else is alive. */
  nodes: NodeRegistry;
  metrics: Metrics;
  retention: EventRetention;
  /** Where events go (webhook, websocket, brokers), in the order they see each event. */
  eventSinks: readonly OutboxSink[];
  /** The websocket sink, which the socket.io server attaches to. */
  websocket: WebsocketSink;
  /** What the sinks add to instance creation. */
  sinkCreation: SinkCreation;
  /** Loads state, starts workers, takes this node's share of the instances and opens them (the two steps below). */
  start(): Promise<void>;
  /**
   * Everything but opening the instances: this node registered, the store's state loaded, workers and sinks started,
   * and this node's share of the instances taken (all of them on a one-node store), none opened yet. The process
   * builds its HTTP server meanwhile, listens, and then calls `openInstances`.
   */
  prepare(): Promise<void>;
  /** Opens the instances this node owns, a bounded number at once; resolves when all started (or a stop cut it short). */
  openInstances(): Promise<void>;
  /** Stops workers and connections (the store stays open). */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  store: Store;
  globalApiKey: string;
  secretsKey: Buffer;
  /** The connector kinds to register (default: the four of src/connectors/kinds.ts); a test may add one. */
  kinds?: readonly KindEntry[];
  /** The time the pacing gates read and wait on (the system's unless a test drives its own). */
  pacingClock?: PacingClock;
}

/** The pacing of instances that set none of their own. */
function defaultPacing(config: Config): Pacing {
  return {
    enabled: config.pacingEnabled,
    maxPerMinute: config.pacingMaxPerMinute,
    minGapMs: config.pacingMinGapMs,
    maxGapMs: config.pacingMaxGapMs,
    newChatDelayMs: config.pacingNewChatDelayMs,
  };
}

/** The API counts as busy for this long after a request arrived. */
const apiBusyWindowMs = 20;

export function createServices({
  config,
  logger,
  store,
  globalApiKey,
  secretsKey,
  kinds: kindEntries = connectorKinds,
  pacingClock,
}: ServiceOptions): Services {
  const box = new SecretsBox(secretsKey);
  // A fleet's nodes share one PostgreSQL store: what one node changes, the others read back; sends wake their worker anywhere.
  const fleet = store.dialect === 'postgres';
  const registry = new InstanceRegistry(store.db, box, store.signals);
  const sinks = new SinkConfigs(store.db, store.signals);
  const metrics = new Metrics(store.db);
  // Only read here, so the server URL it would put into upload answers is never used.
  const sandboxMedia = new SandboxMediaStore(config.dataDir, () => '', store.dialect === 'postgres' ? store.db : undefined);
  const nodes = new NodeRegistry({
    db: store.db,
    nodeId: config.nodeId,
    address: config.nodeAddress,
    heartbeatMs: config.nodeHeartbeatMs,
    deadAfterMs: config.nodeDeadAfterMs,
    oneNodeStore: store.dialect === 'sqlite',
    logger,
  });
  const webhooks = new WebhookDispatcher({
    claimant: nodes.incarnation,
    store,
    config,
    sinks,
    box,
    logger,
    mediaResolver: createMediaResolver({ ...mediaResolverSettings(config), readSandboxFile: (name) => sandboxMedia.read(name) }),
    // Requests leave from a thread of their own unless configured otherwise.
    ...(config.webhookDeliveryThread ? { sender: new ThreadSender({ rules: sendRules(config), denyPrivate: config.outboundDenyPrivate }, logger) } : {}),
    onOutcome: (row, result) => metrics.deliveryOutcome(row.instance_name, row.target, result, row.created_at),
  });
  // On every heartbeat, the webhook claims of dead nodes are taken over.
  nodes.onLiveNodes((live) => webhooks.takeOverFrom(live));
  // Each instance is live on one node: the one owning it (its connector, its sends, the writes for it).
  const ownership = new InstanceOwnership({
    db: store.db,
    dialect: store.dialect,
    signals: store.signals,
    logger,
    nodes,
    heartbeatMs: config.nodeHeartbeatMs,
    deadAfterMs: config.nodeDeadAfterMs,
    nameOf: (id) => registry.byInstanceId(id)?.name,
  });
  metrics.ownedInstances(() => ownership.ownedCount());
  // Every node reads the outbox for its websocket clients; broker relays and retention run on one live node at a time.
  const outboxSignal = new OutboxSignal(store.signals, logger);
  const node = {
    incarnation: nodes.incarnation,
    deadAfterMs: config.nodeDeadAfterMs,
    onLiveNodes: (listener: () => Promise<unknown>) => nodes.onLiveNodes(listener),
  };
  const eventSinks = createEventSinks({
    config,
    store,
    sinks,
    seal: (secret) => box.seal(secret),
    logger,
    webhookDelivery: webhooks,
    node,
    commits: outboxSignal,
  });
  const events = new EventWriter(config, sinks, eventSinks.list, () => outboxSignal.committed());
  const apikeyOf = registry.apikeyOf.bind(registry);
  const statuses = new StatusRecorder(events, store.dialect, apikeyOf, config.saveMessageUpdates);
  const sourceOf = (instance: Instance) => eventSourceOf(instance, apikeyOf);
  const known = new KnownAddressBook(store.db, fleet ? store.signals : undefined);
  const history = new HistoryRecorder({
    known,
    events,
    instanceById: (id) => registry.byInstanceId(id),
    sourceOf,
    saveChats: config.saveChats,
    saveContacts: config.saveContacts,
  });
  const outcomes = new SendOutcomes();
  const pacingDefaults = defaultPacing(config);
  const priority = new ApiPriority({ busyWindowMs: apiBusyWindowMs, turnsPerRound: config.sendWorkerBusyTurns });
  const workers = new SendWorkers({
    priority,
    outcomes,
    onOutcome: (instance, result) => metrics.sendOutcome(instance.name, result),
    onPacingWait: (instance, waitedMs) => metrics.pacingWait(instance.name, waitedMs),
    pacingDefaults,
    ...(pacingClock ? { pacingClock } : {}),
    db: store.db,
    config,
    logger,
    events,
    statuses,
    instanceById: (id) => registry.byInstanceId(id),
    // The lifecycle (below) drives the workers, and owns the connectors they send through.
    connectorOf: (id): Connector | undefined => lifecycle.connectorOf(id),
    apikeyOf,
    fence: ownership,
    ownsLocally: (id) => ownership.ownsLocally(id),
  });
  const changes = new MessageChanges({ db: store.db, events, apikeyOf });
  const labelBook = new LabelBook({ db: store.db, events, known, sourceOf });
  const proxyStore = new ProxyStore(store.db, box);
  const proxyOf = (instance: Instance) => proxyStore.inEffect(instance.id);
  const connectorHost = new InstanceConnectorHost({
    db: store.db,
    logger,
    registry,
    events,
    statuses,
    sessions: new SessionStore(store.db, ownership),
    alongside: history,
    keepReceived: config.saveNewMessages,
    changes,
    labels: labelBook,
    proxies: proxyStore,
    fence: ownership,
  });
  // What every feature keeps of an instance goes with it, in this order (the kinds add their own tables in the middle).
  const removal = new InstanceRemoval();
  removal.onRemove(removeMessagesOf);
  removal.onRemove(removeSinkSettingsOf);
  removal.onRemove(removeSessionsOf);
  removal.onRemove(removeMediaBlobsOf);
  removal.onRemove(removeHistoryOf(known));
  // An instance deleted through another node: its book goes here too.
  registry.onChange((id, instance) => {
    if (!instance) known.forget(id);
  });
  removal.onRemove(removeTemplatesOf);
  removal.onRemove(removeProxyOf);
  removal.onRemove(removeOwnerOf);
  const kinds = new KindRegistry(
    kindEntries.map((entry) =>
      entry({
        config,
        logger,
        db: store.db,
        host: connectorHost,
        instances: { all: () => registry.all(), byId: (id) => registry.byInstanceId(id), byOwnerJid: (jid) => registry.byOwnerJid(jid) },
        secretsKey,
        fleet: { signals: store.signals, incarnation: nodes.incarnation, shared: store.dialect === 'postgres' },
        onRemove: (hook) => removal.onRemove(hook),
      }),
    ),
  );
  removal.onRemove(removeEventLogOf);
  const lifecycle = new InstanceLifecycle({
    logger,
    registry,
    kinds,
    host: connectorHost,
    workers,
    ownership,
    startConcurrency: config.instanceStartConcurrency,
    quickStartConcurrency: config.instanceQuickStartConcurrency,
  });
  const relayingBrokers = [...(config.rabbitmqEnabled ? ['rabbitmq'] : []), ...(config.natsEnabled ? ['nats'] : [])];
  const retention = new EventRetention(store.db, config.eventRetentionMs, logger, relayingBrokers, new JobLease(store.db, 'event-retention', node));
  const wakeups = new SendWakeups({
    workers,
    ...(fleet ? { signals: store.signals } : {}),
    onError: (error) => logger.warn({ err: error }, 'send wake-up signal failed (the worker poll finds the send)'),
  });
  // A node alone in the store signals nothing (a node that joins meanwhile finds the sends by its poll until the next beat).
  nodes.onLiveNodes(async (live) => {
    wakeups.liveNodes(live.length);
    known.liveNodes(live.length);
  });
  const queue = new SendQueue(store.db, config.sendExpireAfterMs, (id, chat) => wakeups.accepted(id, chat), history);
  const following: (() => void)[] = [];
  const sends = new SendService(store.db, queue, outcomes);
  const proxies = new ProxyService({
    db: store.db,
    logger,
    registry,
    store: proxyStore,
    probe: (proxy) => probeProxy(proxy, { denyPrivate: config.outboundDenyPrivate }),
    applied: (instance) => lifecycle.proxyChanged(instance),
  });
  const instances = new InstanceService({
    db: store.db,
    logger,
    registry,
    kinds,
    lifecycle,
    removal,
    events,
    sinks,
    globalApiKey,
    pacingDefaults,
    proxies: { check: proxies, store: proxyStore },
  });
  const connectorOf = (instance: Instance) => lifecycle.attach(instance);
  const ffmpeg = new Ffmpeg({ path: config.ffmpegPath, concurrency: config.mediaConvertConcurrency, timeoutMs: config.mediaConvertTimeoutMs });
  const outgoing = new OutgoingMessages({
    db: store.db,
    sends,
    connectorOf,
    kinds,
    media: { maxBytes: config.mediaMaxBytes, denyPrivate: config.outboundDenyPrivate, fetchTimeoutMs: config.mediaFetchTimeoutMs },
    ffmpeg,
    proxyOf,
  });
  const mediaDownloads = new MediaDownloads({ db: store.db, connectorOf, kinds, maxBytes: config.mediaMaxBytes, ffmpeg });
  const chatMarks = new ChatMarks({ db: store.db, events, known, kinds, connectorOf, sourceOf });
  const historyReads = new HistoryReads(store.db);
  const chats = new ChatOperations({
    connectorOf,
    kinds,
    storePrivacy: (instance, privacy) => instances.updatePrivacy(instance, privacy),
    markedRead: (instance, remoteJids) => chatMarks.markedRead(instance, remoteJids),
  });
  const profiles = new ProfileOperations({
    connectorOf,
    kinds,
    storeProfile: (instance, change) => instances.updateProfile(instance, change),
    media: { maxBytes: config.mediaMaxBytes, denyPrivate: config.outboundDenyPrivate, fetchTimeoutMs: config.mediaFetchTimeoutMs },
    proxyOf,
  });
  const messageChanges = new SentMessageChanges({ connectorOf, kinds, changes });
  const blocks = new BlockOperations({ connectorOf, kinds });
  const groups = new GroupOperations({
    connectorOf,
    kinds,
    media: { maxBytes: config.mediaMaxBytes, denyPrivate: config.outboundDenyPrivate, fetchTimeoutMs: config.mediaFetchTimeoutMs },
    sendText: (instance, number, text) => outgoing.text(instance, { number, text }, { route: 'group/sendInvite', body: { number, text } }),
  });
  const labels = new LabelOperations({ db: store.db, book: labelBook, kinds, connectorOf });
  const templates = new TemplateOperations({ db: store.db, kinds, connectorOf });

  return {
    priority,
    config,
    logger,
    store,
    box,
    globalApiKey,
    registry,
    sinks,
    events,
    kinds,
    connectorHost,
    lifecycle,
    removal,
    instances,
    proxies,
    workers,
    sends,
    outgoing,
    ffmpeg,
    chats,
    profiles,
    historyReads,
    chatMarks,
    messageChanges,
    blocks,
    mediaDownloads,
    groups,
    labels,
    templates,
    webhooks,
    nodes,
    metrics,
    retention,
    eventSinks: eventSinks.list,
    websocket: eventSinks.websocket,
    sinkCreation: eventSinks.creation,
    async start() {
      await this.prepare();
      await this.openInstances();
    },
    async prepare() {
      // Registered first: the claims of this node's earlier life are taken over before any work starts.
      await nodes.start();
      if (fleet) {
        const failed = (what: string) => (error: unknown) => logger.warn({ err: error }, `reading back ${what} changed elsewhere failed; trying again`);
        following.push(registry.follow(store.signals, failed('instances')), sinks.follow(store.signals, failed('event settings')));
      }
      const loadState = async () => {
        await registry.load();
        await sinks.load();
        for (const sink of eventSinks.list) await sink.start?.();
        workers.start();
        retention.start();
      };
      // The share is claimed while the state is read: store round trips side by side (a restart with thousands of
      // instances spends as long reading them as claiming them). What is claimed waits for openInstances to open.
      const [loaded, claimed] = await Promise.allSettled([loadState(), lifecycle.takeShare()]);
      if (loaded.status === 'rejected') throw loaded.reason;
      if (claimed.status === 'rejected') throw claimed.reason;
    },
    openInstances: () => lifecycle.openOwned(),
    async stop() {
      for (const stop of following.splice(0)) stop();
      wakeups.stop();
      known.stop();
      await retention.stop();
      await workers.stop();
      await lifecycle.stopAll();
      await Promise.all(eventSinks.list.map((sink) => sink.stop?.()));
      await nodes.stop();
      // Once this node is marked stopped (the others' fair shares count it out): its instances go to them at once.
      await lifecycle.handOverAll();
    },
  };
}
