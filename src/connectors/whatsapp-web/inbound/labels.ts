// Labels (WhatsApp Business): labels and chat labels go to the host's label store (labels.edit, labels.association).
import type { BaileysEventMap } from 'baileys';
import type { InboundContext } from './context.js';

export async function onLabelsEdit(label: BaileysEventMap['labels.edit'], ctx: InboundContext): Promise<void> {
  await ctx.host.labelChanged(ctx.instanceId, {
    kind: 'edit',
    label: {
      id: label.id,
      name: label.name,
      color: label.color,
      deleted: label.deleted === true,
      ...(label.predefinedId !== undefined && label.predefinedId !== null ? { predefinedId: String(label.predefinedId) } : {}),
    },
  });
}

/** A chat's label is stored with the chat; a message's label is announced only (with its message id), as chats keep no message labels. */
export async function onLabelsAssociation(event: BaileysEventMap['labels.association'], ctx: InboundContext): Promise<void> {
  const { association, type } = event;
  const chatId = (await ctx.addresses.resolve(association.chatId)).jid;
  if ('messageId' in association) {
    await ctx.host.eventOccurred(ctx.instanceId, 'LABELS_ASSOCIATION', {
      instance: ctx.instanceName,
      type,
      chatId,
      labelId: association.labelId,
      messageId: association.messageId,
    });
    return;
  }
  await ctx.host.labelChanged(ctx.instanceId, { kind: 'association', type, chatId, labelId: association.labelId });
}
