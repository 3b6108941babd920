// Unit tests of the WHATSAPP-BUSINESS pieces that need no server: Graph error mapping, list translation, inbound
// mapping, signatures and settings.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderError, TransientConnectorError } from '../../../src/core/connector.js';
import { graphFailure } from '../../../src/connectors/cloud-api/graph-errors.js';
import { interactiveList } from '../../../src/connectors/cloud-api/interactive-list.js';
import { changesOf, statusOf, toInboundMessage } from '../../../src/connectors/cloud-api/inbound.js';
import { planOutbound, recipientOf } from '../../../src/connectors/cloud-api/outbound.js';
import { checkSignature, signBody } from '../../../src/connectors/cloud-api/signature.js';
import { deriveVerifyToken, versionSegment } from '../../../src/connectors/cloud-api/settings.js';
import { statusOf as httpStatusOf } from '../../../src/platform/http/error-envelope.js';

describe('Graph errors', () => {
  const body = (code: number, message: string, details?: string) => ({
    error: { message: `(#${code}) ${message}`, type: 'OAuthException', code, ...(details ? { error_data: { details } } : {}), fbtrace_id: 'AbC' },
  });

  it('refusals are ProviderError 400 with the code, the message without its "(#code)" prefix, and the details', () => {
    const error = graphFailure(400, body(131026, 'Message undeliverable', 'Receiver is incapable of receiving this message'));
    expect(error).toBeInstanceOf(ProviderError);
    expect(httpStatusOf(error as ProviderError)).toBe(400);
    expect((error as ProviderError).messages).toEqual(['Meta error 131026: Message undeliverable', 'Receiver is incapable of receiving this message']);
  });

  it('a bad Meta token (Graph 401) is a 400 for our caller, not a 401', () => {
    const error = graphFailure(401, body(190, 'Error validating access token: Session has expired'));
    expect(httpStatusOf(error as ProviderError)).toBe(400);
    expect((error as ProviderError).messages).toEqual(['Meta error 190: Error validating access token: Session has expired']);
  });

  it('throughput limits and server trouble are transient', () => {
    for (const [status, code] of [
      [400, 130429],
      [400, 131056],
      [400, 80007],
      [400, 4],
      [429, 100],
      [500, 131000],
      [503, 2],
    ] as const) {
      expect(graphFailure(status, body(code, 'x')), `${status} ${code}`).toBeInstanceOf(TransientConnectorError);
    }
  });

  it('an answer without a Graph error object still says what happened', () => {
    expect((graphFailure(404, '<html>not found</html>') as ProviderError).messages).toEqual(['Meta Graph API answered HTTP 404 without an error description']);
  });
});

describe('interactive list', () => {
  it('without a description the title is the body and there is no header; a single section needs no title', () => {
    const list = interactiveList({ title: 'Choose', buttonText: 'Open', sections: [{ rows: [{ title: 'One' }, { title: 'Two', rowId: 'two' }] }] });
    expect(list).toEqual({
      type: 'list',
      body: { text: 'Choose' },
      action: {
        button: 'Open',
        sections: [
          {
            rows: [
              { id: 'row-1', title: 'One' },
              { id: 'two', title: 'Two' },
            ],
          },
        ],
      },
    });
  });

  it('several sections need titles, and rows need titles', () => {
    const error = (() => {
      try {
        interactiveList({ title: 'x', buttonText: 'b', sections: [{ rows: [{ title: '' }] }, { title: 'S', rows: [] }] });
      } catch (e) {
        return e as ProviderError;
      }
      return null;
    })();
    expect(error?.messages).toEqual([
      'sections[0].title is required when the list has more than one section',
      'sections[0].rows[0].title is required',
      'sections[1].rows must have at least one row',
    ]);
  });
});

describe('outbound content', () => {
  it('addresses people by number and refuses what the Cloud API cannot reach', () => {
    expect(recipientOf('4915112345678@s.whatsapp.net')).toBe('4915112345678');
    expect(() => recipientOf('12345@lid')).toThrow(/cannot send to 12345@lid/);
  });

  it('plans locations and contact cards, and refuses polls with the integration named', () => {
    expect(planOutbound({ locationMessage: { degreesLatitude: 1.5, degreesLongitude: -2, name: 'Here' } })).toEqual({
      kind: 'ready',
      type: 'location',
      body: { latitude: 1.5, longitude: -2, name: 'Here' },
    });
    expect(
      planOutbound({ contactMessage: { displayName: 'Ana', vcard: 'BEGIN:VCARD\nFN:Ana\nitem1.TEL;waid=5511999990000:+55 11 99999-0000\nEND:VCARD' } }),
    ).toEqual({
      kind: 'ready',
      type: 'contacts',
      body: [{ name: { formatted_name: 'Ana', first_name: 'Ana' }, phones: [{ phone: '+55 11 99999-0000', wa_id: '5511999990000' }] }],
    });
    expect(() => planOutbound({ pollCreationMessage: { name: 'Q', options: [] } })).toThrow(
      'Method not available on WhatsApp Business API (integration WHATSAPP-BUSINESS cannot send polls)',
    );
  });
});

