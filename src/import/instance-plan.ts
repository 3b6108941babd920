// An Evolution instance mapped into Switchboard's model: identity, kind and provider fields, key, settings, event
// destinations, proxy and profile, with every Evolution setting that does not carry over named.
import type { ConnectorKinds } from '../core/connector-kind.js';
import { CodedError } from '../core/errors.js';
import { resolveEventName } from '../core/event-catalog.js';
import type { SinkConfig, SinkCreation, SinkKind } from '../core/event-sink.js';
import { instanceNameProblem, type Settings } from '../core/instance.js';
import { customHeaderProblem } from '../sinks/webhook/headers.js';
import type { EvolutionInstance, EvolutionSwitch } from './evolution-model.js';
import { ImportProblem } from './problem.js';
import { planProxy, type ProxyPlan } from './proxy-plan.js';

export interface InstancePlan {
  /** Evolution's instance id, kept (clients filter by it; its keys folder is named after it). */
  id: string;
  name: string;
  integration: string;
  /** The key clients send for this instance (Evolution's token); null when Evolution had none. */
  apikey: string | null;
  number: string | null;
  businessId: string | null;
  /** The Meta access token of a WHATSAPP-BUSINESS instance. */
  providerToken: string | null;
  settings: Settings;
  profile: { ownerJid: string | null; profileName: string | null; profilePicUrl: string | null };
  sinks: { kind: SinkKind; config: SinkConfig }[];
  /** The proxy to store with the instance (its password in clear until the store seals it); null: Evolution had none. */
  proxy: ProxyPlan | null;
  /** What is carried over besides the basics, for the report (`webhook`, `websocket`…). */
  carried: string[];
  /** What Evolution had that is not carried over, each a short phrase with its reason. */
  notCarried: string[];
}

export interface PlanDeps {
  kinds: ConnectorKinds;
  /** The sinks' part of instance creation: each destination is checked exactly as a create request's would be. */
  sinkCreation: SinkCreation;
}

/** The integration of rows older than the column's default. */
const defaultIntegration = 'WHATSAPP-BAILEYS';

/** Event names Switchboard knows, and those it does not (listed, not imported). */
function splitEvents(events: unknown): { known: string[]; unknown: string[] } {
  const list = Array.isArray(events) ? events.filter((e): e is string => typeof e === 'string') : [];
  return { known: list.filter((e) => resolveEventName(e)), unknown: list.filter((e) => !resolveEventName(e)) };
}

/** The webhook's custom headers that can be sent, and why the others cannot. */
function splitHeaders(headers: unknown): { kept: Record<string, string>; dropped: string[] } {
  const kept: Record<string, string> = {};
  const dropped: string[] = [];
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return { kept, dropped };
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') {
      dropped.push(`webhook header "${name}" (not a string)`);
      continue;
    }
    const problem = customHeaderProblem(name, value);
    if (problem) dropped.push(`webhook header ${problem}`);
    else kept[name] = value;
  }
  return { kept, dropped };
}

function problemOf(error: unknown): string {
  return error instanceof CodedError ? error.messages.join('; ') : error instanceof Error ? error.message : String(error);
}

export function planInstance(evolution: EvolutionInstance, deps: PlanDeps): InstancePlan {
  const { row } = evolution;
  const nameProblem = instanceNameProblem(row.name);
  if (nameProblem) throw new ImportProblem(`its name cannot be a Switchboard instance name: ${nameProblem.replace(/^instanceName /, '')}`);
  const integration = row.integration || defaultIntegration;
  const kind = deps.kinds.of(integration);
  if (!kind) throw new ImportProblem(`integration "${integration}" is not one Switchboard runs`);
  const token = row.token?.trim() || undefined;
  let fields: ReturnType<typeof kind.creationFields>;
  try {
    fields = kind.creationFields({ token, number: row.number ?? undefined, businessId: row.businessId ?? undefined });
  } catch (error) {
    throw new ImportProblem(`its provider fields are refused: ${problemOf(error)}`);
  }
  const carried: string[] = [];
  const notCarried: string[] = [...evolution.unsupported.map((what) => `${what}: no such feature in Switchboard`)];
  // The token is the key clients send. WHATSAPP-BUSINESS: Evolution made the Meta access token the instance key too;
  // it is kept as both, so clients go on working.
  const apikey = token ?? null;
  const s = evolution.settings;
  const settings: Settings = {
    rejectCall: s?.rejectCall ?? false,
    msgCall: s?.msgCall ?? '',
    groupsIgnore: s?.groupsIgnore ?? false,
    alwaysOnline: s?.alwaysOnline ?? false,
    readMessages: s?.readMessages ?? false,
    readStatus: s?.readStatus ?? false,
    syncFullHistory: s?.syncFullHistory ?? false,
  };
  if (s?.wavoipToken) notCarried.push('wavoip calls (Setting.wavoipToken): no such feature in Switchboard');
  const proxy = planProxy(evolution.proxy);
  if (proxy.carried) carried.push(proxy.carried);
  if (proxy.notCarried) notCarried.push(proxy.notCarried);

  const sinks: InstancePlan['sinks'] = [];
  const addSink = (field: string, label: string, input: Record<string, unknown>) => {
    try {
      const parsed = deps.sinkCreation.parse({ [field]: input }, row.name);
      sinks.push(...parsed);
      if (parsed.length > 0) carried.push(label);
    } catch (error) {
      notCarried.push(`${label}: ${problemOf(error)}`);
    }
  };
  if (evolution.webhook) {
    const webhook = evolution.webhook;
    const events = splitEvents(webhook.events);
    const headers = splitHeaders(webhook.headers);
    if (events.unknown.length > 0) notCarried.push(`webhook events unknown here: ${events.unknown.join(', ')}`);
    notCarried.push(...headers.dropped);
    // A disabled webhook with no URL is nothing to keep.
    if (webhook.enabled || webhook.url) {
      addSink('webhook', webhook.enabled ? 'webhook' : 'webhook (disabled)', {
        enabled: webhook.enabled,
        url: webhook.url,
        byEvents: webhook.byEvents,
        base64: webhook.base64,
        headers: headers.kept,
        events: events.known,
      });
    }
  }
  const addSwitch = (field: string, value: EvolutionSwitch | null) => {
    if (!value) return;
    const events = splitEvents(value.events);
    if (events.unknown.length > 0) notCarried.push(`${field} events unknown here: ${events.unknown.join(', ')}`);
    addSink(field, value.enabled ? field : `${field} (disabled)`, { enabled: value.enabled, events: events.known });
  };
  addSwitch('websocket', evolution.websocket);
  addSwitch('rabbitmq', evolution.rabbitmq);
  addSwitch('nats', evolution.nats);

  return {
    id: row.id,
    name: row.name,
    integration: kind.name,
    apikey,
    number: fields.number,
    businessId: row.businessId ?? null,
    providerToken: fields.providerToken,
    settings,
    profile: { ownerJid: row.ownerJid, profileName: row.profileName, profilePicUrl: row.profilePicUrl },
    sinks,
    proxy: proxy.plan,
    carried,
    notCarried,
  };
}
