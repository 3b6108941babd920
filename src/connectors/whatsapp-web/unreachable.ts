// Why WhatsApp Web could not be reached (DNS, refused, timeout, TLS, a proxy), in words a person can act on.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The network error under a Baileys close: the Boom's `data` (a websocket error), or the error itself. */
function networkErrorOf(error: unknown): Record<string, unknown> | null {
  if (!isRecord(error)) return null;
  const data = error.data;
  if (isRecord(data) && (typeof data.code === 'string' || typeof data.message === 'string')) return data;
  return typeof error.code === 'string' ? error : null;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

const tlsCode = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/**
 * Describes a failure to open the websocket to WhatsApp Web, or null when the close was not one (WhatsApp answered,
 * then closed). `address` is the websocket address the connector used; `timeoutMs` how long one attempt may take.
 */
export function describeUnreachable(error: unknown, address: URL, timeoutMs: number): string | null {
  const network = networkErrorOf(error);
  const host = address.hostname;
  const where = address.port ? `${host}:${address.port}` : host;
  const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
  const boomMessage = isRecord(error) ? text(error.message) : undefined;
  // Baileys' own timeout while waiting for WhatsApp's first answer on an open websocket.
  if (!network) return boomMessage === 'Timed Out' ? `no answer from WhatsApp Web at ${where} within ${seconds} (timed out)` : null;
  const code = text(network.code);
  const message = text(network.message) ?? code ?? 'unknown error';
  switch (code) {
    case 'ENOTFOUND':
      return `cannot reach WhatsApp Web: the name ${text(network.hostname) ?? host} does not resolve (DNS lookup failed: ENOTFOUND); check this machine's DNS and network`;
    case 'EAI_AGAIN':
      return `cannot reach WhatsApp Web: looking up ${text(network.hostname) ?? host} failed (no DNS server answered: EAI_AGAIN); check this machine's DNS and network`;
    case 'ECONNREFUSED':
      return `cannot reach WhatsApp Web at ${where}: connection refused (ECONNREFUSED); a firewall or proxy in the way?`;
    case 'ETIMEDOUT':
      return `cannot reach WhatsApp Web at ${where}: the connection timed out (ETIMEDOUT); a firewall dropping traffic?`;
    case 'ECONNRESET':
      return `the connection to WhatsApp Web at ${where} was reset (ECONNRESET); a firewall or proxy in the way?`;
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return `cannot reach WhatsApp Web at ${where}: no route to it (${code}); check this machine's network`;
  }
  if (code && tlsCode.test(code)) {
    return `the TLS connection to WhatsApp Web at ${where} failed: ${message} (${code}); a proxy or firewall intercepting TLS?`;
  }
  if (/timed out/i.test(message)) return `no answer from WhatsApp Web at ${where} within ${seconds} (${message})`;
  const refused = /^Unexpected server response: (\d+)/.exec(message);
  if (refused) {
    return `the server at ${where} answered HTTP ${refused[1]} instead of opening the WhatsApp Web websocket; a proxy or firewall in the way?`;
  }
  return `cannot reach WhatsApp Web at ${where}: ${message}${code && !message.includes(code) ? ` (${code})` : ''}`;
}
