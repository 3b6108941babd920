// The few Graph API calls the connector makes (send, upload, mark read, templates), with bearer auth, a time limit and error mapping.
import { ProviderError } from '../../core/connector.js';
import { CodedError } from '../../core/errors.js';
import { mediaTooLarge } from '../../media/bytes-field.js';
import { failureInfo, graphErrorOf, graphFailure, networkFailure, type GraphFailureInfo } from './graph-errors.js';
import { versionSegment, type CloudApiSettings } from './settings.js';

/** The Graph answer to a send: `{messaging_product, contacts: [{input, wa_id}], messages: [{id}]}`. */
export interface SentMessage {
  wamid: string;
  waId: string | null;
}

export type FetchLike = typeof fetch;

/** Raised with every failed call so the connector can log Meta's code and trace id. */
export type FailureListener = (operation: string, info: GraphFailureInfo) => void;

export class GraphClient {
  private readonly base: string;

  constructor(
    private readonly settings: Pick<CloudApiSettings, 'url' | 'version' | 'timeoutMs'>,
    private readonly onFailure: FailureListener = () => undefined,
    private readonly fetchImpl: FetchLike = fetch,
  ) {
    this.base = `${settings.url.replace(/\/+$/, '')}/${versionSegment(settings.version)}`;
  }

  /** POST /{phone-number-id}/messages with a Cloud API message object. */
  async sendMessage(phoneNumberId: string, token: string, message: Record<string, unknown>): Promise<SentMessage> {
    const answer = await this.call('send message', `${this.path(phoneNumberId)}/messages`, token, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(message),
    });
    const body = answer as { messages?: { id?: unknown }[]; contacts?: { wa_id?: unknown }[] };
    const wamid = body.messages?.[0]?.id;
    if (typeof wamid !== 'string' || wamid === '') {
      throw new ProviderError('failed', ['Meta Graph API accepted the message but answered without a message id']);
    }
    const waId = body.contacts?.[0]?.wa_id;
    return { wamid, waId: typeof waId === 'string' ? waId : null };
  }

  /** POST /{phone-number-id}/media (multipart: messaging_product, type, file); answers the media id. */
  async uploadMedia(phoneNumberId: string, token: string, bytes: Buffer, mimetype: string, fileName: string): Promise<string> {
    const form = new FormData();
    form.append('messaging_product', 'whatsapp');
    form.append('type', mimetype);
    form.append('file', new Blob([new Uint8Array(bytes)], { type: mimetype }), fileName);
    const answer = await this.call('upload media', `${this.path(phoneNumberId)}/media`, token, { method: 'POST', body: form });
    const id = (answer as { id?: unknown }).id;
    if (typeof id !== 'string' || id === '') {
      throw new ProviderError('failed', ['Meta Graph API accepted the media upload but answered without a media id']);
    }
    return id;
  }

  /** Marks a received message read: POST /{phone-number-id}/messages `{messaging_product, status: "read", message_id}`. */
  async markRead(phoneNumberId: string, token: string, wamid: string): Promise<void> {
    await this.call('mark read', `${this.path(phoneNumberId)}/messages`, token, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', status: 'read', message_id: wamid }),
    });
  }

  /**
   * A received media's bytes: GET /{media-id} answers a short-lived URL, which is fetched with the same bearer token.
   * Meta forgets media after 30 days: a media id it no longer knows is its refusal.
   */
  async downloadMedia(mediaId: string, token: string, maxBytes: number): Promise<Buffer> {
    const answer = await this.call('media url', `${this.base}/${encodeURIComponent(mediaId)}`, token, { method: 'GET' });
    const url = (answer as { url?: unknown }).url;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
      throw new ProviderError('failed', ['Meta Graph API answered the media lookup without a download url']);
    }
    const size = (answer as { file_size?: unknown }).file_size;
    if (typeof size === 'number' && size > maxBytes) throw mediaTooLarge(maxBytes);
    let response: Response;
    let bytes: Buffer;
    try {
      response = await this.fetchImpl(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(this.settings.timeoutMs) });
      bytes = await bodyUpTo(response, maxBytes);
    } catch (error) {
      if (error instanceof CodedError) throw error;
      throw networkFailure(error, this.settings.timeoutMs);
    }
    if (!response.ok) throw new ProviderError('refused', [`Meta's media download answered HTTP ${response.status} (the media may have expired)`]);
    return bytes;
  }

  /** POST /{whatsapp-business-account-id}/message_templates: submits a template; answers `{id, status, category}`. */
  async createTemplate(businessId: string, token: string, template: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = (await this.call('create template', `${this.path(businessId)}/message_templates`, token, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(template),
    })) as Record<string, unknown>;
    if (typeof answer.id !== 'string' || answer.id === '') {
      throw new ProviderError('failed', ['Meta Graph API accepted the template but answered without a template id']);
    }
    return answer;
  }

  /** GET /{whatsapp-business-account-id}/message_templates, page after page (at most `maxPages` of 100). */
  async findTemplates(businessId: string, token: string, maxPages = 20): Promise<Record<string, unknown>[]> {
    const templates: Record<string, unknown>[] = [];
    let after: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const query = new URLSearchParams({ limit: '100', ...(after ? { after } : {}) });
      const answer = (await this.call('find templates', `${this.path(businessId)}/message_templates?${query}`, token, { method: 'GET' })) as {
        data?: unknown;
        paging?: { next?: unknown; cursors?: { after?: unknown } };
      };
      if (!Array.isArray(answer.data)) throw new ProviderError('failed', ['Meta Graph API answered the template list without data']);
      templates.push(...answer.data.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null));
      const next = answer.paging?.cursors?.after;
      if (typeof answer.paging?.next !== 'string' || typeof next !== 'string' || next === '') break;
      after = next;
    }
    return templates;
  }

  private path(phoneNumberId: string): string {
    return `${this.base}/${encodeURIComponent(phoneNumberId)}`;
  }

  private async call(operation: string, url: string, token: string, init: RequestInit): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        ...init,
        headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw networkFailure(error, this.settings.timeoutMs);
    }
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // A proxy's HTML error page: described by its status below.
    }
    if (!response.ok) {
      this.onFailure(operation, failureInfo(response.status, graphErrorOf(body)));
      throw graphFailure(response.status, body);
    }
    if (body === null || typeof body !== 'object') {
      throw new ProviderError('failed', [`Meta Graph API answered ${operation} with HTTP ${response.status} but no JSON body`]);
    }
    return body;
  }
}

/** A response's body, read no further than `maxBytes` (larger is the 400 of MEDIA_MAX_BYTES). */
async function bodyUpTo(response: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body) {
    total += chunk.length;
    if (total > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw mediaTooLarge(maxBytes);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
