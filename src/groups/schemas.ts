// The group routes' request and answer schemas (validation and the OpenAPI document at once).
import { Type } from 'typebox';
import { withExample } from '../platform/http/schemas.js';

/** The group the examples name (the docs' example test sets up a group at this address). */
export const exampleGroupJid = '120363025246125486@g.us';
/** A 1×1 PNG, as base64: an image every example can send without fetching anything. */
const examplePicture = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const GroupJidField = Type.String({
  description: 'The group address (120363…@g.us); "@g.us" is appended when missing. Taken from the body, else the query',
});

/** `groupJid` in the query, as clients send it (n8n always does). */
export const GroupJidQuery = Type.Object({ groupJid: Type.Optional(GroupJidField) });

export const InviteCodeQuery = Type.Object({
  inviteCode: Type.Optional(Type.String({ description: 'The invite code: the 22 letters and digits after https://chat.whatsapp.com/' })),
});

export const GetParticipantsQuery = Type.Object({
  getParticipants: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Whether each group lists its participants' })),
});

const Participants = Type.Array(Type.String({ minLength: 1 }), {
  minItems: 1,
  description: 'Phone numbers with country code or addresses (…@s.whatsapp.net, …@lid)',
});

export const CreateBody = withExample(
  Type.Object({
    subject: Type.String({ description: "The group's name" }),
    participants: Participants,
    description: Type.Optional(Type.String()),
    promoteParticipants: Type.Optional(Type.Boolean({ description: 'Make every participant an admin once the group exists' })),
    profilePicture: Type.Optional(Type.String({ description: 'Accepted and ignored, as upstream (set it with updateGroupPicture)' })),
  }),
  { subject: 'Support team', participants: ['5511999999999'], description: 'Questions about orders' },
);

export const SubjectBody = withExample(Type.Object({ groupJid: Type.Optional(GroupJidField), subject: Type.String() }), {
  groupJid: exampleGroupJid,
  subject: 'Support team (Brazil)',
});
export const DescriptionBody = withExample(Type.Object({ groupJid: Type.Optional(GroupJidField), description: Type.String() }), {
  groupJid: exampleGroupJid,
  description: 'Questions about orders, 9:00–18:00',
});
export const PictureBody = withExample(
  Type.Object({
    groupJid: Type.Optional(GroupJidField),
    image: Type.String({ description: 'The image: an http(s) URL, base64 or a data URL' }),
  }),
  { groupJid: exampleGroupJid, image: examplePicture },
);
export const GroupJidBody = withExample(Type.Object({ groupJid: Type.Optional(GroupJidField) }), { groupJid: exampleGroupJid });

export const SendInviteBody = withExample(
  Type.Object({
    groupJid: Type.String({ description: 'The full group address (…@g.us); body only, as upstream' }),
    description: Type.String({ description: 'The text sent before the invite link' }),
    numbers: Participants,
  }),
  { groupJid: exampleGroupJid, description: 'Join our support group:', numbers: ['5511999999999'] },
);

export const UpdateParticipantBody = withExample(
  Type.Object({
    groupJid: Type.Optional(GroupJidField),
    action: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('promote'), Type.Literal('demote')]),
    participants: Participants,
  }),
  { groupJid: exampleGroupJid, action: 'promote', participants: ['5511999999999'] },
);

export const UpdateSettingBody = withExample(
  Type.Object({
    groupJid: Type.Optional(GroupJidField),
    action: Type.Union([Type.Literal('announcement'), Type.Literal('not_announcement'), Type.Literal('locked'), Type.Literal('unlocked')], {
      description: 'announcement: only admins send; locked: only admins edit the group info',
    }),
  }),
  { groupJid: exampleGroupJid, action: 'announcement' },
);

export const EphemeralBody = withExample(
  Type.Object({
    groupJid: Type.Optional(GroupJidField),
    expiration: Type.Union([Type.Literal(0), Type.Literal(86400), Type.Literal(604800), Type.Literal(7776000)], {
      description: 'Disappearing messages after this many seconds: 0 (off), 86400, 604800 or 7776000',
    }),
  }),
  { groupJid: exampleGroupJid, expiration: 604800 },
);

const ParticipantAnswer = Type.Object({
  id: Type.String(),
  phoneNumber: Type.Optional(Type.String()),
  lid: Type.Optional(Type.String()),
  admin: Type.Union([Type.Literal('admin'), Type.Literal('superadmin'), Type.Null()]),
});

const metadataFields = {
  id: Type.String(),
  subject: Type.String(),
  subjectOwner: Type.Optional(Type.String()),
  subjectTime: Type.Optional(Type.Number()),
  size: Type.Integer(),
  creation: Type.Optional(Type.Number()),
  owner: Type.Optional(Type.String()),
  desc: Type.Optional(Type.String()),
  descId: Type.Optional(Type.String()),
  restrict: Type.Boolean(),
  announce: Type.Boolean(),
  isCommunity: Type.Boolean(),
  isCommunityAnnounce: Type.Boolean(),
  linkedParent: Type.Optional(Type.String()),
};

/** Baileys' group metadata, as group/create and inviteInfo answer it. */
export const MetadataAnswer = Type.Object(
  {
    ...metadataFields,
    addressingMode: Type.Optional(Type.Union([Type.Literal('pn'), Type.Literal('lid')])),
    descOwner: Type.Optional(Type.String()),
    descTime: Type.Optional(Type.Number()),
    joinApprovalMode: Type.Optional(Type.Boolean()),
    memberAddMode: Type.Optional(Type.Boolean()),
    ephemeralDuration: Type.Optional(Type.Number()),
    participants: Type.Array(ParticipantAnswer),
  },
  { description: "The group's metadata" },
);

/** Evolution's summary of a group (findGroupInfos, fetchAllGroups). */
export const SummaryAnswer = Type.Object(
  {
    ...metadataFields,
    pictureUrl: Type.Union([Type.String(), Type.Null()]),
    participants: Type.Optional(Type.Array(ParticipantAnswer)),
  },
  { description: 'The group: id, subject, picture, size, owner, description, settings and (when asked) participants' },
);

export const ParticipantsAnswer = Type.Object({
  participants: Type.Array(
    Type.Object({
      id: Type.String(),
      phoneNumber: Type.Optional(Type.String()),
      lid: Type.Optional(Type.String()),
      admin: Type.Union([Type.Literal('admin'), Type.Literal('superadmin'), Type.Null()]),
      name: Type.Optional(Type.String()),
      imgUrl: Type.Optional(Type.String()),
    }),
  ),
});

export const UpdatedAnswer = Type.Object({ update: Type.Literal('success') });
export const InviteCodeAnswer = Type.Object({ inviteUrl: Type.String(), inviteCode: Type.String() });
export const RevokedAnswer = Type.Object({ revoked: Type.Literal(true), inviteCode: Type.String() });
export const SentInviteAnswer = Type.Object({ send: Type.Literal(true), inviteUrl: Type.String() });
export const AcceptedAnswer = Type.Object({ accepted: Type.Literal(true), groupJid: Type.String() });
export const ParticipantsUpdatedAnswer = Type.Object({
  updateParticipants: Type.Array(
    Type.Object({ status: Type.String(), jid: Type.String(), content: Type.Optional(Type.Object({}, { additionalProperties: true })) }),
  ),
});
export const SettingAnswer = Type.Object({}, { description: 'An empty object, as upstream' });
export const EphemeralAnswer = Type.Object({ success: Type.Literal(true) });
export const LeftAnswer = Type.Object({ groupJid: Type.String(), leave: Type.Literal(true) });
