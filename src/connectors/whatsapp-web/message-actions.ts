// Through the Baileys socket: deleting and editing sent messages (protocol messages), blocking accounts, media downloads.
import { downloadContentFromMessage, generateMessageIDV2, proto, type MediaType } from 'baileys';
import { invalidInput } from '../../core/errors.js';
import { ProviderError, type BlockAction, type MessageKeyRef, type ProtocolSent } from '../../core/connector.js';
import { bytesOf, mediaTooLarge } from '../../media/bytes-field.js';
import { checkNumbers, type KnownAddresses } from './contacts.js';
import { isGroupJid, isPhoneJid } from './jids.js';
import type { WaSocket } from './socket.js';
import { fetchOptions } from './proxy.js';
import type { Dispatcher } from 'undici';

/** WhatsApp's media host: a node's `directPath` is fetched from here. */
const whatsAppMediaBase = 'https://mmg.whatsapp.net';

/** The key kind of each media message type (round videos use video keys). */
const mediaKeyKinds: Record<string, MediaType> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function protocolKey(target: MessageKeyRef): proto.IMessageKey {
  return { remoteJid: target.remoteJid, fromMe: target.fromMe, id: target.id, ...(target.participant ? { participant: target.participant } : {}) };
}

/** Sends a protocol message with its own new id and the stanza's `edit` attribute, as Baileys' sendMessage does. */
async function relayProtocol(socket: WaSocket, chat: string, protocolMessage: proto.Message.IProtocolMessage, edit: string): Promise<ProtocolSent> {
  const keyId = generateMessageIDV2(socket.user?.id);
  const timestampMs = Date.now();
  try {
    await socket.relayMessage(chat, proto.Message.fromObject({ protocolMessage }), { messageId: keyId, additionalAttributes: { edit } });
  } catch (error) {
    throw new ProviderError('refused', [`WhatsApp refused the change: ${messageOf(error)}`]);
  }
  return { keyId, timestampMs };
}

/** A deletion for everyone of an own message (stanza edit "7"; "8" is an admin's deletion of another's group message). */
export function revokeMessage(socket: WaSocket, target: MessageKeyRef): Promise<ProtocolSent> {
  const edit = isGroupJid(target.remoteJid) && !target.fromMe ? '8' : '7';
  return relayProtocol(socket, target.remoteJid, { key: protocolKey(target), type: proto.Message.ProtocolMessage.Type.REVOKE }, edit);
}

/** An edit of an own message: the new content inside a MESSAGE_EDIT protocol message (stanza edit "1"). */
export function editMessage(socket: WaSocket, target: MessageKeyRef, content: Record<string, unknown>): Promise<ProtocolSent> {
  return relayProtocol(
    socket,
    target.remoteJid,
    {
      key: protocolKey(target),
      type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
      editedMessage: proto.Message.fromObject(content),
      timestampMs: Date.now(),
    },
    '1',
  );
}

/** Blocks or unblocks a person; a phone number WhatsApp does not know is a 400 (as upstream, which checks first). */
export async function updateBlockStatus(socket: WaSocket, addresses: KnownAddresses, jid: string, action: BlockAction): Promise<void> {
  let target = jid;
  if (isPhoneJid(jid)) {
    const [found] = await checkNumbers(socket, addresses, [{ number: jid, jid }]);
    if (!found?.exists) throw invalidInput(`number ${jid.split('@')[0]} is not on WhatsApp`);
    target = found.jid;
  }
  try {
    await socket.updateBlockStatus(target, action);
  } catch (error) {
    throw new ProviderError('refused', [`WhatsApp refused to ${action} ${target}: ${messageOf(error)}`]);
  }
}

/**
 * Where a media node's encrypted bytes are: its `directPath` on WhatsApp's media host, else its `url` when that is a
 * WhatsApp media address (never any other host: the message may come from the caller).
 */
export function mediaUrlOf(node: Record<string, unknown>, base = whatsAppMediaBase): string {
  if (typeof node.directPath === 'string' && node.directPath.startsWith('/')) return `${base}${node.directPath}`;
  if (typeof node.url === 'string') {
    try {
      const url = new URL(node.url);
      if (url.protocol === 'https:' && (url.hostname === 'whatsapp.net' || url.hostname.endsWith('.whatsapp.net'))) return url.href;
    } catch {
      // not a URL: refused below
    }
  }
  throw invalidInput('the media message has neither a directPath nor a WhatsApp media url to download it from');
}

/**
 * The plain bytes of a media node, downloaded and decrypted with Baileys (its key derivation and decryption); `base`
 * is WhatsApp's media host (a test serves the encrypted bytes itself).
 */
export async function downloadMedia(
  node: Record<string, unknown>,
  mediaType: string,
  maxBytes: number,
  base = whatsAppMediaBase,
  /** The instance's proxy as an undici dispatcher (Baileys downloads with fetch). */
  dispatcher?: Dispatcher,
): Promise<Buffer> {
  const kind = mediaKeyKinds[mediaType];
  if (!kind) throw invalidInput(`${mediaType} is not a media message`);
  const mediaKey = bytesOf(node.mediaKey);
  if (!mediaKey) throw invalidInput('the media message has no mediaKey to decrypt it with');
  const url = mediaUrlOf(node, base);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const stream = await downloadContentFromMessage({ mediaKey, url }, kind, dispatcher ? { options: fetchOptions(dispatcher) } : {});
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        stream.destroy();
        break;
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw new ProviderError('refused', [`the media could not be downloaded from WhatsApp (it may have expired): ${messageOf(error)}`]);
  }
  if (total > maxBytes) throw mediaTooLarge(maxBytes);
  return Buffer.concat(chunks);
}
