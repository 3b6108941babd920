// A ConnectorHost that records what a connector reports and passes every call on to the host it wraps.
import type { ConnectorHost, InboundMessage, LabelChange, MessageChange, Presence, QrState } from '../../src/core/connector.js';
import type { ConnectionState } from '../../src/core/instance.js';
import type { EventName } from '../../src/core/event-catalog.js';
import type { MessageStatus } from '../../src/core/message-status.js';

type ConnectionChange = Parameters<ConnectorHost['connectionChanged']>[1];

/** The arguments each recorded host method is called with, after the instance id. */
interface RecordedArgs {
  connectionChanged: [change: ConnectionChange];
  qrUpdated: [qr: QrState];
  messageReceived: [message: InboundMessage];
  messageStatus: [keyId: string, status: MessageStatus];
  presenceReceived: [chatJid: string, senderJid: string, presence: Presence];
  loggedOut: [];
  eventOccurred: [event: EventName, data: unknown];
  messagesSynced: [messages: InboundMessage[]];
  messageChanged: [change: MessageChange];
  labelChanged: [change: LabelChange];
  saveSession: [data: Record<string, unknown> | null];
}

export type RecordedMethod = keyof RecordedArgs;

/** One recorded call: the host method, the instance it was for, and its other arguments. */
export type HostCall = { [M in RecordedMethod]: { method: M; instanceId: string; args: RecordedArgs[M] } }[RecordedMethod];

/** A recorded call with its arguments named, the way a test writes an expected call. */
export type NamedCall =
  | ({ kind: 'connection'; id: string } & ConnectionChange)
  | { kind: 'qr'; id: string; qr: QrState }
  | { kind: 'received'; id: string; message: InboundMessage }
  | { kind: 'status'; id: string; keyId: string; status: MessageStatus }
  | { kind: 'presence'; id: string; chatJid: string; senderJid: string; presence: Presence }
  | { kind: 'loggedOut'; id: string }
  | { kind: 'event'; id: string; event: EventName; data: unknown }
  | { kind: 'synced'; id: string; messages: InboundMessage[] }
  | { kind: 'changed'; id: string; change: MessageChange }
  | { kind: 'label'; id: string; change: LabelChange }
  | { kind: 'saveSession'; id: string; data: Record<string, unknown> | null };

function named(call: HostCall): NamedCall {
  const id = call.instanceId;
  switch (call.method) {
    case 'connectionChanged':
      return { kind: 'connection', id, ...call.args[0] };
    case 'qrUpdated':
      return { kind: 'qr', id, qr: call.args[0] };
    case 'messageReceived':
      return { kind: 'received', id, message: call.args[0] };
    case 'messageStatus':
      return { kind: 'status', id, keyId: call.args[0], status: call.args[1] };
    case 'presenceReceived':
      return { kind: 'presence', id, chatJid: call.args[0], senderJid: call.args[1], presence: call.args[2] };
    case 'loggedOut':
      return { kind: 'loggedOut', id };
    case 'eventOccurred':
      return { kind: 'event', id, event: call.args[0], data: call.args[1] };
    case 'messagesSynced':
      return { kind: 'synced', id, messages: call.args[0] };
    case 'messageChanged':
      return { kind: 'changed', id, change: call.args[0] };
    case 'labelChanged':
      return { kind: 'label', id, change: call.args[0] };
    case 'saveSession':
      return { kind: 'saveSession', id, data: call.args[0] };
  }
}

export interface RecordingOptions {
  /** Records session saves too (a connector that saves on every change would otherwise crowd the record). */
  recordSessionSaves?: boolean;
}

/**
 * Records what a connector reports (connection, QR, messages, receipts, presence, logout, events, history, labels; session
 * saves when asked) and passes every call on to `inner`: the real runtime, or a stand-in core. Reads are not recorded.
 */
export class RecordingHost implements ConnectorHost {
  readonly calls: HostCall[] = [];

  constructor(
    private readonly inner: ConnectorHost,
    private readonly options: RecordingOptions = {},
  ) {}

  private record<M extends RecordedMethod>(method: M, instanceId: string, args: RecordedArgs[M]): void {
    this.calls.push({ method, instanceId, args } as HostCall);
  }

