// Profile routes: profile pictures and profiles, the own name and "about", the privacy settings.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import type { ProfileOperations } from './profile.js';

const NumberBody = withExample(Type.Object({ number: Type.Optional(Type.String({ minLength: 1 })) }), { number: '5511999999999' });
const NameBody = withExample(Type.Object({ name: Type.Optional(Type.String()) }), { name: 'Acme Support' });
const StatusBody = withExample(Type.Object({ status: Type.Optional(Type.String({ description: 'The "about" text' })) }), {
  status: 'We answer 9:00–18:00',
});
const PictureBody = withExample(Type.Object({ picture: Type.Optional(Type.String({ description: 'The image: http(s) URL, base64 or data URL' })) }), {
  picture: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
});

const answer = (description: string) => ({ 200: Type.Object({}, { additionalProperties: true, description }) });
const updated = answer('{update: "success"}');

export interface ProfileRoutesOptions {
  profiles: ProfileOperations;
}

export const profileRoutes: FastifyPluginAsyncTypebox<ProfileRoutesOptions> = async (app, { profiles }) => {
  app.post(
    '/chat/fetchProfilePictureUrl/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['profile'],
        summary: "An account's profile picture URL (null when there is none or it cannot be seen)",
        params: InstanceParams,
        body: NumberBody,
        response: answer('{wuid, profilePictureUrl: string | null}'),
      },
    },
    async (request) => profiles.pictureUrl(pathInstance(request), request.body.number),
  );

  app.post(
    '/chat/fetchProfile/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['profile'],
        summary: "An account's profile (the own one without number)",
        params: InstanceParams,
        body: Type.Optional(withExample(NumberBody, {})),
        response: answer('{wuid, name, numberExists: true, picture, status: {status, setAt}, isBusiness}'),
      },
    },
    async (request) => profiles.fetch(pathInstance(request), request.body?.number),
  );

  app.post(
    '/chat/updateProfileName/:instance',
    {
      config: { access: 'instance', live: true },
      schema: { tags: ['profile'], summary: "Change the own profile's name", params: InstanceParams, body: NameBody, response: updated },
    },
    async (request) => {
      await profiles.setName(pathInstance(request), request.body.name);
      return { update: 'success' };
    },
  );

  app.post(
    '/chat/updateProfileStatus/:instance',
    {
      config: { access: 'instance', live: true },
      schema: { tags: ['profile'], summary: 'Change the own "about" text', params: InstanceParams, body: StatusBody, response: updated },
    },
    async (request) => {
      await profiles.setStatus(pathInstance(request), request.body.status);
      return { update: 'success' };
    },
  );

  app.post(
    '/chat/fetchBusinessProfile/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['profile'],
        summary: "An account's business profile (the own one without number)",
        params: InstanceParams,
        body: Type.Optional(NumberBody),
        response: answer(
          '{isBusiness: true, wid, address, description, website, email, category, business_hours} or {isBusiness: false, message, jid, exists, number}',
        ),
      },
    },
    async (request) => profiles.businessProfile(pathInstance(request), request.body?.number),
  );

  app.post(
    '/chat/updateProfilePicture/:instance',
    {
      config: { access: 'instance', live: true },
      schema: { tags: ['profile'], summary: 'Change the own profile picture', params: InstanceParams, body: PictureBody, response: updated },
    },
    async (request) => {
      await profiles.setPicture(pathInstance(request), request.body.picture);
      return { update: 'success' };
    },
  );

  app.delete(
    '/chat/removeProfilePicture/:instance',
    {
      config: { access: 'instance', live: true },
      schema: { tags: ['profile'], summary: 'Remove the own profile picture', params: InstanceParams, response: updated },
    },
    async (request) => {
      await profiles.removePicture(pathInstance(request));
      return { update: 'success' };
    },
  );

  app.get(
    '/chat/fetchPrivacySettings/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['profile'],
        summary: 'The privacy settings',
        params: InstanceParams,
        response: answer('{readreceipts, profile, status, online, last, groupadd}'),
      },
    },
    async (request) => profiles.privacy(pathInstance(request)),
  );
};
