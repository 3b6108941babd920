// What a relay hands a broker: one publication per destination of an event, and the broker's verdict on it.

export type Scope = 'instance' | 'global';

/** One event bound for one broker destination. */
export interface Publication {
  scope: Scope;
  /** RabbitMQ: the exchange. NATS: the subject. */
  target: string;
  /** RabbitMQ routing key (the wire event name); unused by NATS. */
  routingKey: string;
  /** Broker-side deduplication id (the envelope id; NATS global copies get a suffix, see nats.ts). */
  messageId: string;
  /** Outbox fields, for logs and headers. */
  eventId: string;
  instance: string;
  /** Wire event name (`messages.upsert`). */
  event: string;
  body: Buffer;
}

/** A publication handed to the broker; `confirmed` settles with the broker's confirm or ack. */
export interface Sent {
  confirmed: Promise<void>;
}

export interface BrokerPublisher {
  /** Connects when needed, hands the publication over (waiting for the socket to drain), answers its confirmation. */
  send(publication: Publication): Promise<Sent>;
  /** Drops the connection (after a failure, or on stop); the next send connects again. */
  reset(): Promise<void>;
}

/**
 * The broker refused one publication while the connection itself is fine. `permanent`: trying again cannot help
 * (invalid subject, exchange of another type, access refused), so the relay gives up on it after a few tries.
 */
export class PublicationRefused extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    /** The broker's reply code, when it gave one. */
    readonly code?: number,
  ) {
    super(message);
    this.name = 'PublicationRefused';
  }
}

/** Rejects when `promise` has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * A publisher's connection, opened on first use and shared by every send until it is let go; an opening that fails
 * is let go by itself (when still the one held), so the next send opens again.
 */
export class LinkSlot<L> {
  /** The link held now (opening or open), if any. */
  current: Promise<L> | undefined;

  constructor(private readonly open: () => Promise<L>) {}

  /** The held link, opening one when none is held. */
  get(): Promise<L> {
    if (!this.current) {
      const opening = this.open();
      opening.catch(() => {
        if (this.current === opening) this.current = undefined;
      });
      this.current = opening;
    }
    return this.current;
  }

  /** Lets go of the held link and answers it (the caller closes it). */
  release(): Promise<L> | undefined {
    const link = this.current;
    this.current = undefined;
    return link;
  }
}
