// The console's pending approvals in a real browser (Debian's Chromium via playwright-core), mounted
// in a real Express app on a MemoryStore (the store of this repository that keeps approvals so
// far): an operator finds the call beside the unknown outcomes, approves it and the call runs once
// whatever number of resumes arrive, denies another and it never runs, is told plainly when the
// request changed under the page (nothing decided), and the attacks a browser can make fail. A
// store without decideApproval says so and offers no decision.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConsoleHandler } from '@toolfence/console';
import {
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyStore,
} from '@toolfence/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { close, recordPath } from '../../../test/support/console.js';
import { launchChromium } from './chromium.js';
import { type Mounted, mountExpress } from './mounts.js';
import { type OpenedStore, openStore } from './stores.js';

const BASE = '/admin/console';
const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/console');
const HOSTILE_TOOL = `wire"'><script>window.pwned=1</script><img src=x onerror="window.pwned=2">`;
const APPROVED = {
  kind: Idempotency.EFFECTFUL,
  approval: 'required',
  describe: (args: Record<string, unknown>) => `refund ${String(args.order)} EUR ${String(args.amount)}`,
} as unknown as IdempotencyPolicy;

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

function operators(request: { headers: Record<string, unknown> }) {
  const who = request.headers['x-test-operator'];
  if (who === 'alice') return { id: 'alice@example.com', name: 'Alice Support', tenants: ['tenant-a'] };
  return null;
}

async function contextOf(operator: string): Promise<BrowserContext> {
  return browser.newContext({
    extraHTTPHeaders: { 'x-test-operator': operator },
    viewport: { width: 1280, height: 860 },
  });
}

/** A call that needs an approval; resolves to its key (it asked) or its outcome (it ran). */
function callOf(guard: Guard, order: string, amount: number, tool = 'refund', counter = { runs: 0 }) {
  return guard
    .run({ tool, runId: `run-${order}`, arguments: { order, amount }, policy: APPROVED }, async () => {
      counter.runs += 1;
      return { refundId: `re_${order}` };
    })
    .then(
      (value) => ({ ran: value }),
      (error: { code?: string; key?: string }) => ({ code: error.code, key: error.key as string }),
    );
}

