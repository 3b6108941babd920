// Schemas of the Meta message template routes (template/create, template/find, message/sendTemplate): validation and OpenAPI.
import { Type, type Static } from 'typebox';
import { commonSendFields } from './send-schemas.js';

/** Meta's template categories. */
const templateCategories = ['AUTHENTICATION', 'MARKETING', 'UTILITY'] as const;

const Language = Type.String({
  minLength: 2,
  maxLength: 15,
  pattern: '^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$',
  description: "Meta's language code: en_US, pt_BR, es…",
});

/** A component of a template to create, as Meta defines it: HEADER, BODY, FOOTER or BUTTONS, with its own fields. */
const CreateComponent = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'HEADER, BODY, FOOTER or BUTTONS' }),
    format: Type.Optional(Type.String({ description: 'HEADER: TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION' })),
    text: Type.Optional(Type.String({ description: 'The text, with {{1}}-style variables' })),
    example: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Sample values of the variables (Meta requires them)' })),
    buttons: Type.Optional(
      Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'BUTTONS: QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, OTP…' }),
    ),
  },
  { additionalProperties: true, description: "A template component, passed to Meta as it is (Meta's other fields allowed)" },
);

export const CreateTemplateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 512, pattern: '^[a-z0-9_]+$', description: "Lowercase letters, digits and underscores (Meta's rule)" }),
  category: Type.Union(
    templateCategories.map((category) => Type.Literal(category)),
    { description: 'AUTHENTICATION, MARKETING or UTILITY' },
  ),
  language: Language,
  components: Type.Array(CreateComponent, { minItems: 1 }),
  allowCategoryChange: Type.Optional(Type.Boolean({ description: 'Let Meta change the category instead of refusing (Graph allow_category_change)' })),
  webhookUrl: Type.Optional(Type.String({ description: 'Kept with the template and answered; Meta status changes are not forwarded there' })),
});
export type CreateTemplateSend = Static<typeof CreateTemplateBody>;

/** A parameter of a component of a template send, as Meta defines it (text, currency, date_time, image, document, video, payload…). */
const SendParameter = Type.Object(
  { type: Type.String({ minLength: 1, description: 'text, currency, date_time, image, document, video, location, payload, coupon_code, action…' }) },
  { additionalProperties: true },
);

/** A component of a template send: header, body or button, with its parameters (Meta's fields). */
const SendComponent = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'header, body or button' }),
    sub_type: Type.Optional(Type.String({ description: 'button: quick_reply, url, copy_code…' })),
    index: Type.Optional(Type.Union([Type.String(), Type.Integer({ minimum: 0 })], { description: "button: the button's position, from 0" })),
    parameters: Type.Optional(Type.Array(SendParameter)),
  },
  { additionalProperties: true, description: "A template component, passed to Meta as it is (Meta's other fields allowed)" },
);

export const TemplateSendBody = Type.Object({
  ...commonSendFields,
  name: Type.String({ minLength: 1, maxLength: 512, description: 'The name of an approved template' }),
  language: Language,
  components: Type.Optional(Type.Array(SendComponent, { description: "The values of the template's variables" })),
  webhookUrl: Type.Optional(Type.String({ description: 'Accepted for compatibility; statuses arrive as messages.update on the instance webhook' })),
});
export type TemplateSend = Static<typeof TemplateSendBody>;

/** template/create's answer (Evolution's `Template` row). */
export const CreatedTemplate = Type.Object({
  id: Type.String({ description: "Switchboard's id of the template" }),
  templateId: Type.String({ description: "Meta's id of the template" }),
  name: Type.String(),
  template: Type.Object(
    { id: Type.String(), status: Type.Optional(Type.String()), category: Type.Optional(Type.String()) },
    { additionalProperties: true, description: "Meta's answer: {id, status (PENDING, APPROVED, REJECTED), category}" },
  ),
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  instanceId: Type.String(),
});

/** A template as Meta lists it. */
export const ListedTemplate = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    language: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    category: Type.Optional(Type.String()),
    components: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true, description: 'A template as Meta lists it (every field Meta answers)' },
);
