// Group routes: Evolution's /group/* with its query parameters (groupJid, inviteCode, getParticipants) and status codes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams } from '../platform/http/schemas.js';
import { requestedGroup, requestedInviteCode } from './addresses.js';
import {
  AcceptedAnswer,
  CreateBody,
  DescriptionBody,
  EphemeralAnswer,
  EphemeralBody,
  GetParticipantsQuery,
  GroupJidBody,
  GroupJidQuery,
  InviteCodeAnswer,
  InviteCodeQuery,
  LeftAnswer,
  MetadataAnswer,
  ParticipantsAnswer,
  ParticipantsUpdatedAnswer,
  PictureBody,
  RevokedAnswer,
  SendInviteBody,
  SentInviteAnswer,
  SettingAnswer,
  SubjectBody,
  SummaryAnswer,
  UpdatedAnswer,
  UpdateParticipantBody,
  UpdateSettingBody,
} from './schemas.js';
import type { GroupOperations } from './service.js';

export interface GroupRoutesOptions {
  groups: GroupOperations;
}

const tags = ['groups'];

/** A request without a body is an empty one (upstream's JSON parser makes it `{}`: clients send none here). */
const emptyBodyWhenNone = async (request: FastifyRequest) => {
  request.body ??= {};
};
const updated = { update: 'success' as const };

export const groupRoutes: FastifyPluginAsyncTypebox<GroupRoutesOptions> = async (app, { groups }) => {
  const instanceRoute = { config: { access: 'instance' as const, live: true } };

  app.post(
    '/group/create/:instance',
    {
      ...instanceRoute,
      schema: { tags, summary: 'Create a group', params: InstanceParams, body: CreateBody, response: { 201: MetadataAnswer } },
    },
    async (request, reply) => reply.status(201).send(await groups.create(pathInstance(request), request.body)),
  );

  app.post(
    '/group/updateGroupSubject/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Change a group's subject",
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: SubjectBody,
        response: { 201: UpdatedAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      await groups.updateSubject(pathInstance(request), jid, request.body.subject);
      return reply.status(201).send(updated);
    },
  );

  app.post(
    '/group/updateGroupPicture/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Change a group's picture",
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: PictureBody,
        response: { 201: UpdatedAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      await groups.updatePicture(pathInstance(request), jid, request.body.image);
      return reply.status(201).send(updated);
    },
  );

  app.post(
    '/group/updateGroupDescription/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Change a group's description",
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: DescriptionBody,
        response: { 201: UpdatedAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      await groups.updateDescription(pathInstance(request), jid, request.body.description);
      return reply.status(201).send(updated);
    },
  );

  app.get(
    '/group/inviteCode/:instance',
    {
      ...instanceRoute,
      schema: { tags, summary: "A group's invite link", params: InstanceParams, querystring: GroupJidQuery, response: { 200: InviteCodeAnswer } },
    },
    async (request) => groups.inviteCode(pathInstance(request), requestedGroup(undefined, request.query.groupJid)),
  );

  app.post(
    '/group/revokeInviteCode/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Replace a group's invite code (the old link stops working)",
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: GroupJidBody,
        response: { 201: RevokedAnswer },
      },
      preValidation: emptyBodyWhenNone,
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      return reply.status(201).send(await groups.revokeInviteCode(pathInstance(request), jid));
    },
  );

  app.post(
    '/group/sendInvite/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Send a group's invite link to numbers (one text message each)",
        params: InstanceParams,
        body: SendInviteBody,
        response: { 200: SentInviteAnswer },
      },
    },
    async (request) => groups.sendInvite(pathInstance(request), request.body),
  );

  app.get(
    '/group/inviteInfo/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'The group an invite code leads to (without joining it)',
        params: InstanceParams,
        querystring: InviteCodeQuery,
        response: { 200: MetadataAnswer },
      },
    },
    async (request) => groups.inviteInfo(pathInstance(request), requestedInviteCode(request.query.inviteCode)),
  );

  app.get(
    '/group/acceptInviteCode/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'Join the group of an invite code (a GET with an effect, as upstream)',
        params: InstanceParams,
        querystring: InviteCodeQuery,
        response: { 200: AcceptedAnswer },
      },
    },
    async (request) => groups.acceptInvite(pathInstance(request), requestedInviteCode(request.query.inviteCode)),
  );

  app.get(
    '/group/findGroupInfos/:instance',
    {
      ...instanceRoute,
      schema: { tags, summary: 'A group, with its participants', params: InstanceParams, querystring: GroupJidQuery, response: { 200: SummaryAnswer } },
    },
    async (request) => groups.findGroupInfos(pathInstance(request), requestedGroup(undefined, request.query.groupJid)),
  );

  app.get(
    '/group/fetchAllGroups/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'Every group the instance takes part in',
        params: InstanceParams,
        querystring: GetParticipantsQuery,
        response: { 200: Type.Array(SummaryAnswer) },
      },
    },
    async (request) => groups.fetchAll(pathInstance(request), request.query.getParticipants),
  );

  app.get(
    '/group/participants/:instance',
    {
      ...instanceRoute,
      schema: { tags, summary: "A group's participants", params: InstanceParams, querystring: GroupJidQuery, response: { 200: ParticipantsAnswer } },
    },
    async (request) => groups.participants(pathInstance(request), requestedGroup(undefined, request.query.groupJid)),
  );

  app.post(
    '/group/updateParticipant/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'Add, remove, promote or demote participants',
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: UpdateParticipantBody,
        response: { 201: ParticipantsUpdatedAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      return reply.status(201).send(await groups.updateParticipants(pathInstance(request), jid, request.body.action, request.body.participants));
    },
  );

  app.post(
    '/group/updateSetting/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'Who may send (announcement) and who may edit the group info (locked)',
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: UpdateSettingBody,
        response: { 201: SettingAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      return reply.status(201).send(await groups.updateSetting(pathInstance(request), jid, request.body.action));
    },
  );

  app.post(
    '/group/toggleEphemeral/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: "Set a group's disappearing-messages timer",
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: EphemeralBody,
        response: { 201: EphemeralAnswer },
      },
    },
    async (request, reply) => {
      const jid = requestedGroup(request.body.groupJid, request.query.groupJid);
      return reply.status(201).send(await groups.toggleEphemeral(pathInstance(request), jid, request.body.expiration));
    },
  );

  app.delete(
    '/group/leaveGroup/:instance',
    {
      ...instanceRoute,
      schema: {
        tags,
        summary: 'Leave a group',
        params: InstanceParams,
        querystring: GroupJidQuery,
        body: GroupJidBody,
        response: { 200: LeftAnswer },
      },
      preValidation: emptyBodyWhenNone,
    },
    async (request) => groups.leave(pathInstance(request), requestedGroup(request.body.groupJid, request.query.groupJid)),
  );
};