describe('pending approvals in the console, in Chromium', () => {
  let opened: OpenedStore;
  let guard: Guard;
  let mounted: Mounted;
  let alice: BrowserContext;
  let page: Page;
  let attacker: Server;
  let attackerOrigin: string;
  const violations: string[] = [];
  const events: GuardEvent[] = [];

  beforeAll(async () => {
    opened = await openStore('memory');
    guard = new Guard({ store: opened.store, tenant: 'tenant-a', onEvent: (event) => events.push(event) });
    mounted = await mountExpress(createConsoleHandler({ guard, basePath: BASE, authorize: operators }), BASE);
    attacker = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://attacker.invalid');
      response.setHeader('Content-Type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>win a prize</title>
<form method="post" action="${mounted.origin}${BASE}/decide">
<input type="hidden" name="tenant" value="tenant-a">
<input type="hidden" name="key" value="${url.searchParams.get('key')}">
<input type="hidden" name="version" value="${url.searchParams.get('version')}">
<input type="hidden" name="decision" value="approve">
<input type="hidden" name="reason" value="attacker">
<button id="go">Claim your prize</button></form>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.2', resolve));
    const address = attacker.address();
    attackerOrigin = `http://127.0.0.2:${typeof address === 'object' && address !== null ? address.port : 0}`;
    alice = await contextOf('alice');
    page = await alice.newPage();
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
  });

  afterAll(async () => {
    await alice?.close();
    if (attacker !== undefined) await close(attacker);
    await mounted?.close();
    await opened?.close();
  });

  it('lists the waiting call under Pending approvals; Approve lets it run once across two resumes', async () => {
    const counter = { runs: 0 };
    const asked = await callOf(guard, 'A-100', 30, 'refund', counter);
    expect(asked).toMatchObject({ code: 'APPROVAL_REQUIRED' });
    opened.clock?.advance(4 * 60_000);
    await page.goto(`${mounted.origin}${BASE}/`);
    const tabs = await page.locator('nav.states a').allTextContents();
    expect(tabs.slice(0, 2)).toEqual(['Indeterminate', 'Pending approvals']);
    await page.getByRole('link', { name: 'Pending approvals' }).click();
    await page.waitForURL(/state=awaiting_approval/);
    expect(await page.locator('h1').textContent()).toBe('Pending approvals');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody').textContent()).toContain('refund A-100 EUR 30');
    if (opened.clock !== undefined) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'approvals.png'), fullPage: true });
    }
    await page.getByRole('link', { name: 'refund' }).click();
    await page.waitForURL(/\/record\?/);
    expect(await page.locator('#approval-state').textContent()).toContain('nothing of it ran');
    expect(await page.locator('main').textContent()).not.toContain('Still running');
    if (opened.clock !== undefined)
      await page.screenshot({ path: join(SCREENSHOTS, 'approval-detail.png'), fullPage: true });
    await page.locator('#reason-approve').fill('customer confirmed the refund by phone');
    await page.getByRole('button', { name: 'Approve: let it run once' }).click();
    await page.waitForURL(/done=approved/);
    expect(await page.getByRole('status').textContent()).toContain('Approved: the call runs once');
    expect(await page.locator('#approval-state').textContent()).toContain('alice@example.com');
    const key = (asked as { key: string }).key;
    expect(await opened.store.get({ tenant: 'tenant-a', key })).toMatchObject({
      state: 'approved',
      approval: { approved: true, by: 'alice@example.com', reason: 'customer confirmed the refund by phone' },
    });
    // Decided through the application's guard: its onEvent hears who approved, and why.
    expect(events.filter((event) => event.type === 'tool.approval_decided')).toEqual([
      expect.objectContaining({
        key,
        tool: 'refund',
        approval: {
          approved: true,
          by: 'alice@example.com',
          reason: 'customer confirmed the refund by phone',
        },
      }),
    ]);
    const [first, second] = await Promise.all([
      callOf(guard, 'A-100', 30, 'refund', counter),
      callOf(new Guard({ store: opened.store, tenant: 'tenant-a' }), 'A-100', 30, 'refund', counter),
    ]);
    expect(counter.runs).toBe(1);
    expect([first, second]).toEqual([{ ran: { refundId: 're_A-100' } }, { ran: { refundId: 're_A-100' } }]);
    // Other arguments are another call: they still wait for their own approval.
    expect(await callOf(guard, 'A-100', 31, 'refund', counter)).toMatchObject({ code: 'APPROVAL_REQUIRED' });
    expect(violations).toEqual([]);
  });

  it('Deny: the call never runs, and its page says who denied it', async () => {
    const asked = (await callOf(guard, 'A-200', 450)) as { key: string };
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', asked.key)}`);
    await page.locator('#reason-deny').fill('above the refund limit');
    await page.getByRole('button', { name: 'Deny: it never runs' }).click();
    await page.waitForURL(/done=denied/);
    expect(await page.locator('#approval-state').textContent()).toContain('Denied by alice@example.com');
    expect(await page.locator('form[action$="/decide"]').count()).toBe(0);
    const counter = { runs: 0 };
    expect(await callOf(guard, 'A-200', 450, 'refund', counter)).toMatchObject({ code: 'APPROVAL_DENIED' });
    expect(counter.runs).toBe(0);
  });

  it('a request that changed under the page is refused plainly, nothing decided; an empty reason is asked for', async () => {
    const asked = (await callOf(guard, 'A-300', 5)) as { key: string };
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', asked.key)}`);
    const [empty] = await Promise.all([
      page.waitForResponse(`${mounted.origin}${BASE}/decide`),
      page
        .locator('form[action$="/decide"]')
        .first()
        .evaluate((form) => {
          (form.querySelector('input[name="reason"]') as unknown as { required: boolean }).required = false;
          (form as unknown as { submit(): void }).submit();
        }),
    ]);
    expect(empty.status()).toBe(400);
    expect(await page.locator('#problem-approve').textContent()).toContain('Say why');
    const seen = await opened.store.get({ tenant: 'tenant-a', key: asked.key });
    // Meanwhile the request expires (forgotten here) and the call asks again from another worker.
    await opened.store.forget({ tenant: 'tenant-a' });
    await callOf(new Guard({ store: opened.store, tenant: 'tenant-a' }), 'A-300', 5);
    await page.locator('#reason-approve').fill('looks fine');
    const [answer] = await Promise.all([
      page.waitForResponse(`${mounted.origin}${BASE}/decide`),
      page.getByRole('button', { name: 'Approve: let it run once' }).click(),
    ]);
    expect(answer.status()).toBe(409);
    expect(await page.locator('#problem-approve').textContent()).toContain(
      'The request changed since you opened it',
    );
    const now = await opened.store.get({ tenant: 'tenant-a', key: asked.key });
    expect(now?.state).toBe('awaiting_approval');
    expect(now?.owner).not.toBe(seen?.owner);
    expect(now?.approval).toBeUndefined();
  });

  it('refuses a cross-site decision, and shows a hostile tool name as text', async () => {
    const hostile = (await callOf(guard, 'A-400', 1, HOSTILE_TOOL)) as { key: string };
    const evil = await alice.newPage();
    await evil.goto(`${attackerOrigin}/?key=${hostile.key}`);
    const [answer] = await Promise.all([
      evil.waitForResponse(`${mounted.origin}${BASE}/decide`),
      evil.click('#go'),
    ]);
    expect(answer.status()).toBe(403);
    await evil.close();
    expect((await opened.store.get({ tenant: 'tenant-a', key: hostile.key }))?.state).toBe(
      'awaiting_approval',
    );
    await page.goto(`${mounted.origin}${BASE}/?state=awaiting_approval`);
    expect(await page.locator('tbody a').allTextContents()).toContain(HOSTILE_TOOL);
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', hostile.key)}`);
    expect(await page.locator('h1 .text').textContent()).toBe(HOSTILE_TOOL);
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
  });

  it('on a store without decideApproval: the tab says it keeps no approvals, and no record offers a decision', async () => {
    const bare = new Proxy(opened.store, {
      get: (target, name) => {
        if (name === 'decideApproval') return undefined;
        const value = Reflect.get(target, name, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as IdempotencyStore;
    const other = await mountExpress(
      createConsoleHandler({ store: bare, basePath: BASE, authorize: operators }),
      BASE,
    );
    try {
      const listed = await page.goto(`${other.origin}${BASE}/?state=awaiting_approval`);
      expect(listed?.status()).toBe(200);
      expect(await page.locator('#no-approvals').textContent()).toContain('This store keeps no approvals');
      const waiting = (
        await opened.store.list({ tenant: 'tenant-a', states: ['awaiting_approval'], limit: 1 })
      ).records[0];
      await page.goto(`${other.origin}${recordPath(BASE, 'tenant-a', waiting?.key as string)}`);
      expect(await page.locator('form[action$="/decide"]').count()).toBe(0);
    } finally {
      await other.close();
    }
  });
});
