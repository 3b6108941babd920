// The request being answered, for the log lines services write while answering it (the logger's mixin reads it).
import { AsyncLocalStorage } from 'node:async_hooks';

/** One request's context: its id, and whether it is still being answered. */
export interface RequestContext {
  readonly id: string;
  open: boolean;
}

const requests = new AsyncLocalStorage<RequestContext>();

/** Runs `answer` (the rest of the request's handling) in a new open context carrying `id`; answers that context. */
export function runInRequestContext(id: string, answer: () => void): RequestContext {
  const context: RequestContext = { id, open: true };
  requests.run(context, answer);
  return context;
}

/**
 * Ends the context when the answer is sent (or the client went away). Work started while answering (a connector's
 * later reconnects, a webhook delivery) keeps the context; closed, it no longer names the request, so that work's
 * lines do not carry the id forever.
 */
export function closeRequestContext(context: RequestContext): void {
  context.open = false;
}

/** The id of the request being answered here, or undefined outside a request and once its answer is sent. */
export function currentRequestId(): string | undefined {
  const context = requests.getStore();
  return context?.open === true ? context.id : undefined;
}