describe('inbound mapping', () => {
  const none = new Map<string, string>();

  it('reads only messages changes that name a phone-number id', () => {
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'waba',
          changes: [
            { field: 'message_template_status_update', value: { event: 'APPROVED' } },
            { field: 'messages', value: { metadata: {} } },
            { field: 'messages', value: { metadata: { phone_number_id: '1' }, statuses: [{ id: 'wamid.a', status: 'delivered' }], messages: 'junk' } },
          ],
        },
      ],
    };
    expect(changesOf(payload)).toEqual([{ phoneNumberId: '1', contacts: [], messages: [], statuses: [{ id: 'wamid.a', status: 'delivered' }], errors: [] }]);
    expect(changesOf(null)).toEqual([]);
    expect(changesOf({ entry: 'x' })).toEqual([]);
  });

  it("takes Meta's type and status names as data, never as Object.prototype members", () => {
    expect(['constructor', '__proto__', 'toString'].map((status) => statusOf({ status }))).toEqual([null, null, null]);
    for (const type of ['constructor', 'toString', '__proto__']) {
      const inbound = toInboundMessage({ id: 'wamid.P', from: '5511999990001', timestamp: '1700000000', type }, [], new Map());
      expect(inbound, type).not.toBeNull();
      expect(typeof inbound!.messageType).toBe('string');
      expect(JSON.parse(JSON.stringify(inbound!.content))).toBeTypeOf('object');
    }
  });

  it('maps statuses, leaving out those without an equivalent', () => {
    expect(['sent', 'delivered', 'read', 'played', 'failed', 'deleted', 'warning'].map((status) => statusOf({ status }))).toEqual([
      'SERVER_ACK',
      'DELIVERY_ACK',
      'READ',
      'PLAYED',
      'ERROR',
      null,
      null,
    ]);
  });

  it('contact cards become contactMessage with a vCard; button replies buttonsResponseMessage; unknown kinds keep Meta’s object', () => {
    const base = { from: '4915112345678', id: 'wamid.X', timestamp: '1700000000' };
    const card = toInboundMessage(
      {
        ...base,
        type: 'contacts',
        contacts: [{ name: { formatted_name: 'Ana Lima', first_name: 'Ana' }, phones: [{ phone: '+55 11 99999-0000', wa_id: '5511999990000', type: 'CELL' }] }],
      },
      [],
      none,
    );
    expect(card).toMatchObject({
      keyId: 'wamid.X',
      remoteJid: '4915112345678@s.whatsapp.net',
      fromMe: false,
      pushName: null,
      timestamp: 1700000000,
      messageType: 'contactMessage',
      content: {
        contactMessage: {
          displayName: 'Ana Lima',
          vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana Lima\nTEL;type=CELL;waid=5511999990000:+55 11 99999-0000\nEND:VCARD',
        },
      },
    });
    expect(toInboundMessage({ ...base, type: 'button', button: { payload: 'YES', text: 'Yes please' } }, [], none)?.content).toEqual({
      buttonsResponseMessage: { selectedButtonId: 'YES', selectedDisplayText: 'Yes please' },
    });
    expect(toInboundMessage({ ...base, type: 'order', order: { catalog_id: 'c1' } }, [], none)).toMatchObject({
      messageType: 'order',
      content: { order: { catalog_id: 'c1' } },
    });
    expect(toInboundMessage({ ...base, type: 'text', text: { body: 'fwd' }, context: { forwarded: true } }, [], none)?.content).toEqual({
      extendedTextMessage: { text: 'fwd', contextInfo: { isForwarded: true } },
    });
    expect(toInboundMessage({ type: 'text', text: { body: 'no sender' } }, [], none)).toBeNull();
  });
});

describe('signature and settings', () => {
  const body = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');

  it('accepts Meta’s header for any configured secret, and only that', () => {
    const header = `sha256=${createHmac('sha256', 's2').update(body).digest('hex')}`;
    expect(signBody(body, 's2')).toBe(header);
    expect(checkSignature(body, header, ['s1', 's2'])).toBe('valid');
    expect(checkSignature(body, header.toUpperCase().replace('SHA256=', 'sha256='), ['s2'])).toBe('valid');
    expect(checkSignature(body, header, ['s1'])).toBe('mismatch');
    expect(checkSignature(Buffer.concat([body, Buffer.from(' ')]), header, ['s2'])).toBe('mismatch');
    expect(checkSignature(body, undefined, ['s2'])).toBe('missing');
    expect(checkSignature(body, 'sha256=zz', ['s2'])).toBe('malformed');
    expect(checkSignature(body, header, [])).toBe('mismatch');
  });

  it('derives a stable, key-specific verify token and accepts versions with or without their v', () => {
    const key = randomBytes(32);
    expect(deriveVerifyToken(key)).toBe(deriveVerifyToken(Buffer.from(key)));
    expect(deriveVerifyToken(key)).not.toBe(deriveVerifyToken(randomBytes(32)));
    expect(deriveVerifyToken(key)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(versionSegment('v20.0')).toBe('v20.0');
    expect(versionSegment('21.0')).toBe('v21.0');
    expect(versionSegment('/v19.0/')).toBe('v19.0');
  });
});
