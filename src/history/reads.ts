// The find use cases: what a find request asks for, checked and normalised, and the answer upstream's clients read.
import { invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import type { Db } from '../platform/store/types.js';
import { findChat, findChats } from './find-chats.js';
import { findContacts, findStatuses } from './find-contacts.js';
import { findMessages } from './find-messages.js';
import { addressFilter, pageOf, timeRange } from './filters.js';

type Range = { gte?: string | number; lte?: string | number };

export interface FindMessagesRequest {
  where?: {
    id?: string;
    key?: { id?: string; remoteJid?: string; fromMe?: boolean; participant?: string };
    messageType?: string;
    source?: string;
    messageTimestamp?: Range;
  };
  page?: number;
  offset?: number;
}

export interface FindChatsRequest {
  where?: { remoteJid?: string; messageTimestamp?: Range };
  take?: number;
  skip?: number;
  page?: number;
  offset?: number;
}

export interface FindContactsRequest {
  where?: { remoteJid?: string; id?: string };
  page?: number;
  offset?: number;
}

export interface FindStatusRequest {
  where?: { remoteJid?: string; id?: string };
  page?: number;
  offset?: number;
}

/** Upstream's page size when `offset` is not given. */
const defaultPageSize = 50;

export class HistoryReads {
  constructor(private readonly db: Db) {}

  async messages(instance: Instance, request: FindMessagesRequest) {
    const where = request.where ?? {};
    const key = where.key ?? {};
    const page = pageOf(request.page, request.offset ?? defaultPageSize);
    const filter = {
      id: where.id,
      keyId: key.id,
      remoteJid: key.remoteJid === undefined ? undefined : addressFilter(key.remoteJid, 'where.key.remoteJid'),
      fromMe: key.fromMe,
      participant: key.participant === undefined ? undefined : addressFilter(key.participant, 'where.key.participant'),
      messageType: where.messageType,
      source: where.source,
      timestamp: timeRange(where.messageTimestamp, 'where.messageTimestamp'),
    };
    const { total, records } = await findMessages(this.db, instance.id, filter, page);
    return { messages: { total, pages: Math.ceil(total / page.size), currentPage: page.page, records } };
  }

  /** `take`/`skip` as upstream; without `take`, `page`/`offset` (what the n8n node sends) page the same way. */
  async chats(instance: Instance, request: FindChatsRequest) {
    const where = request.where ?? {};
    const filter = {
      remoteJid: where.remoteJid === undefined ? undefined : addressFilter(where.remoteJid, 'where.remoteJid'),
      lastMessage: timeRange(where.messageTimestamp, 'where.messageTimestamp'),
    };
    const paging =
      request.take !== undefined || request.offset === undefined
        ? { take: request.take, skip: request.skip ?? 0 }
        : { take: request.offset, skip: request.skip ?? pageOf(request.page, request.offset).skip };
    return findChats(this.db, instance.id, filter, paging);
  }

  /** `where.remoteJid`, or `where.id` as the n8n node sends the address; `offset` is the page size (none: all). */
  async contacts(instance: Instance, request: FindContactsRequest) {
    const where = request.where ?? {};
    const given = where.remoteJid ?? where.id;
    const field = where.remoteJid !== undefined ? 'where.remoteJid' : 'where.id';
    const remoteJid = given === undefined ? undefined : addressFilter(given, field);
    if (request.page !== undefined && request.offset === undefined) throw invalidInput('offset (the page size) is required with page');
    const paging = request.offset === undefined ? { skip: 0 } : { take: request.offset, skip: pageOf(request.page, request.offset).skip };
    return findContacts(this.db, instance.id, remoteJid, paging);
  }

  async statuses(instance: Instance, request: FindStatusRequest) {
    const where = request.where ?? {};
    const filter = {
      remoteJid: where.remoteJid === undefined ? undefined : addressFilter(where.remoteJid, 'where.remoteJid'),
      keyId: where.id,
    };
    return findStatuses(this.db, instance.id, filter, pageOf(request.page, request.offset ?? defaultPageSize));
  }

  async chat(instance: Instance, remoteJid: string | undefined) {
    if (remoteJid === undefined || remoteJid.trim() === '') throw invalidInput('remoteJid is a required query parameter');
    return findChat(this.db, instance.id, addressFilter(remoteJid, 'remoteJid'));
  }
}
