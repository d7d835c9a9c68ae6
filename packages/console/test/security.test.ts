// The attacks the console must refuse, over real HTTP (node:http), and what it must always send.
import { createServer } from 'node:http';
import { type ConsoleHandler, createConsoleHandler } from '@toolfence/console';
import { Guard, MemoryStore } from '@toolfence/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  close,
  EFFECTFUL,
  formFields,
  listen,
  recordPath,
  stopCall,
} from '../../../test/support/console.js';

const BASE = '/console';
const HOSTILE_TOOL = `refund<script>window.pwned=1</script>"'><img src=x onerror=alert(1)>`;
const HOSTILE_ERROR = `timeout "><script>alert('x')</script><a href='javascript:alert(1)'>`;

let store: MemoryStore;
let guard: Guard;
let server: ReturnType<typeof createServer>;
let origin: string;
let errors: unknown[];

async function start(handler: ConsoleHandler): Promise<void> {
  server = createServer((request, response) => void handler(request, response));
  origin = await listen(server);
}

beforeEach(async () => {
  store = new MemoryStore();
  // Records the body's message, so the page's escaping of it is tested (the default records none).
  guard = new Guard({
    store,
    tenant: 'tenant-a',
    describeError: (error: unknown) => ({ message: (error as Error).message }),
  });
  errors = [];
  await start(
    createConsoleHandler({
      store,
      guard,
      authorize: authorizeByHeader,
      basePath: BASE,
      onError: (e) => errors.push(e),
    }),
  );
});

afterEach(async () => {
  await close(server);
});

const refundA = { tool: 'refund', tenant: 'tenant-a', runId: 'run-a', arguments: { order: 'A-100' } };

describe('createConsoleHandler', () => {
  it('throws without authorize, without a store, or with a short csrfSecret', () => {
    const store = new MemoryStore();
    expect(() => createConsoleHandler({ store } as never)).toThrow(/needs authorize/);
    expect(() => createConsoleHandler({ store, authorize: 'yes' } as never)).toThrow(/needs authorize/);
    expect(() => createConsoleHandler({ authorize: authorizeByHeader } as never)).toThrow(/needs a store/);
    expect(() => createConsoleHandler({ store, authorize: authorizeByHeader, csrfSecret: 'short' })).toThrow(
      /csrfSecret/,
    );
    expect(() =>
      createConsoleHandler({
        store,
        guard: new Guard({ store: new MemoryStore() }),
        authorize: authorizeByHeader,
      }),
    ).toThrow(/guard.store is not the store/);
    expect(() => createConsoleHandler({ store, authorize: authorizeByHeader, basePath: '/a b' })).toThrow(
      /basePath/,
    );
  });
});

describe('who may see what', () => {
  it("answers 401 without an identity, and 403 for a tenant that is not the operator's, before reading the store", async () => {
    const key = await stopCall(guard, refundA, 'timed out');
    expect((await new ConsoleClient(origin, undefined).get(`${BASE}/`)).status).toBe(401);
    expect((await new ConsoleClient(origin, undefined).get(recordPath(BASE, 'tenant-a', key))).status).toBe(
      401,
    );
    const bob = new ConsoleClient(origin, 'bob');
    const guessed = await bob.get(recordPath(BASE, 'tenant-a', key));
    expect(guessed.status).toBe(403);
    expect(guessed.text).not.toContain('timed out');
    // The same answer for a key that does not exist: a 403 tells nothing about the key.
    expect((await bob.get(recordPath(BASE, 'tenant-a', 'f'.repeat(64)))).status).toBe(403);
    expect((await bob.get(`${BASE}/?tenant=tenant-a`)).status).toBe(403);
    expect((await new ConsoleClient(origin, 'alice').get(recordPath(BASE, 'tenant-a', key))).status).toBe(
      200,
    );
  });

  it("refuses a resolution of another tenant's record posted with a valid token of the poster", async () => {
    const keyA = await stopCall(guard, refundA, 'timed out');
    const keyB = await stopCall(guard, { ...refundA, tenant: 'tenant-b', runId: 'run-b' }, 'timed out too');
    const bob = new ConsoleClient(origin, 'bob');
    const own = formFields((await bob.get(recordPath(BASE, 'tenant-b', keyB))).text, '/confirm');
    const attack = { ...own, tenant: 'tenant-a', key: keyA, action: 'release', reason: 'guessing' };
    expect((await bob.post(`${BASE}/confirm`, attack)).status).toBe(403);
    expect((await bob.post(`${BASE}/resolve`, attack)).status).toBe(403);
    expect((await store.get({ tenant: 'tenant-a', key: keyA }))?.state).toBe('indeterminate');
  });
});

