// Instance names NATS cannot carry: subjects with an empty token, and the global subject prefix itself.

/**
 * Why NATS cannot publish the events of an instance named `instanceName` (the subject prefix is the name), or
 * undefined when it can. Instance names are letters, digits, `-`, `_` and `.`, so only these remain. `globalPrefix`:
 * where the global events go (NATS_PREFIX_KEY): an instance of that name would mix its events with everyone's.
 */
export function natsNameProblem(instanceName: string, globalPrefix: string | undefined): string | undefined {
  if (globalPrefix && instanceName === globalPrefix) {
    return `instance ${instanceName} has the name of the global NATS subject prefix (NATS_PREFIX_KEY), so its events would mix with every instance's; use another instance name`;
  }
  if (instanceName.endsWith('.') || instanceName.includes('..')) {
    return `NATS subjects cannot have an empty token, so instance ${instanceName} (a name ending in "." or holding "..") cannot publish to <instance>.<event>; use another instance name`;
  }
  return undefined;
}
