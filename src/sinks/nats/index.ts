// The NATS sink: events to the subjects <instance>.<event> (JetStream), relayed when enabled.
import type { BrokerDeps } from '../broker-relay/deps.js';
import { BrokerSink } from '../broker-relay/sink.js';
import { natsMark } from './mark.js';
import { natsNameProblem } from './names.js';
import { createNatsRelay, natsRouter } from './relay.js';

export function natsSink(deps: BrokerDeps): BrokerSink {
  const { config } = deps;
  return new BrokerSink({
    kind: 'nats',
    outboxMark: natsMark,
    label: 'NATS',
    where: 'the subjects <instance>.<event> (JetStream)',
    settings: deps.sinks,
    nameProblem: (instanceName) => natsNameProblem(instanceName, config.natsPrefixKey),
    commits: deps.commits,
    relay: config.natsEnabled ? createNatsRelay(deps, natsRouter(deps)) : undefined,
  });
}
