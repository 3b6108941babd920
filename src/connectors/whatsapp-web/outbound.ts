// Sending a stored message through Baileys with our key id: media uploaded if still pending, mentions, statuses.
import type { GroupMetadata, MediaType } from 'baileys';
import { TransientConnectorError, type OutboundMessage } from '../../core/connector.js';
import { jsonToContent } from './content.js';
import { isConnectionFailure } from './disconnect.js';
import { isGroupJid } from './jids.js';
import { MediaUnavailableError, mediaKinds, uploadableBytes, uploadEncrypted } from './media.js';
import type { WaSocket } from './socket.js';

export interface OutboundDeps {
  loadMedia(blobId: string): Promise<Buffer | null>;
  /** A group's metadata (cached by the connector). */
  groupMetadata(jid: string): Promise<GroupMetadata>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The interactive message inside a view-once wrapper (sendButtons), if that is what the content is. */
function interactiveOf(content: Record<string, unknown>): Record<string, unknown> | undefined {
  const wrapper = content.viewOnceMessage;
  const inner = isRecord(wrapper) && isRecord(wrapper.message) ? wrapper.message.interactiveMessage : undefined;
  return isRecord(inner) ? inner : undefined;
}

/** The media node of the content (`content.imageMessage`, …, or a buttons message's header image) and its kind. */
function mediaNode(content: Record<string, unknown>, messageType: string): { node: Record<string, unknown>; kind: MediaType } | undefined {
  const header = interactiveOf(content)?.header;
  if (isRecord(header) && isRecord(header.imageMessage)) return { node: header.imageMessage, kind: 'image' };
  const node = mediaKinds[messageType] ? content[messageType] : undefined;
  return isRecord(node) ? { node, kind: mediaKinds[messageType] } : undefined;
}

/** Uploads the media of a message accepted before it could be uploaded (its url is empty), filling url and directPath. */
async function uploadPending(socket: WaSocket, message: OutboundMessage, content: Record<string, unknown>, deps: OutboundDeps): Promise<void> {
  const media = mediaNode(content, message.messageType);
  if (!media || (typeof media.node.url === 'string' && media.node.url !== '')) return;
  const { node, kind } = media;
  if (!message.mediaBlobId) throw new MediaUnavailableError('the media was never uploaded and no copy of it was kept');
  const kept = await deps.loadMedia(message.mediaBlobId);
  if (!kept) throw new MediaUnavailableError('the media was never uploaded and its kept copy is gone');
  const { encrypted } = await uploadableBytes(kept, node, kind);
  try {
    const uploaded = await uploadEncrypted(socket.waUploadToServer, encrypted, kind);
    node.url = uploaded.url;
    node.directPath = uploaded.directPath;
  } catch (error) {
    // Upload hosts failing is a network matter: the send is tried again later.
    throw new TransientConnectorError(`media upload failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** mentionsEveryOne in a group: every current participant is mentioned (a plain text becomes an extended one to carry it). */
async function mentionEveryone(deps: OutboundDeps, message: OutboundMessage, content: Record<string, unknown>): Promise<void> {
  if (!message.mentionsEveryOne || !isGroupJid(message.remoteJid)) return;
  const metadata = await deps.groupMetadata(message.remoteJid);
  const everyone = metadata.participants.map((p) => p.id);
  if (typeof content.conversation === 'string' && !content.extendedTextMessage) {
    content.extendedTextMessage = { text: content.conversation };
    delete content.conversation;
  }
  const key = Object.keys(content).find((k) => k !== 'messageContextInfo' && isRecord(content[k]));
  const node = interactiveOf(content) ?? (key ? content[key] : undefined);
  if (!isRecord(node)) return;
  const contextInfo = isRecord(node.contextInfo) ? node.contextInfo : {};
  contextInfo.mentionedJid = everyone;
  node.contextInfo = contextInfo;
}

/**
 * Sends `message` with its own key id as the WhatsApp message id, so a retried send is the same message to the
 * recipient and never shows twice. Connection failures become TransientConnectorError (tried again later).
 */
export async function relayOutbound(socket: WaSocket, message: OutboundMessage, deps: OutboundDeps): Promise<void> {
  const content = structuredClone(message.content);
  await uploadPending(socket, message, content, deps);
  try {
    await mentionEveryone(deps, message, content);
    const isStatus = message.remoteJid === 'status@broadcast';
    await socket.relayMessage(message.remoteJid, jsonToContent(content), {
      messageId: message.keyId,
      ...(isStatus ? { statusJidList: message.statusJidList ?? [] } : {}),
    });
  } catch (error) {
    if (error instanceof TransientConnectorError) throw error;
    const text = error instanceof Error ? error.message : String(error);
    if (isConnectionFailure(error)) throw new TransientConnectorError(`WhatsApp connection failed during the send: ${text}`);
    throw new Error(`WhatsApp refused the send: ${text}`);
  }
}
