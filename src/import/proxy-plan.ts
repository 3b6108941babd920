// An Evolution instance's `Proxy` row mapped to Switchboard's proxy: checked as proxy/set checks it, never probed.
import { CodedError } from '../core/errors.js';
import { parseProxy, proxyLabel, type ProxyFieldNames, type ProxySettings } from '../core/proxy.js';
import type { EvolutionProxy } from './evolution-model.js';
import { ImportProblem } from './problem.js';

/** What the import keeps of the proxy: turned on with its settings, or turned off (nothing of it kept, as proxy/set). */
export type ProxyPlan = { enabled: true; settings: ProxySettings } | { enabled: false };

/** Errors name Evolution's columns, which is where the user fixes them. */
const evolutionColumns: ProxyFieldNames = {
  enabled: 'Proxy.enabled',
  host: 'Proxy.host',
  port: 'Proxy.port',
  protocol: 'Proxy.protocol',
  username: 'Proxy.username',
  password: 'Proxy.password',
};

/**
 * The proxy to store (null: Evolution had no `Proxy` row), with the report's label and what is not kept. An enabled
 * proxy Switchboard would refuse at proxy/set fails the instance: imported without it, the instance's traffic would
 * leave from this host's own address instead. The proxy is not contacted (it may be out of the importer's reach).
 */
export function planProxy(proxy: EvolutionProxy | null): { plan: ProxyPlan | null; carried: string | null; notCarried: string | null } {
  if (!proxy) return { plan: null, carried: null, notCarried: null };
  if (!proxy.enabled) {
    // Evolution blanks a proxy it turns off; one that kept its host loses it here (Switchboard forgets a proxy turned off).
    const forgotten = proxy.host
      ? `disabled proxy ${proxy.protocol || '?'}://${proxy.host}:${proxy.port}: its settings are not kept (a proxy turned off keeps none here; set it again with proxy/set)`
      : null;
    return { plan: { enabled: false }, carried: 'proxy (disabled)', notCarried: forgotten };
  }
  let parsed: ReturnType<typeof parseProxy>;
  try {
    parsed = parseProxy(
      { enabled: true, host: proxy.host, port: proxy.port, protocol: proxy.protocol, username: proxy.username, password: proxy.password },
      evolutionColumns,
    );
  } catch (error) {
    const why = error instanceof CodedError ? error.messages.join('; ') : String(error);
    throw new ImportProblem(`its proxy is refused: ${why} (fix the Proxy row in Evolution's database, or turn it off there, and run the import again)`);
  }
  if (!parsed) return { plan: { enabled: false }, carried: 'proxy (disabled)', notCarried: null };
  // A password that happens to equal the mask find answers is a password like any other here: kept as given.
  const settings: ProxySettings = parsed.keepPassword ? { ...parsed.settings, password: proxy.password } : parsed.settings;
  return { plan: { enabled: true, settings }, carried: `proxy ${proxyLabel(settings)}`, notCarried: null };
}
