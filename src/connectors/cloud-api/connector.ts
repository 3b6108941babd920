// The WHATSAPP-BUSINESS connector of one instance: no link step, every send a Graph API call answered at once.
import type { Logger } from '../../platform/logger.js';
import { invalidInput } from '../../core/errors.js';
import type { ConnectionState, Instance } from '../../core/instance.js';
import {
  ProviderError,
  TransientConnectorError,
  type Connector,
  type ConnectorFactory,
  type ConnectorHost,
  type MediaModule,
  type MessagingModule,
  type OutboundMessage,
  type TemplatesModule,
} from '../../core/connector.js';
import { GraphClient, type FetchLike, type SentMessage } from './graph-client.js';
import { MessageIds } from './message-ids.js';
import { earlyReceipts } from './early-receipts.js';
import { mediaPart, planOutbound, quotedKeyIdOf, recipientOf, type OutboundPlan } from './outbound.js';
import type { CloudApiSettings } from './settings.js';
import { ProxyWatch } from '../proxy-watch.js';
import type { BackoffPolicy } from '../../platform/util/backoff.js';
import { probeProxy } from '../../platform/net/proxy-probe.js';
import { sharedProxyDispatcher } from '../../platform/net/proxy-dispatcher.js';
import { proxyFailureKindOf } from '../../platform/net/proxy-failure.js';
import { fetchThrough } from '../../platform/net/fetch-through.js';

export interface CloudApiConnectorDeps {
  settings: Pick<CloudApiSettings, 'url' | 'version' | 'timeoutMs'>;
  logger: Logger;
  /** Tests may route Graph calls elsewhere; the service uses the global fetch (undici's, through the instance's proxy). */
  fetchImpl?: FetchLike;
  /** OUTBOUND_DENY_PRIVATE: whether the proxy may be at a private address. */
  denyPrivate?: boolean;
  /** Probes waits while the proxy cannot be reached (tests shorten them). */
  proxyBackoff?: BackoffPolicy;
}

/** The factory of the WHATSAPP-BUSINESS kind (kind.ts). */
export function cloudApiConnectorFactory(deps: CloudApiConnectorDeps): ConnectorFactory {
  return (instance, host) => new CloudApiConnector(instance, host, deps);
}

/** Messaging and templates: the Cloud API has no presence (a send's `delay` is a plain wait) and no privacy settings. */
export class CloudApiConnector implements Connector {
  private status: ConnectionState = 'close';
  private lastActivity: number | null = null;
  private readonly graph: GraphClient;
  private readonly ids: MessageIds;
  private readonly log: Logger;
  /** While the instance's proxy cannot be reached: why, and when it is probed again. */
  private readonly proxyWatch: ProxyWatch;

  constructor(
    private readonly instance: Instance,
    private readonly host: ConnectorHost,
    private readonly deps: CloudApiConnectorDeps,
  ) {
    this.log = deps.logger.child({ instance: instance.name, integration: 'WHATSAPP-BUSINESS' });
    this.graph = new GraphClient(
      deps.settings,
      (operation, info) => this.log.warn({ operation, ...info }, 'Meta Graph API refused a request'),
      (url, init) => this.fetchGraph(url, init),
    );
    this.ids = new MessageIds(host.sessionKeys);
    const policy = { denyPrivate: deps.denyPrivate ?? false };
    this.proxyWatch = new ProxyWatch({
      proxy: () => this.host.proxy(this.instance.id),
      probe: (proxy) => probeProxy(proxy, policy),
      down: (reason) => this.proxyDown(reason),
      up: () => this.proxyUp(),
      ...(deps.proxyBackoff ? { backoff: deps.proxyBackoff } : {}),
      onError: (error) => this.log.error({ err: error }, 'probing the proxy failed'),
    });
  }

  /**
   * A Cloud API number has nothing to link: the instance is open as soon as it runs (Meta's token is checked by each
   * send), unless its proxy cannot be reached: then it is `connecting`, with the reason, until the proxy answers again.
   */
  async start(): Promise<void> {
    this.status = 'open';
    if (await this.proxyWatch.check()) return;
    await this.host.connectionChanged(this.instance.id, { state: 'open' });
  }

  /** Nothing to close; the stored state stays `open` so the instance runs again at the next start of the service. */
  async stop(): Promise<void> {
    this.proxyWatch.stop();
    this.status = 'close';
  }

  async logout(): Promise<void> {
    this.proxyWatch.stop();
    this.status = 'close';
    await this.host.loggedOut(this.instance.id);
  }

