// RedisStore.resolutions: the entries of a key's resolution journal (statements/resolutions-1.lua),
// newest first, written by resolve-1.lua in the same step as the resolution.
import type { RecordRef, ResolutionEntry } from '@toolfence/core';
import type { Cluster, Redis } from 'ioredis';
import type { RedisExchange } from './backend.js';
import { asReply, decodeEntry, UnexpectedReplyError } from './record-codec.js';
import type { ScriptCommand } from './script-commands.js';

/** `resolutions` on Redis, from the key's journal (`journal`). @throws StoreUnavailableError */
export async function readResolutions(
  client: Redis | Cluster,
  exchange: RedisExchange,
  command: ScriptCommand,
  ref: RecordRef,
  journal: string,
): Promise<ResolutionEntry[]> {
  const raw = await exchange.run('resolutions', client, () => command(journal));
  return exchange.decode('resolutions', () => {
    const reply = asReply('resolutions', raw);
    if (Number(reply[0]) !== 15) throw new UnexpectedReplyError('resolutions', raw);
    return reply.slice(2).map((entry) => {
      if (!Array.isArray(entry) || (entry.length !== 11 && entry.length !== 12))
        throw new UnexpectedReplyError('resolutions', raw);
      return decodeEntry('resolutions', ref, entry, raw);
    });
  });
}
