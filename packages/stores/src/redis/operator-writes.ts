// RedisStore.forget: a tenant's records, their index entries and resolution journals, erased
// in batches by statements/forget-2.lua from the tenant's expiry index (no SCAN of the keyspace).
import type { Cluster, Redis } from 'ioredis';
import type { RedisExchange } from './backend.js';
import { asReply, integer, UnexpectedReplyError } from './record-codec.js';
import type { ScriptCommand } from './script-commands.js';

/** Index entries erased per script call in `forget`. */
const FORGET_BATCH = 500;

/**
 * `forget` on Redis: the tenant's expiry index (`names.expiry`) names every record and journal of
 * the tenant; erased in batches (one script each, on the tenant's slot) until none is left.
 * @throws StoreUnavailableError
 */
export async function forgetTenant(
  client: Redis | Cluster,
  exchange: RedisExchange,
  command: ScriptCommand,
  names: { readonly index: string; readonly expiry: string },
): Promise<number> {
  let erased = 0;
  for (;;) {
    const raw = await exchange.run('forget', client, () => command(names.index, names.expiry, FORGET_BATCH));
    const { count, left } = exchange.decode('forget', () => {
      const reply = asReply('forget', raw);
      if (Number(reply[0]) !== 10 || reply.length !== 4) throw new UnexpectedReplyError('forget', raw);
      return { count: integer('forget', reply, 2), left: integer('forget', reply, 3) };
    });
    erased += count;
    if (left === 0) return erased;
  }
}
