// Issue #27 on the console, over HTTP, on MemoryStore, Redis and PostgreSQL: a record whose holder
// still runs is shown as running, without actions, and a decision posted for it is refused (409);
// a record whose holder is gone (in progress, lease expired) offers the actions, and is settled
// on the holder the page was shown for; a holder that comes back (it renews) is refused again.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, Idempotency, type IdempotencyRecord } from '@toolfence/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allForms,
  authorizeByHeader,
  ConsoleClient,
  close,
  formFields,
  listen,
  recordPath,
  stopCall,
} from '../../../test/support/console.js';
import { type OpenedStore, openStore, type StoreName } from './stores.js';

const BASE = '/ops';
const DAY_MS = 86_400_000;
const LEASE_MS = 400;

describe.each(['memory', 'redis', 'postgres'] as StoreName[])(
  'the console on %s: live and gone holders',
  (name) => {
    let opened: OpenedStore;
    let server: ReturnType<typeof createServer>;
    let origin: string;
    let guard: Guard;
    beforeAll(async () => {
      opened = await openStore(name);
      guard = new Guard({ store: opened.store, tenant: 'tenant-a' });
      const handler = createConsoleHandler({
        store: opened.store,
        guard,
        authorize: authorizeByHeader,
        basePath: BASE,
      });
      server = createServer((request, response) => void handler(request, response));
      origin = await listen(server);
    });
    afterAll(async () => {
      await close(server);
      await opened.close();
    });

    /** Waits until the store's clock is past `record`'s lease (moves MemoryStore's clock). */
    async function pastLease(record: IdempotencyRecord): Promise<void> {
      if (opened.clock !== undefined) return opened.clock.advance(LEASE_MS + 1);
      const deadline = Date.now() + 10_000;
      const page = opened.store.list as NonNullable<typeof opened.store.list>;
      while (Date.now() < deadline) {
        const { nowMs } = await page.call(opened.store, { tenant: record.tenant, limit: 1 });
        if (nowMs >= record.leaseExpiresAtMs) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the lease did not expire within 10 s');
    }

    it('a live holder: shown running, no actions, a posted decision refused (409); gone: settled; back: refused', async () => {
      const ref = { tenant: 'tenant-a', key: randomBytes(32).toString('hex') };
      const owner = `worker-${name}:1`;
      const claim = await opened.store.claim(ref, {
        tool: 'refund',
        fingerprint: 'f'.repeat(64),
        owner,
        leaseMs: LEASE_MS,
        retentionMs: DAY_MS,
        mode: 'at-most-once',
        maxAttempts: 1,
        checkFingerprint: false,
      });
      expect(claim.status).toBe('acquired');
      const holder = { fence: 1, owner };
      // A long-running body renews its lease: the holder is alive.
      expect((await opened.store.renew(ref, holder, DAY_MS)).status).toBe('renewed');
      const alice = new ConsoleClient(origin, 'alice');
      const live = await alice.get(recordPath(BASE, 'tenant-a', ref.key));
      expect(live.status).toBe(200);
      expect(live.text).toContain('id="holder-alive"');
      expect(live.text).toContain(`Still running on <span class="mono text">${owner}</span>`);
      expect(live.text).toContain('lease live until');
      expect(allForms(live.text, '/confirm')).toEqual([]);

      // Its lease runs out (the worker was killed): the page offers the actions.
      expect((await opened.store.renew(ref, holder, LEASE_MS)).status).toBe('renewed');
      const renewed = (await opened.store.get(ref)) as IdempotencyRecord;
      await pastLease(renewed);
      const gone = await alice.get(recordPath(BASE, 'tenant-a', ref.key));
      expect(gone.text).toContain('id="holder-gone"');
      const fields = formFields(gone.text, '/confirm');
      expect(fields).toMatchObject({ fence: '1', owner });

      // The holder was only stalled and renews again: its body may still take effect.
      expect((await opened.store.renew(ref, holder, DAY_MS)).status).toBe('renewed');
      const refused = await alice.post(`${BASE}/confirm`, {
        ...fields,
        action: 'release',
        reason: 'nothing at the provider',
      });
      expect(refused.status).toBe(409);
      expect(refused.text).toContain(`still running on ${owner}`);
      expect((await opened.store.get(ref))?.state).toBe('in_progress');

      // Gone for good this time: the operator settles it, on the holder the page showed.
      expect((await opened.store.renew(ref, holder, LEASE_MS)).status).toBe('renewed');
      await pastLease((await opened.store.get(ref)) as IdempotencyRecord);
      const confirm = await alice.post(`${BASE}/confirm`, {
        ...fields,
        action: 'complete',
        outcome: '{"refundId":"re_9"}',
        reason: 're_9 in the provider ledger',
      });
      expect(confirm.status, confirm.text).toBe(200);
      const done = await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'));
      expect(done.status).toBe(303);
      expect(await opened.store.get(ref)).toMatchObject({
        state: 'completed',
        outcome: '{"refundId":"re_9"}',
      });
      const page = await alice.get(recordPath(BASE, 'tenant-a', ref.key));
      expect(page.text).toContain('In progress, attempt 1 · fence 1');
    });

    it('"It happened" for a record of another codec than the console\'s guard is refused (400), nothing written (item 5)', async () => {
      const app = new Guard({
        store: opened.store,
        tenant: 'tenant-a',
        codec: {
          name: 'superjson',
          encode: (value) => `sj:${JSON.stringify(value)}`,
          decode: (text) => JSON.parse(text.slice(3)),
        },
      });
      const call = {
        tool: 'refund',
        tenant: 'tenant-a',
        runId: `run-codec-${name}`,
        arguments: { order: 'A-8' },
      };
      const key = await stopCall(app, call, 'socket hang up');
      const alice = new ConsoleClient(origin, 'alice');
      const page = await alice.get(recordPath(BASE, 'tenant-a', key));
      expect(page.text).toContain('<dt>Outcome codec</dt><dd class="text mono">superjson</dd>');
      const confirm = await alice.post(`${BASE}/confirm`, {
        ...formFields(page.text, '/confirm'),
        action: 'complete',
        outcome: '{"refundId":"re_8"}',
        reason: 're_8 in the ledger',
      });
      const refused = await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'));
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('the record was written with the codec &quot;superjson&quot;');
      expect((await opened.store.get({ tenant: 'tenant-a', key }))?.state).toBe('indeterminate');
    });

    it('"It happened" keeps the record for the retention the call was claimed with, and says so (item 4)', async () => {
      const weekMs = 7 * DAY_MS;
      const call = {
        tool: 'refund',
        tenant: 'tenant-a',
        runId: `run-week-${name}`,
        arguments: { order: 'A-7' },
      };
      const key = await stopCall(guard, call, 'socket hang up', {
        kind: Idempotency.EFFECTFUL,
        retentionMs: weekMs,
      });
      const alice = new ConsoleClient(origin, 'alice');
      const page = await alice.get(recordPath(BASE, 'tenant-a', key));
      expect(page.text).toContain('7 d after it settles (the call’s; a decision here keeps it)');
      const confirm = await alice.post(`${BASE}/confirm`, {
        ...formFields(page.text, '/confirm'),
        action: 'complete',
        outcome: '{"refundId":"re_7"}',
        reason: 're_7 in the ledger',
      });
      expect(confirm.text).toContain(
        'Kept for 7 d after this decision: the retention this call was claimed with.',
      );
      const done = await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'));
      expect(done.status).toBe(303);
      const settled = (await opened.store.get({ tenant: 'tenant-a', key })) as IdempotencyRecord;
      expect(settled.state).toBe('completed');
      // Not the guard's default day: a run resumed on day 2 still replays the operator's outcome.
      expect(settled.expiresAtMs - (settled.updatedAtMs ?? 0)).toBe(weekMs);
    });
  },
);
