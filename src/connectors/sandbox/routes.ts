// The sandbox messenger's own endpoints: scanning a QR code, injecting an incoming message, pressing buttons, editing labels, its media store and profile pictures.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../../platform/http/auth.js';
import { invalidInput, notFound } from '../../core/errors.js';
import { createdAnswer, InstanceParams, rawAnswer, sentAsBuilt, withExample } from '../../platform/http/schemas.js';
import type { InjectInput } from './inject.js';
import type { SandboxNetwork } from './network.js';
import { labelColours } from './labels.js';

/** A label as the sandbox answers it: the `labels.edit` data without the instance. */
const SandboxLabel = (description: string) =>
  Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      color: Type.Integer(),
      deleted: Type.Boolean(),
      predefinedId: Type.Optional(Type.String({ description: 'The WhatsApp Business default label it is (1–5)' })),
    },
    { description },
  );

export interface SandboxRouteOptions {
  network: SandboxNetwork;
  /** The kind's name, which inject checks the instance has. */
  integration: string;
  /** The name of an instance, by id (the scan answers it). */
  instanceName(id: string): string | undefined;
}

export const sandboxRoutes: FastifyPluginAsyncTypebox<SandboxRouteOptions> = async (app, { network: sandbox, integration, instanceName }) => {
  app.post(
    '/sandbox/scan',
    {
      config: { access: 'global' },
      ...sentAsBuilt,
      schema: {
        tags: ['sandbox'],
        summary: 'Scan a sandbox QR code with a chosen phone number (links the instance)',
        response: {
          200: Type.Object(
            { instance: Type.Object({ instanceName: Type.String(), status: Type.Literal('open'), owner: Type.String() }) },
            { description: 'The instance the code belonged to, now linked' },
          ),
        },
        body: withExample(
          Type.Object({
            code: Type.String({ minLength: 1 }),
            number: Type.String({ minLength: 1 }),
            profileName: Type.Optional(Type.String({ maxLength: 100 })),
          }),
          { code: 'sbx_hQ3v0Zt1mXbS8yKpL2cW9rE4uN6aF7dJ', number: '5511988887777', profileName: 'Maria' },
        ),
      },
    },
    async (request) => {
      const { code, number, profileName } = request.body;
      const linked = await sandbox.scan(code, number, profileName);
      return { instance: { instanceName: instanceName(linked.instanceId) ?? '', status: 'open' as const, owner: linked.ownerJid } };
    },
  );

  app.post(
    '/sandbox/inject/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['sandbox'],
        summary: 'Simulate an incoming message from any number (for testing bots)',
        params: InstanceParams,
        body: withExample(
          Type.Object({
            from: Type.String({ minLength: 1 }),
            text: Type.Optional(Type.String({ minLength: 1 })),
            message: Type.Optional(Type.Object({}, { additionalProperties: true })),
            pushName: Type.Optional(Type.String()),
          }),
          { from: '5511988887777', text: 'hi, is the shop open?', pushName: 'Maria' },
        ),
        response: createdAnswer('{key: {remoteJid, fromMe: false, id}, pushName, message, messageType, messageTimestamp}'),
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      if (instance.integration !== integration) throw invalidInput(`instance "${instance.name}" is not a ${integration} instance`);
      const injected = await sandbox.inject(instance.id, request.body as InjectInput);
      return reply.status(201).send(injected);
    },
  );

  app.post(
    '/sandbox/press/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['sandbox'],
        summary: 'Press a reply button of a buttons message the instance received (sends the answer to its sender)',
        params: InstanceParams,
        body: withExample(
          Type.Object({
            keyId: Type.String({ minLength: 1, description: 'The key id of the received buttons message' }),
            buttonId: Type.String({ minLength: 1, description: 'The id of the reply button pressed' }),
          }),
          { keyId: '3EB0C431C26A1916E07A4F', buttonId: 'yes' },
        ),
        response: createdAnswer('{key: {remoteJid, fromMe: true, id}, pushName, message: {interactiveResponseMessage}, messageType, messageTimestamp}'),
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      if (instance.integration !== integration) throw invalidInput(`instance "${instance.name}" is not a ${integration} instance`);
      const pressed = await sandbox.press(instance.id, request.body.keyId, request.body.buttonId);
      return reply.status(201).send(pressed);
    },
  );

  app.post(
    '/sandbox/label/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['sandbox'],
        summary: 'Create, rename, recolour or delete a label of the sandbox account, as its phone would (announced as labels.edit)',
        params: InstanceParams,
        body: withExample(
          Type.Object({
            id: Type.Optional(Type.String({ minLength: 1, description: 'The label to change; leave out to create a label' })),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Required to create a label' })),
            color: Type.Optional(Type.Integer({ minimum: 0, maximum: labelColours - 1, description: "An index of WhatsApp's 20 label colours" })),
            deleted: Type.Optional(Type.Boolean({ description: 'true: delete the label (it leaves every chat)' })),
          }),
          { name: 'Follow up', color: 3 },
        ),
        response: {
          200: SandboxLabel('The label as it is now (deleted: true when deleted)'),
          201: SandboxLabel('The label created'),
        },
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      if (instance.integration !== integration) throw invalidInput(`instance "${instance.name}" is not a ${integration} instance`);
      const { label, created } = await sandbox.editLabel(instance.id, request.body);
      return reply.status(created ? 201 : 200).send(label);
    },
  );

  app.get(
    '/sandbox/pictures/:file',
    {
      config: { access: 'public' },
      schema: {
        tags: ['sandbox'],
        summary: 'A profile picture of a sandbox account (JPEG)',
        params: Type.Object({ file: Type.String() }),
        response: { 200: rawAnswer('image/jpeg', 'The picture') },
      },
    },
    async (request, reply) => {
      const bytes = await sandbox.readPicture(request.params.file);
      if (!bytes) throw notFound(`picture ${request.params.file} does not exist`);
      return reply.type('image/jpeg').send(bytes);
    },
  );

  app.get(
    '/sandbox/media/:file',
    {
      config: { access: 'public' },
      schema: {
        tags: ['sandbox'],
        summary: 'Encrypted media of the sandbox (like the WhatsApp CDN)',
        params: Type.Object({ file: Type.String() }),
        response: { 200: rawAnswer('application/octet-stream', 'The encrypted media') },
      },
    },
    async (request, reply) => {
      const bytes = await sandbox.readMedia(request.params.file);
      if (!bytes) throw notFound(`media ${request.params.file} does not exist`);
      return reply.type('application/octet-stream').send(bytes);
    },
  );
};