  stateReason(): string | null {
    return this.status === 'open' ? null : this.proxyWatch.reason();
  }

  /** Graph calls read the proxy at each request; what changes is whether the instance can send now. */
  async proxyChanged(): Promise<void> {
    if (this.status === 'close') return;
    await this.proxyWatch.check();
  }

  /** The proxy cannot be reached: sends wait (the instance is not open), and the state says why. */
  private async proxyDown(reason: string): Promise<void> {
    if (this.status === 'close') return;
    this.status = 'connecting';
    this.log.warn({ reason }, 'the proxy cannot be reached; Graph calls wait for it');
    await this.host.connectionChanged(this.instance.id, { state: 'connecting', reason, statusReason: 503 });
  }

  private async proxyUp(): Promise<void> {
    if (this.status === 'close') return;
    this.status = 'open';
    this.log.info('the proxy can be reached again');
    await this.host.connectionChanged(this.instance.id, { state: 'open' });
  }

  /** A Graph request: through the instance's proxy when it has one (read at each request, so a change applies at once). */
  private async fetchGraph(url: string | URL | Request, init?: RequestInit): Promise<Response> {
    const proxy = await this.host.proxy(this.instance.id);
    if (!proxy) return (this.deps.fetchImpl ?? fetch)(url, init);
    try {
      return await fetchThrough(sharedProxyDispatcher(proxy, this.deps.denyPrivate ?? false), url, init);
    } catch (error) {
      const failure = proxyFailureKindOf(error, proxy);
      if (!failure) throw error;
      // The proxy works but Graph did not answer through it: a network failure like any other.
      if (failure.kind !== 'destination') {
        // Not awaited: the state change pauses the send workers, which wait for the send making this request.
        this.proxyWatch
          .failed(failure.message, failure.kind !== 'unreachable')
          .catch((problem: unknown) => this.log.error({ err: problem }, 'reporting the unusable proxy failed'));
      }
      throw new TransientConnectorError(`Meta Graph API could not be reached: ${failure.message}`);
    }
  }

  state(): ConnectionState {
    return this.status;
  }

  qr() {
    return null;
  }

  lastActivityAt(): number | null {
    return this.lastActivity;
  }

  readonly messaging: MessagingModule = {
    /** A Graph answer is the outcome of the send: the API waits for the first attempt and answers Meta's refusal. */
    acknowledgesSynchronously: true,
    /** The recipient and the content as Graph will be asked for them: what it would refuse is refused before storing. */
    check: (message) => {
      recipientOf(message.remoteJid);
      planOutbound(message.content);
    },
    send: (message) => this.send(message),
    markRead: (keys) => this.markRead(keys),
  };

  /** Media received through the Cloud API carries Meta's media id (`mediaId`); Graph gives its bytes. */
  readonly media: MediaModule = {
    download: async (node, _mediaType, maxBytes) => {
      const mediaId = typeof node.mediaId === 'string' && node.mediaId !== '' ? node.mediaId : undefined;
      if (!mediaId) throw invalidInput('the media message has no Meta media id (mediaId): only media received through the Cloud API can be downloaded');
      const { token } = await this.credentials();
      return this.graph.downloadMedia(mediaId, token, maxBytes);
    },
  };

  /** Templates belong to the WhatsApp Business Account (`businessId` at creation), created and listed through Graph. */
  readonly templates: TemplatesModule = {
    create: async (draft) => {
      const { businessId, token } = await this.businessCredentials();
      const answer = await this.graph.createTemplate(businessId, token, {
        name: draft.name,
        category: draft.category,
        ...(draft.allowCategoryChange !== undefined ? { allow_category_change: draft.allowCategoryChange } : {}),
        language: draft.language,
        components: draft.components,
      });
      this.lastActivity = Date.now();
      return answer;
    },
    find: async () => {
      const { businessId, token } = await this.businessCredentials();
      const templates = await this.graph.findTemplates(businessId, token);
      this.lastActivity = Date.now();
      return templates;
    },
  };

