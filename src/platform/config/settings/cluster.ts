// Settings of the node as one of a fleet: how often it says it is alive, and when a silent node counts as dead.
import { wholeNumber } from '../declare.js';

export const cluster = {
  nodeHeartbeatMs: wholeNumber({
    env: 'NODE_HEARTBEAT_INTERVAL_MS',
    default: 2000,
    min: 100,
    max: 60_000,
    meaning: 'How often this node writes its heartbeat into the store (and looks for the work of dead nodes to take over).',
  }),
  nodeDeadAfterMs: wholeNumber({
    env: 'NODE_DEAD_AFTER_MS',
    default: 10_000,
    min: 1000,
    max: 600_000,
    meaning:
      'A node whose heartbeat is older than this is dead: its claimed webhook deliveries are taken over at once. Keep it several heartbeats long (a pause of the process longer than this hands its work to others).',
  }),
  instanceStartConcurrency: wholeNumber({
    env: 'INSTANCE_START_CONCURRENCY',
    default: 32,
    min: 1,
    max: 1000,
    meaning:
      'How many WhatsApp Web instances (a socket and handshake each) a node opens at once when it takes many on (after it started listening, or taking over those of a dead node); GET /health tells how many are still waiting.',
  }),
  instanceQuickStartConcurrency: wholeNumber({
    env: 'INSTANCE_QUICK_START_CONCURRENCY',
    default: 2000,
    min: 1,
    max: 20_000,
    meaning:
      'How many sandbox and Cloud API instances (no socket of their own) a node opens at once when it takes many on; their sessions, connection states, events and labels are read and written a batch at a time, so 10,000 open in seconds. Lower it to spread a large takeover over more time.',
  }),
};