describe('forms', () => {
  it("refuse a cross-site post, a post without the token, with another operator's token, or from another origin", async () => {
    const key = await stopCall(guard, refundA, 'timed out');
    const alice = new ConsoleClient(origin, 'alice');
    const fields = {
      ...formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm'),
      reason: 'r',
    };
    const release = { ...fields, action: 'release' };
    const confirmed = formFields((await alice.post(`${BASE}/confirm`, release)).text, '/resolve');
    const { csrf: _token, ...withoutToken } = confirmed;
    const refusals = [
      // A form on another site: the browser sends Sec-Fetch-Site: cross-site and its own Origin.
      await alice.post(`${BASE}/resolve`, withoutToken, {
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      }),
      await alice.post(`${BASE}/resolve`, withoutToken),
      await alice.post(`${BASE}/resolve`, confirmed, {
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      }),
      await alice.post(`${BASE}/resolve`, confirmed, { 'sec-fetch-site': 'same-site' }),
      await alice.post(`${BASE}/resolve`, confirmed, { origin: 'null' }),
      // The token without the browser's cookie (a token copied to another browser).
      await new ConsoleClient(origin, 'alice').post(`${BASE}/resolve`, confirmed),
    ];
    const root = new ConsoleClient(origin, 'root');
    const rootToken = formFields((await root.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm')
      .csrf as string;
    refusals.push(await alice.post(`${BASE}/resolve`, { ...confirmed, csrf: rootToken }));
    expect(refusals.map((answer) => answer.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect(refusals[1]?.text).toContain('the form token is missing');
    expect((await store.get({ tenant: 'tenant-a', key }))?.state).toBe('indeterminate');
    expect((await alice.post(`${BASE}/resolve`, confirmed)).status).toBe(303);
    expect(await store.get({ tenant: 'tenant-a', key })).toBeNull();
  });

  it('refuse a body over maxBodyBytes (413) and anything but a form (415), before reading the token', async () => {
    const small = createConsoleHandler({
      store,
      guard,
      authorize: authorizeByHeader,
      basePath: BASE,
      maxBodyBytes: 1024,
    });
    const other = createServer((request, response) => void small(request, response));
    const otherOrigin = await listen(other);
    try {
      const alice = new ConsoleClient(otherOrigin, 'alice');
      expect((await alice.post(`${BASE}/confirm`, { outcome: 'x'.repeat(2048) })).status).toBe(413);
      const json = await alice.post(`${BASE}/confirm`, {}, { 'content-type': 'application/json' });
      expect([json.status, json.text.includes('takes forms')]).toEqual([415, true]);
    } finally {
      await close(other);
    }
  });

  it('take only JSON as an outcome and need a reason; a refused form changes nothing and is shown again', async () => {
    const key = await stopCall(guard, refundA, 'timed out');
    const alice = new ConsoleClient(origin, 'alice');
    const fields = formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm');
    const notJson = await alice.post(`${BASE}/confirm`, {
      ...fields,
      action: 'complete',
      outcome: "{refund: 'yes'}",
      reason: 'seen',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.text).toContain('The outcome is not valid JSON');
    expect(notJson.text).toContain('{refund: &#39;yes&#39;}</textarea>');
    const noReason = await alice.post(`${BASE}/confirm`, {
      ...fields,
      action: 'complete',
      outcome: '{"ok":true}',
      reason: '  ',
    });
    expect([noReason.status, noReason.text.includes('Say why')]).toEqual([400, true]);
    expect((await store.get({ tenant: 'tenant-a', key }))?.state).toBe('indeterminate');
  });

  it('refuse an action on a record that changed since the operator opened it', async () => {
    const key = await stopCall(guard, refundA, 'timed out');
    const alice = new ConsoleClient(origin, 'alice');
    const fields = formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm');
    // Meanwhile: released elsewhere, and the run's replay stopped again (a new life of the key).
    await guard.resolve(key, { released: true }, { tenant: 'tenant-a' });
    await stopCall(guard, refundA, 'timed out again');
    const stale = await alice.post(`${BASE}/confirm`, { ...fields, action: 'release', reason: 'no refund' });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('The record changed since you opened it');
    expect((await store.get({ tenant: 'tenant-a', key }))?.error?.message).toBe('timed out again');
  });

  it('"it happened": the next replay gets the outcome the operator entered, without running the body', async () => {
    const key = await stopCall(guard, refundA, 'timed out');
    const alice = new ConsoleClient(origin, 'alice');
    const fields = formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm');
    const outcome = '{ "refundId": "re_1", "amount": 30 }';
    const confirm = await alice.post(`${BASE}/confirm`, {
      ...fields,
      action: 'complete',
      outcome,
      reason: 'seen at the provider',
    });
    expect(confirm.text).toContain(
      'The next replay of run <strong class="text">run-a</strong> gets this outcome',
    );
    expect(confirm.text).toContain('&quot;refundId&quot;: &quot;re_1&quot;');
    const done = await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'));
    expect(done.status).toBe(303);
    let runs = 0;
    const replay = await guard.run({ ...refundA, policy: EFFECTFUL }, async () => {
      runs += 1;
      return { refundId: 'never' };
    });
    expect([runs, replay]).toEqual([0, { refundId: 're_1', amount: 30 }]);
  });
});

describe('store text', () => {
  it('renders a tool name and an error message carrying markup and quotes as text', async () => {
    const call = { ...refundA, tool: HOSTILE_TOOL };
    const key = await stopCall(guard, call, HOSTILE_ERROR);
    const page = await new ConsoleClient(origin, 'alice').get(recordPath(BASE, 'tenant-a', key));
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>');
    expect(page.text).not.toContain('<img');
    expect(page.text).not.toContain("<a href='javascript");
    expect(page.text).toContain(
      'refund&lt;script&gt;window.pwned=1&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
    expect(page.text).toContain('timeout &quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
  });
});

describe('every answer', () => {
  it('carries the security headers: 200, 401, 403, 404, 405 and 500 alike', async () => {
    const throwing = createConsoleHandler({
      store,
      authorize: () => {
        throw new Error('the session store is down: secret detail');
      },
      basePath: BASE,
      onError: (e) => errors.push(e),
    });
    const other = createServer((request, response) => void throwing(request, response));
    const otherOrigin = await listen(other);
    try {
      const answers = [
        await new ConsoleClient(origin, 'alice').get(`${BASE}/`),
        await new ConsoleClient(origin, undefined).get(`${BASE}/`),
        await new ConsoleClient(origin, 'bob').get(`${BASE}/?tenant=tenant-a`),
        await new ConsoleClient(origin, 'alice').get(`${BASE}/nothing`),
        await new ConsoleClient(origin, 'alice').get(`${BASE}/resolve`),
        await new ConsoleClient(otherOrigin, 'alice').get(`${BASE}/`),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 401, 403, 404, 405, 500]);
      for (const answer of answers) {
        expect(answer.headers.get('content-security-policy')).toBe(
          "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        );
        expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
        expect(answer.headers.get('referrer-policy')).toBe('same-origin');
        expect(answer.headers.get('x-frame-options')).toBe('DENY');
      }
      expect(answers[5]?.text).not.toContain('secret detail');
      expect(errors).toHaveLength(1);
    } finally {
      await close(other);
    }
  });
});