  private async send(message: OutboundMessage): Promise<void> {
    const to = recipientOf(message.remoteJid);
    const plan = planOutbound(message.content);
    const { phoneNumberId, token } = await this.credentials();
    const part = await this.partOf(plan, message, phoneNumberId, token);
    const quoted = plan.kind === 'reaction' ? undefined : quotedKeyIdOf(message.content);
    const body: Record<string, unknown> = {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to,
      ...(quoted ? { context: { message_id: await this.ids.wamidOf(this.instance.id, quoted) } } : {}),
      type: part.type,
      [part.type]: part.body,
    };
    let sent: SentMessage;
    try {
      sent = await this.graph.sendMessage(phoneNumberId, token, body);
    } catch (error) {
      // A refused send is final: the upload of its media will not be needed again.
      if (!(error instanceof TransientConnectorError) && plan.kind === 'media' && message.mediaBlobId) {
        await this.ids.rememberUpload(this.instance.id, message.mediaBlobId, null).catch(() => undefined);
      }
      throw error;
    }
    this.lastActivity = Date.now();
    try {
      await this.ids.remember(this.instance.id, message.keyId, sent.wamid);
      if (plan.kind === 'media' && message.mediaBlobId) await this.ids.rememberUpload(this.instance.id, message.mediaBlobId, null);
      // Receipts that arrived before Graph's answer did.
      for (const held of earlyReceipts.take(this.instance.id, sent.wamid)) {
        await this.host.messageStatus(this.instance.id, message.keyId, held.status, held.detail);
      }
    } catch (error) {
      // Meta has the message: failing the send now would only invite a duplicate. Its receipts will not be matched.
      this.log.error({ err: error, keyId: message.keyId }, 'could not record the Meta message id of a sent message');
    }
  }

  private async markRead(keys: { remoteJid: string; keyId: string }[]): Promise<void> {
    if (keys.length === 0) return;
    const { phoneNumberId, token } = await this.credentials();
    for (const key of keys) {
      await this.graph.markRead(phoneNumberId, token, await this.ids.wamidOf(this.instance.id, key.keyId));
    }
    this.lastActivity = Date.now();
  }

  private async credentials(): Promise<{ phoneNumberId: string; token: string }> {
    const phoneNumberId = this.host.currentInstance(this.instance.id)?.number ?? this.instance.number;
    if (!phoneNumberId) {
      throw new ProviderError('refused', ['this WHATSAPP-BUSINESS instance has no phone-number id (number); recreate it with number']);
    }
    const token = await this.host.providerToken(this.instance.id);
    if (!token) throw new ProviderError('refused', ['this WHATSAPP-BUSINESS instance has no Meta access token; recreate it with token']);
    return { phoneNumberId, token };
  }

  private async businessCredentials(): Promise<{ businessId: string; token: string }> {
    const businessId = this.host.currentInstance(this.instance.id)?.businessId ?? this.instance.businessId;
    if (!businessId) {
      throw invalidInput(
        `instance "${this.instance.name}" has no businessId: templates belong to a WhatsApp Business Account; create the instance with businessId (the account's id in Meta's WhatsApp Manager)`,
      );
    }
    const token = await this.host.providerToken(this.instance.id);
    if (!token) throw new ProviderError('refused', ['this WHATSAPP-BUSINESS instance has no Meta access token; recreate it with token']);
    return { businessId, token };
  }

  private async partOf(
    plan: OutboundPlan,
    message: OutboundMessage,
    phoneNumberId: string,
    token: string,
  ): Promise<{ type: string; body: Record<string, unknown> | Record<string, unknown>[] }> {
    if (plan.kind === 'ready') return plan;
    if (plan.kind === 'reaction') {
      return { type: 'reaction', body: { message_id: await this.ids.wamidOf(this.instance.id, plan.targetKeyId), emoji: plan.emoji } };
    }
    return mediaPart(plan, await this.upload(plan, message, phoneNumberId, token));
  }

  /** Uploads the send's media to /media (once per send, retries reuse the id) and answers Meta's media id. */
  private async upload(plan: Extract<OutboundPlan, { kind: 'media' }>, message: OutboundMessage, phoneNumberId: string, token: string): Promise<string> {
    const blobId = message.mediaBlobId;
    if (!blobId) throw new Error(`the ${plan.type} of message ${message.keyId} has no stored media to upload to Meta`);
    const earlier = await this.ids.uploadedMediaOf(this.instance.id, blobId);
    if (earlier) return earlier;
    const bytes = await this.host.loadMedia(blobId);
    if (!bytes) throw new Error(`the stored media of message ${message.keyId} is gone; it cannot be uploaded to Meta`);
    const mediaId = await this.graph.uploadMedia(phoneNumberId, token, bytes, plan.mimetype, plan.fileName);
    this.lastActivity = Date.now();
    await this.ids.rememberUpload(this.instance.id, blobId, mediaId);
    return mediaId;
  }
}
