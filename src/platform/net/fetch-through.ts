// The WHATWG fetch, sent through a given undici dispatcher (an instance's proxy).
import { fetch as undiciFetch, type Dispatcher } from 'undici';

/**
 * `fetch(url, init)` through `dispatcher`. undici's own fetch is used (Node's bundled one may be another undici version
 * than the dispatcher's); the types differ only in name, so the call is bridged through `unknown`.
 */
export function fetchThrough(dispatcher: Dispatcher, url: string | URL | Request, init?: RequestInit): Promise<Response> {
  const call = undiciFetch as unknown as (url: string | URL | Request, init: RequestInit & { dispatcher: Dispatcher }) => Promise<Response>;
  return call(url, { ...init, dispatcher });
}
