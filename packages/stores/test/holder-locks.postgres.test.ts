// PostgresStore: a holder's renew / complete / release / markIndeterminate locks the row only when
// it matches the holder (statements/renew.sql, statements/fragments/row-seen.sql). Real concurrency on the
// real server: another connection holds the row lock in an open transaction (an UPDATE, as a
// concurrent writer does) while the calls run; we never time anything, we order events.
import type { Holder, IdempotencyStore, RecordRef } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import {
  createPool,
  dropSchema,
  holdClient,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';

const DAY_MS = 86_400_000;
const schema = uniqueSchemaName('pglock');
let pool: pg.Pool;
let store: PostgresStore;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await requirePostgres();
  pool = createPool({ max: 20 });
  // A statement that waited on the held row would fail at this deadline (StoreUnavailableError)
  // instead of hanging the test.
  store = new PostgresStore({ pool, schema, autoCleanup: false, operationTimeoutMs: 8_000 });
  await store.ensureSchema();
});

afterAll(async () => {
  await store.close();
  await dropSchema(schema);
  await pool.end();
});

async function claimed(): Promise<{ target: RecordRef; holder: Holder }> {
  const target = randomRef();
  const options = claimOptions({ leaseMs: 600_000 });
  const result = await store.claim(target, options);
  if (result.status !== 'acquired') throw new Error(`claim answered ${result.status}`);
  return { target, holder: { fence: result.fence, owner: options.owner } };
}

/** Another connection's open transaction that has updated (so holds the lock of) the row. */
async function holdRow(target: RecordRef): Promise<pg.PoolClient> {
  const writer = await holdClient(pool);
  await writer.query('BEGIN');
  await writer.query(
    `UPDATE ${store.tableName} SET lease_expires_at = lease_expires_at WHERE tenant = $1 AND key = $2`,
    [target.tenant, target.key],
  );
  return writer;
}

/** Backends of this schema's statements waiting on a lock, besides `writer`. */
async function lockWaiters(writer: pg.PoolClient): Promise<number> {
  const result = await pool.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND pid <> $1 AND position($2 in query) > 0`,
    [(writer as unknown as { processID: number }).processID, schema],
  );
  return result.rows[0].n as number;
}

async function untilOneWaits(writer: pg.PoolClient): Promise<void> {
  for (let round = 0; round < 1_000; round += 1) {
    if ((await lockWaiters(writer)) >= 1) return;
    await sleep(5);
  }
  throw new Error('the holder statement never waited on the held row');
}

async function finish(writer: pg.PoolClient, end: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  try {
    await writer.query(end);
  } finally {
    writer.release();
  }
}

describe('PostgresStore holder statements and row locks', () => {
  it('40 refused holders answer while another transaction holds the row; the current holder waits for it', async () => {
    const { target, holder } = await claimed();
    const writer = await holdRow(target);
    let open = true;
    try {
      const stale: Holder = { fence: holder.fence, owner: 'someone-else' };
      const otherFence: Holder = { fence: holder.fence + 1, owner: holder.owner };
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i += 1) {
        const who = i % 2 === 0 ? stale : otherFence;
        calls.push(
          store.renew(target, who, 30_000),
          store.complete(target, who, '{"late":true}', DAY_MS),
          store.release(target, who),
          store.markIndeterminate(target, who, { type: 'Late', message: 'late' }, DAY_MS),
        );
      }
      // All 40 answer with the writer's transaction still open: none waited for its lock.
      const answers = await Promise.all(calls);
      expect(await lockWaiters(writer)).toBe(0);
      for (let i = 0; i < answers.length; i += 4) {
        expect(answers[i]).toEqual({ status: 'lost', reason: 'stale' });
        for (const refused of answers.slice(i + 1, i + 4)) {
          expect(refused).toMatchObject({
            status: 'stale',
            record: { state: 'in_progress', fence: holder.fence, owner: holder.owner },
          });
        }
      }
      // The holder itself still takes the row lock: its renew waits for the writer's commit.
      let renewed = false;
      const renew = store.renew(target, holder, 30_000).then((result) => {
        renewed = true;
        return result;
      });
      await untilOneWaits(writer);
      expect(renewed).toBe(false);
      open = false;
      await finish(writer, 'COMMIT');
      expect(await renew).toMatchObject({ status: 'renewed' });
    } finally {
      if (open) await finish(writer, 'ROLLBACK');
    }
    expect(await store.get(target)).toMatchObject({ state: 'in_progress', fence: holder.fence });
  });

  // The holder matches in the statement's snapshot, its change waits on the writer's lock, and the
  // writer commits a version where it does not: the holder-matching statement answers
  // `ambiguous` and the store must decide on the newest version (the *-locked.sql statement), not
  // on the snapshot (which would say `settled` / the old record / `stale` instead of `not_found`).
  const operations: Record<
    string,
    (store: IdempotencyStore, target: RecordRef, holder: Holder) => Promise<unknown>
  > = {
    renew: (s, target, holder) => s.renew(target, holder, 30_000),
    complete: (s, target, holder) => s.complete(target, holder, '{"mine":true}', DAY_MS),
    release: (s, target, holder) => s.release(target, holder),
    markIndeterminate: (s, target, holder) =>
      s.markIndeterminate(target, holder, { type: 'Mine', message: 'mine' }, DAY_MS),
  };
  const changes = {
    'taken over': `SET fence = fence + 1, attempt = attempt + 1, owner = 'the-next-owner'`,
    completed: `SET state = 'completed', outcome = '{"theirs":true}'`,
    deleted: 'DELETE',
  } as const;
  const expected: Record<string, Record<keyof typeof changes, unknown>> = {
    renew: {
      'taken over': { status: 'lost', reason: 'stale' },
      completed: { status: 'lost', reason: 'settled' },
      deleted: { status: 'lost', reason: 'not_found' },
    },
    ...Object.fromEntries(
      ['complete', 'release', 'markIndeterminate'].map((name) => [
        name,
        {
          'taken over': {
            status: 'stale',
            record: { state: 'in_progress', fence: 2, owner: 'the-next-owner' },
          },
          completed: {
            status: 'stale',
            record: { state: 'completed', fence: 1, outcome: '{"theirs":true}' },
          },
          deleted: { status: 'not_found' },
        },
      ]),
    ),
  };

  for (const [name, operation] of Object.entries(operations)) {
    for (const [change, sql] of Object.entries(changes) as [keyof typeof changes, string][]) {
      it(`${name} that waited on the row, which was then ${change}: answered from the newest version`, async () => {
        const { target, holder } = await claimed();
        expect(holder.fence).toBe(1);
        const writer = await holdRow(target);
        let open = true;
        try {
          const answer = operation(store, target, holder);
          await untilOneWaits(writer);
          const statement =
            sql === 'DELETE'
              ? `DELETE FROM ${store.tableName} WHERE tenant = $1 AND key = $2`
              : `UPDATE ${store.tableName} ${sql} WHERE tenant = $1 AND key = $2`;
          await writer.query(statement, [target.tenant, target.key]);
          open = false;
          await finish(writer, 'COMMIT');
          expect(await answer).toMatchObject(expected[name]?.[change] as object);
        } finally {
          if (open) await finish(writer, 'ROLLBACK');
        }
        // Nothing of the refused holder was written.
        const after = await store.get(target);
        if (change === 'deleted') expect(after).toBeNull();
        else if (change === 'completed')
          expect(after).toMatchObject({ state: 'completed', outcome: '{"theirs":true}' });
        else expect(after).toMatchObject({ state: 'in_progress', fence: 2, owner: 'the-next-owner' });
      });
    }
  }
});
