// Where queued sends meet the connector: a run handed over in order, or one send after its typing delay.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connector, OutboundMessage, Presence } from '../core/connector.js';
import { yieldToEventLoop } from '../platform/util/yield.js';

/** Longest run of sends without letting other work in. */
const yieldEveryMs = 2;

/**
 * Hands a chat's messages to the connector in order: all at once where it can take them so (`sendMany`), else one
 * after the other, letting other work in every few ms. Stops at the first failure.
 */
export async function sendInOrder(connector: Connector, messages: OutboundMessage[]): Promise<{ sent: number; error?: unknown }> {
  if (connector.messaging.sendMany) return connector.messaging.sendMany(messages);
  let lastYield = performance.now();
  for (let sent = 0; sent < messages.length; sent++) {
    // Requests and deliveries waiting on I/O get their turn (p99 of the API, webhook lag).
    if (performance.now() - lastYield >= yieldEveryMs) {
      await yieldToEventLoop();
      lastYield = performance.now();
    }
    try {
      await connector.messaging.send(messages[sent]);
    } catch (error) {
      return { sent, error };
    }
  }
  return { sent: messages.length };
}

/**
 * Sends one message, first showing "typing" ("recording" before a voice note) in `chat` for `delayMs` if asked. False when `signal` aborted the typing
 * delay (nothing was sent); a failure of the connector is thrown.
 */
export async function sendAfterTyping(
  connector: Connector,
  chat: string,
  message: OutboundMessage,
  delayMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (delayMs > 0) {
    await connector.presence?.sendPresence(chat, typingPresenceOf(message));
    try {
      await sleep(delayMs, undefined, { signal });
    } catch (error) {
      if (signal?.aborted) return false;
      throw error;
    }
    // As Evolution and WhatsApp clients do: typing ends, then the message goes.
    await connector.presence?.sendPresence(chat, 'paused');
  }
  await connector.messaging.send(message);
  return true;
}

/** What the recipient sees before a send: "recording audio" before a voice note, "typing" before anything else. */
function typingPresenceOf(message: OutboundMessage): Presence {
  const audio = message.content.audioMessage;
  return audio && typeof audio === 'object' && (audio as { ptt?: unknown }).ptt === true ? 'recording' : 'composing';
}
