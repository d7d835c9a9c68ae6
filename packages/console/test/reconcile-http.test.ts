// POST /reconcile over real HTTP: the checks run before the probe, in the order of the other forms
// (a form without its token, another tenant's operator, a swapped tenant, an unknown step, a
// stale version), and each refusal asks the provider nothing and writes nothing.
import { createServer } from 'node:http';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, Idempotency, MemoryStore, type ReconcileInput } from '@toolfence/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  close,
  formFields,
  listen,
  recordPath,
  stopCall,
} from '../../../test/support/console.js';

const BASE = '/console';
const probed: ReconcileInput[] = [];
const policies = {
  charge: {
    kind: Idempotency.EFFECTFUL,
    reconcile: async (input: ReconcileInput) => {
      probed.push(input);
      return { happened: false as const, detail: 'no charge for this key' };
    },
  },
};

let store: MemoryStore;
let guard: Guard;
let server: ReturnType<typeof createServer>;
let origin: string;

beforeEach(async () => {
  probed.length = 0;
  store = new MemoryStore();
  guard = new Guard({ store, tenant: 'tenant-a' });
  const handler = createConsoleHandler({ guard, authorize: authorizeByHeader, basePath: BASE, policies });
  server = createServer((request, response) => void handler(request, response));
  origin = await listen(server);
});

afterEach(async () => {
  await close(server);
});

const chargeA = { tool: 'charge', tenant: 'tenant-a', runId: 'run-a', arguments: { order: 'A-1' } };

describe('POST /reconcile', () => {
  it('refuses before asking the provider: no token, another tenant, a swapped tenant, a bad step, a stale version', async () => {
    const key = await stopCall(guard, chargeA, 'timed out');
    const before = await store.get({ tenant: 'tenant-a', key });
    const alice = new ConsoleClient(origin, 'alice');
    const page = await alice.get(recordPath(BASE, 'tenant-a', key));
    expect(page.status).toBe(200);
    const ask = formFields(page.text, '/reconcile');
    expect(ask).toMatchObject({ step: 'ask', tenant: 'tenant-a', key });

    const { csrf: _csrf, ...withoutToken } = ask;
    expect((await alice.post(`${BASE}/reconcile`, withoutToken)).status).toBe(403);
    const bob = new ConsoleClient(origin, 'bob');
    await bob.get(`${BASE}/`);
    expect((await bob.post(`${BASE}/reconcile`, ask)).status).toBe(403);
    const swapped = await alice.post(`${BASE}/reconcile`, { ...ask, tenant: 'tenant-b' });
    expect(swapped.status).toBe(403);
    expect(swapped.text).toContain('You may not see or settle the records of this tenant.');
    expect((await alice.post(`${BASE}/reconcile`, { ...ask, step: 'apply' })).status).toBe(400);
    const settleWithoutVerdict = await alice.post(`${BASE}/reconcile`, { ...ask, step: 'settle' });
    expect(settleWithoutVerdict.status).toBe(400);
    const stale = await alice.post(`${BASE}/reconcile`, { ...ask, version: 'an-older-version' });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('The record changed since you opened it');
    const otherHolder = await alice.post(`${BASE}/reconcile`, { ...ask, owner: 'someone-else' });
    expect(otherHolder.status).toBe(409);
    const crossSite = await alice.post(`${BASE}/reconcile`, ask, {
      origin: 'http://attacker.invalid',
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);

    expect(probed).toEqual([]);
    expect(await store.get({ tenant: 'tenant-a', key })).toEqual(before);
    expect(await guard.resolutions(key)).toEqual([]);

    // The same form, as sent by the page, asks the provider once and still writes nothing.
    const asked = await alice.post(`${BASE}/reconcile`, ask);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('Verdict: <span class="mono">not_happened</span>');
    expect(probed).toHaveLength(1);
    expect(await store.get({ tenant: 'tenant-a', key })).toEqual(before);
    const settle = formFields(asked.text, '/reconcile');
    expect(settle).toMatchObject({ step: 'settle', verdict: 'not_happened' });
    const settled = await alice.post(`${BASE}/reconcile`, settle);
    expect(settled.status).toBe(303);
    expect(settled.headers.get('location')).toContain('done=reconciled');
    expect(await store.get({ tenant: 'tenant-a', key })).toBeNull();
  });
});
