// A record as Redis stores it (one MessagePack string, statements/includes/01-record.lua) read on the
// client: a claim that finds the record settled replies the string itself, so a repeat costs
// the script one GET and no unpack. The values come out as recordReply would send them, so
// record-codec.ts' decodeRecord checks them once for both paths. A leaf: a string that is not a
// record reads as undefined, and record-codec.ts says so.

/** As statements/includes/01-record.lua: the largest deadline and retention a script reads back. */
const MAX_EXACT_MS = 4503599627370495;
const MAX_RETENTION_MS = 315360000000;

/**
 * The values of a MessagePack sequence, as Lua's cmsgpack packs them (nil, booleans, integers,
 * floats, strings) and as Redis would reply them from Lua: strings as Buffers (binary-safe:
 * the resolution entry is itself a packed string), `true` as 1, `false` and nil as null,
 * numbers truncated to integers. Anything else (arrays, maps, extensions) is not a record.
 */
export function unpackSequence(bytes: Buffer): unknown[] | undefined {
  const values: unknown[] = [];
  let at = 0;
  try {
    const need = (count: number) => {
      if (at + count > bytes.length) throw new MalformedRecord();
    };
    const text = (length: number) => {
      need(length);
      const value = bytes.subarray(at, at + length);
      at += length;
      return value;
    };
    while (at < bytes.length) {
      const type = bytes[at++]!;
      if (type <= 0x7f) values.push(type);
      else if (type >= 0xe0) values.push(type - 0x100);
      else if (type >= 0xa0 && type <= 0xbf) values.push(text(type - 0xa0));
      else {
        switch (type) {
          case 0xc0:
          case 0xc2:
            values.push(null);
            break;
          case 0xc3:
            values.push(1);
            break;
          case 0xcc:
            need(1);
            values.push(bytes.readUInt8(at));
            at += 1;
            break;
          case 0xcd:
            need(2);
            values.push(bytes.readUInt16BE(at));
            at += 2;
            break;
          case 0xce:
            need(4);
            values.push(bytes.readUInt32BE(at));
            at += 4;
            break;
          case 0xcf:
            need(8);
            values.push(Number(bytes.readBigUInt64BE(at)));
            at += 8;
            break;
          case 0xd0:
            need(1);
            values.push(bytes.readInt8(at));
            at += 1;
            break;
          case 0xd1:
            need(2);
            values.push(bytes.readInt16BE(at));
            at += 2;
            break;
          case 0xd2:
            need(4);
            values.push(bytes.readInt32BE(at));
            at += 4;
            break;
          case 0xd3:
            need(8);
            values.push(Number(bytes.readBigInt64BE(at)));
            at += 8;
            break;
          case 0xca:
            need(4);
            values.push(Math.trunc(bytes.readFloatBE(at)));
            at += 4;
            break;
          case 0xcb:
            need(8);
            values.push(Math.trunc(bytes.readDoubleBE(at)));
            at += 8;
            break;
          case 0xd9:
            need(1);
            at += 1;
            values.push(text(bytes.readUInt8(at - 1)));
            break;
          case 0xda:
            need(2);
            at += 2;
            values.push(text(bytes.readUInt16BE(at - 2)));
            break;
          case 0xdb:
            need(4);
            at += 4;
            values.push(text(bytes.readUInt32BE(at - 4)));
            break;
          default:
            throw new MalformedRecord();
        }
      }
    }
  } catch (error) {
    if (error instanceof MalformedRecord) return undefined;
    throw error;
  }
  return values;
}

class MalformedRecord extends Error {}

/**
 * The reply recordReply (statements/includes/01-record.lua) would send for this record string, with
 * `code` and nowMs 0, readRecord's caps included: { code, 0, state, fence, attempt, owner,
 * leaseExpiresAtMs, expiresAtMs, tool, fingerprint, outcome, errorType, errorMessage, runId,
 * callId, description, claimedAtMs, updatedAtMs[, the 12 fields of a resolution], retentionMs,
 * codec[, the 4 fields of an approval entry] }; undefined when the string is not a record.
 */
export function recordReplyOfString(code: number, bytes: Buffer): unknown[] | undefined {
  const fields = unpackSequence(bytes);
  if (fields === undefined) return undefined;
  const at = (index: number) => fields[index] ?? null;
  const capped = (index: number, cap: number) => {
    const value = at(index);
    return typeof value === 'number' && value > cap ? cap : value;
  };
  const reply: unknown[] = [
    code,
    0,
    at(0), // state
    at(1), // fence
    at(2), // attempt
    at(3), // owner
    capped(4, MAX_EXACT_MS), // leaseExpiresAtMs
    capped(5, MAX_EXACT_MS), // expiresAtMs
    at(7), // tool
    at(8), // fingerprint
    at(9), // outcome
    at(10), // errorType
    at(11), // errorMessage
    at(12), // runId
    at(13), // callId
    at(14), // description
    at(15), // claimedAtMs
    at(16), // updatedAtMs
  ];
  const resolution = at(17);
  if (resolution !== null) {
    const entry = Buffer.isBuffer(resolution) ? unpackSequence(resolution) : undefined;
    if (entry === undefined) return undefined;
    for (let index = 0; index < 12; index++) reply.push(entry[index] ?? null);
  }
  reply.push(capped(6, MAX_RETENTION_MS)); // retentionMs
  reply.push(at(19)); // codec
  const approval = at(22);
  if (approval !== null) {
    const entry = Buffer.isBuffer(approval) ? unpackSequence(approval) : undefined;
    if (entry === undefined) return undefined;
    for (let index = 0; index < 4; index++) reply.push(entry[index] ?? null);
  }
  return reply;
}
