// Labels (WhatsApp Business): LABELS_EDIT with the label, LABELS_ASSOCIATION `{instance, type, chatId, labelId}`.
import type { BaileysEventMap } from 'baileys';
import { plain, type InboundContext } from './context.js';

export async function onLabelsEdit(label: BaileysEventMap['labels.edit'], ctx: InboundContext): Promise<void> {
  await ctx.host.eventOccurred(ctx.instanceId, 'LABELS_EDIT', { ...(plain(label) as Record<string, unknown>), instance: ctx.instanceName });
}

export async function onLabelsAssociation(event: BaileysEventMap['labels.association'], ctx: InboundContext): Promise<void> {
  const { association, type } = event;
  await ctx.host.eventOccurred(ctx.instanceId, 'LABELS_ASSOCIATION', {
    instance: ctx.instanceName,
    type,
    chatId: (await ctx.addresses.resolve(association.chatId)).jid,
    labelId: association.labelId,
    ...('messageId' in association ? { messageId: association.messageId } : {}),
  });
}
