// Meta message template routes: create a template for review, list the business's templates (WHATSAPP-BUSINESS).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import { CreatedTemplate, CreateTemplateBody, ListedTemplate } from './template-schemas.js';
import type { TemplateOperations } from './templates.js';

export interface TemplateRoutesOptions {
  templates: TemplateOperations;
}

export const templateRoutes: FastifyPluginAsyncTypebox<TemplateRoutesOptions> = async (app, { templates }) => {
  const instanceRoute = { config: { access: 'instance' as const, live: true } };

  app.post(
    '/template/create/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['template'],
        summary: "Submit a message template to Meta for review (the instance's WhatsApp Business Account: businessId)",
        params: InstanceParams,
        body: withExample(CreateTemplateBody, {
          name: 'order_update',
          category: 'UTILITY',
          language: 'en_US',
          components: [
            { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.', example: { body_text: [['Maria', '42']] } },
            { type: 'FOOTER', text: 'Switchboard' },
          ],
        }),
        response: { 201: CreatedTemplate },
      },
    },
    async (request, reply) => reply.status(201).send(await templates.create(pathInstance(request), request.body)),
  );

  app.get(
    '/template/find/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['template'],
        summary: "The WhatsApp Business Account's message templates, as Meta lists them (every page)",
        params: InstanceParams,
        response: { 200: Type.Array(ListedTemplate) },
      },
    },
    async (request) => templates.find(pathInstance(request)),
  );
};