  get sessionKeys() {
    return this.inner.sessionKeys;
  }
  connectionChanged(instanceId: string, change: ConnectionChange) {
    this.record('connectionChanged', instanceId, [change]);
    return this.inner.connectionChanged(instanceId, change);
  }
  qrUpdated(instanceId: string, qr: QrState) {
    this.record('qrUpdated', instanceId, [qr]);
    return this.inner.qrUpdated(instanceId, qr);
  }
  messageReceived(instanceId: string, message: InboundMessage) {
    this.record('messageReceived', instanceId, [message]);
    return this.inner.messageReceived(instanceId, message);
  }
  messageStatus(instanceId: string, keyId: string, status: MessageStatus, detail?: string) {
    this.record('messageStatus', instanceId, [keyId, status]);
    return this.inner.messageStatus(instanceId, keyId, status, detail);
  }
  presenceReceived(instanceId: string, chatJid: string, senderJid: string, presence: Presence) {
    this.record('presenceReceived', instanceId, [chatJid, senderJid, presence]);
    return this.inner.presenceReceived(instanceId, chatJid, senderJid, presence);
  }
  loggedOut(instanceId: string) {
    this.record('loggedOut', instanceId, []);
    return this.inner.loggedOut(instanceId);
  }
  eventOccurred(instanceId: string, event: EventName, data: unknown) {
    this.record('eventOccurred', instanceId, [event, data]);
    return this.inner.eventOccurred(instanceId, event, data);
  }
  messagesSynced(instanceId: string, messages: InboundMessage[]) {
    this.record('messagesSynced', instanceId, [messages]);
    return this.inner.messagesSynced(instanceId, messages);
  }
  messageChanged(instanceId: string, change: MessageChange) {
    this.record('messageChanged', instanceId, [change]);
    return this.inner.messageChanged(instanceId, change);
  }
  labelChanged(instanceId: string, change: LabelChange) {
    this.record('labelChanged', instanceId, [change]);
    return this.inner.labelChanged(instanceId, change);
  }
  saveSession(instanceId: string, data: Record<string, unknown> | null) {
    if (this.options.recordSessionSaves) this.record('saveSession', instanceId, [data]);
    return this.inner.saveSession(instanceId, data);
  }
  loadSession(instanceId: string) {
    return this.inner.loadSession(instanceId);
  }
  currentInstance(instanceId: string) {
    return this.inner.currentInstance(instanceId);
  }
  proxy(instanceId: string) {
    return this.inner.proxy(instanceId);
  }

  providerToken(instanceId: string) {
    return this.inner.providerToken(instanceId);
  }
  loadMedia(blobId: string) {
    return this.inner.loadMedia(blobId);
  }

  /** The arguments (after the instance id) of every recorded call of `method`, in order. */
  of<M extends RecordedMethod>(method: M): RecordedArgs[M][] {
    return this.calls.flatMap((c) => (c.method === method ? [c.args as RecordedArgs[M]] : []));
  }
  /** The recorded calls with their arguments named; only those of `kind` and of `instanceId` when given. */
  named<K extends NamedCall['kind']>(kind?: K, instanceId?: string): Extract<NamedCall, { kind: K }>[] {
    return this.calls
      .map(named)
      .filter((c): c is Extract<NamedCall, { kind: K }> => (kind === undefined || c.kind === kind) && (instanceId === undefined || c.id === instanceId));
  }
  /** The data of every catalogue event `name` reported. */
  events(name: EventName): unknown[] {
    return this.of('eventOccurred').flatMap(([event, data]) => (event === name ? [data] : []));
  }
  received(): InboundMessage[] {
    return this.of('messageReceived').map(([message]) => message);
  }
  /** The connection states reported, in order. */
  states(): ConnectionState[] {
    return this.of('connectionChanged').map(([change]) => change.state);
  }
  /** The last connection change to `state`. */
  last(state: ConnectionState): ConnectionChange | undefined {
    return this.of('connectionChanged')
      .map(([change]) => change)
      .filter((change) => change.state === state)
      .at(-1);
  }
  clear(): void {
    this.calls.length = 0;
  }
}
