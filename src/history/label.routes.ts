// Label routes: the instance's labels, and adding or removing a label on a chat.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import { labelActions, type LabelOperations } from './labels.js';

export interface LabelRoutesOptions {
  labels: LabelOperations;
}

const LabelAnswer = Type.Object({
  color: Type.String({ description: "WhatsApp's palette index of the label's colour (0–19), as a string (as upstream)" }),
  name: Type.String(),
  id: Type.String({ description: 'The label id on WhatsApp (what handleLabel takes as labelId)' }),
  predefinedId: Type.Union([Type.String(), Type.Null()], { description: 'The WhatsApp Business default label it is, or null' }),
});

const HandleLabelBody = withExample(
  Type.Object({
    number: Type.String({ minLength: 1, description: 'The chat: a phone number with country code, or an address (…@s.whatsapp.net, …@g.us)' }),
    labelId: Type.String({ minLength: 1, description: 'The id of the label (GET /label/findLabels lists them)' }),
    action: Type.Union(
      labelActions.map((action) => Type.Literal(action)),
      { description: 'add: put the label on the chat; remove: take it off' },
    ),
  }),
  { number: '5511999999999', labelId: '1', action: 'add' },
);

const HandledAnswer = Type.Object(
  {
    numberJid: Type.String({ description: 'The chat' }),
    labelId: Type.String(),
    add: Type.Optional(Type.Boolean({ description: 'true when the label was added' })),
    remove: Type.Optional(Type.Boolean({ description: 'true when the label was removed' })),
  },
  { description: '{numberJid, labelId, add: true} or {numberJid, labelId, remove: true}' },
);

export const labelRoutes: FastifyPluginAsyncTypebox<LabelRoutesOptions> = async (app, { labels }) => {
  const instanceRoute = { config: { access: 'instance' as const } };

  app.get(
    '/label/findLabels/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['label'],
        summary: "The account's labels, as stored (WhatsApp Business labels; none before the messenger reports any)",
        params: InstanceParams,
        response: { 200: Type.Array(LabelAnswer) },
      },
    },
    async (request) => labels.find(pathInstance(request)),
  );

  app.post(
    '/label/handleLabel/:instance',
    {
      // Labels the chat through the live connection: served by the node owning the instance.
      config: { access: 'instance', live: true },
      schema: {
        tags: ['label'],
        summary: 'Add a label to a chat, or remove it (announced as labels.association)',
        params: InstanceParams,
        body: HandleLabelBody,
        response: { 200: HandledAnswer },
      },
    },
    async (request) => labels.handle(pathInstance(request), request.body),
  );
};
