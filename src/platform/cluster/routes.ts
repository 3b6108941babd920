// GET /messenger/cluster (global key): the nodes sharing this store, their incarnations, heartbeats and states.
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { NodeRegistry } from './node-registry.js';

export interface ClusterRoutesOptions {
  nodes: NodeRegistry;
  nodeId: string;
  deadAfterMs: number;
}

const NodeAnswer = Type.Object({
  incarnation: Type.String({ description: 'One life of the node: new at every start' }),
  nodeId: Type.String({ description: 'NODE_ID' }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'NODE_ADDRESS: where the other nodes reach this one' }),
  state: Type.Union([Type.Literal('alive'), Type.Literal('dead'), Type.Literal('stopped')]),
  self: Type.Boolean({ description: 'The node answering this request' }),
  startedAt: Type.String({ format: 'date-time' }),
  heartbeatAt: Type.String({ format: 'date-time' }),
  stoppedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  instances: Type.Integer({ description: 'Instances this node owns: their connections and sends run on it' }),
});

const ClusterAnswer = Type.Object(
  {
    self: Type.Object({ incarnation: Type.String(), nodeId: Type.String() }),
    deadAfterMs: Type.Integer({ description: 'NODE_DEAD_AFTER_MS: a heartbeat older than this is a dead node' }),
    nodes: Type.Array(NodeAnswer, { description: 'Incarnations seen in the last 24 hours, newest first' }),
  },
  { description: 'The nodes sharing this store' },
);

export const clusterRoutes: FastifyPluginAsync<ClusterRoutesOptions> = async (app, { nodes, nodeId, deadAfterMs }) => {
  app.get(
    '/cluster',
    {
      config: { access: 'global' },
      schema: {
        tags: ['cluster'],
        summary: 'The nodes sharing this store (global key)',
        response: { 200: ClusterAnswer },
      },
    },
    async () => ({ self: { incarnation: nodes.incarnation, nodeId }, deadAfterMs, nodes: await nodes.view() }),
  );
};
