// Meta message templates (the Cloud API): creating one for review (`template/create`) and listing them (`template/find`).
import type { Connector, TemplateDraft } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { Instance } from '../core/instance.js';
import type { Db } from '../platform/store/types.js';
import type { Unit } from '../platform/store/unit.js';
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Static } from 'typebox';
import type { CreatedTemplate as CreatedTemplateAnswer, CreateTemplateSend } from './template-schemas.js';

export interface TemplateOperationsDeps {
  db: Db;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  connectorOf(instance: Instance): Connector;
}

export type CreatedTemplate = Static<typeof CreatedTemplateAnswer>;

export class TemplateOperations {
  constructor(private readonly deps: TemplateOperationsDeps) {}

  /** Submits the template to Meta (its refusal is a 400 with Meta's words), then keeps it with Meta's answer. */
  async create(instance: Instance, body: CreateTemplateSend): Promise<CreatedTemplate> {
    const connector = this.templatesOf(instance);
    const { name, category, language, components, allowCategoryChange, webhookUrl } = body;
    const draft: TemplateDraft = { name, category, language, components, ...(allowCategoryChange !== undefined ? { allowCategoryChange } : {}) };
    const answer = await connector.create(draft);
    const now = Date.now();
    const row = {
      id: timeOrderedId(),
      instance_id: instance.id,
      template_id: String(answer.id),
      name,
      template: JSON.stringify(answer),
      webhook_url: webhookUrl ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.deps.db.insertInto('templates').values(row).execute();
    const at = new Date(now).toISOString();
    return {
      id: row.id,
      templateId: row.template_id,
      name,
      // Meta's answer as it came (its status and category are strings Meta chose), with its id as checked by the client.
      template: { ...answer, id: row.template_id } as CreatedTemplate['template'],
      webhookUrl: row.webhook_url,
      createdAt: at,
      updatedAt: at,
      instanceId: instance.id,
    };
  }

  /** The business's templates as Meta lists them (every page), whatever their status. */
  async find(instance: Instance): Promise<Record<string, unknown>[]> {
    return this.templatesOf(instance).find();
  }

  private templatesOf(instance: Instance) {
    this.deps.kinds.assertCan(instance, 'templates');
    const { templates } = this.deps.connectorOf(instance);
    if (!templates) throw new Error(`the connector of ${instance.integration} declares templates but has no templates module`);
    return templates;
  }
}

/** The templates created through an instance, deleted with it (an instance removal hook). */
export async function removeTemplatesOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('templates').where('instance_id', '=', instance.id).execute();
}
