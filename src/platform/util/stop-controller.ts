// An AbortController for "this component is stopping": every request in flight listens to it, so it takes any number.
import { setMaxListeners } from 'node:events';

/** A controller whose signal has no listener bound (Node warns of a leak past 10, a normal load for a sender). */
export function stopController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
