// What Baileys is given for the instance's proxy: an agent for its websocket and uploads, a dispatcher for its downloads.
import type { Agent } from 'node:https';
import type { Dispatcher } from 'undici';
import type { ProxySettings } from '../../core/proxy.js';
import { sharedProxyAgent } from '../../platform/net/proxy-agent.js';
import { sharedProxyDispatcher } from '../../platform/net/proxy-dispatcher.js';

/** The instance's proxy as each of Baileys' network paths takes it. */
export interface BaileysProxy {
  settings: ProxySettings;
  /** The websocket to WhatsApp (`agent`) and media uploads (`fetchAgent`: Baileys uploads with node:https on Node). */
  agent: Agent;
  /** Media and history downloads (Baileys downloads with fetch, which takes an undici dispatcher). */
  dispatcher: Dispatcher;
}

export function baileysProxy(settings: ProxySettings, denyPrivate: boolean): BaileysProxy {
  // Baileys types its agents as https.Agent; the proxy agents (agent-base) serve http and https requests alike.
  const agent = sharedProxyAgent(settings, denyPrivate) as Agent;
  return { settings, agent, dispatcher: sharedProxyDispatcher(settings, denyPrivate) };
}

/**
 * Fetch options carrying the dispatcher. Baileys types them as the DOM's RequestInit, which has no `dispatcher`
 * (Node's fetch takes one), hence the cast.
 */
export function fetchOptions(dispatcher: Dispatcher): RequestInit {
  return { dispatcher } as unknown as RequestInit;
}
