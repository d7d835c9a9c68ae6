// The console in a real browser (Debian's Chromium via playwright-core), mounted in a real
// Express app, on MemoryStore, RedisStore, PostgresStore and SQLiteStore: an operator lists,
// filters, opens a record and settles it, and the agent's next replay of the call gets the
// decision; the attacks a browser can make fail. The memory run writes the screenshots of docs/console.md.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, type GuardEvent } from '@toolfence/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { close, DESCRIBED_REFUND, recordPath, stopCall } from '../../../test/support/console.js';
import { launchChromium } from './chromium.js';
import { type Mounted, mountExpress } from './mounts.js';
import { type OpenedStore, openStore, type StoreName } from './stores.js';

const BASE = '/admin/console';
const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/console');
const HOSTILE_TOOL = `refund"'><script>window.pwned=1</script><img src=x onerror="window.pwned=2">`;
const HOSTILE_ERROR = `gateway said: "><script>window.pwned=3</script><b onmouseover='x'>bold</b>`;

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** A browser context whose every request carries the operator (a stand-in for a session cookie sent everywhere). */
async function contextOf(operator: string): Promise<BrowserContext> {
  const context = await browser.newContext({
    extraHTTPHeaders: { 'x-test-operator': operator },
    viewport: { width: 1280, height: 860 },
  });
  return context;
}

function refund(runId: string, order: string, amount: number, tenant = 'tenant-a') {
  return { tool: 'refund', tenant, runId, arguments: { order, amount } };
}

describe.each(['memory', 'redis', 'postgres', 'sqlite'] as StoreName[])(
  'the console on %s, in Chromium',
  (storeName) => {
    let opened: OpenedStore;
    let guard: Guard;
    let mounted: Mounted;
    let attacker: Server;
    let attackerOrigin: string;
    const events: GuardEvent[] = [];
    const keys: Record<string, string> = {};
    let alice: BrowserContext;
    let page: Page;
    const violations: string[] = [];

    beforeAll(async () => {
      opened = await openStore(storeName);
      guard = new Guard({
        store: opened.store,
        tenant: 'tenant-a',
        onEvent: (event) => events.push(event),
        // The page shows the recorded message as text: record it (the default records none).
        describeError: (error: unknown) => ({ message: (error as Error).message }),
      });
      const handler = createConsoleHandler({
        guard,
        basePath: BASE,
        authorize: (request) => {
          const who = request.headers['x-test-operator'];
          if (who === 'alice')
            return { id: 'alice@example.com', name: 'Alice Support', tenants: ['tenant-a'] };
          if (who === 'bob') return { id: 'bob@example.com', name: 'Bob', tenants: ['tenant-b'] };
          return null;
        },
      });
      mounted = await mountExpress(handler, BASE);
      const seeds: [string, () => Promise<string>][] = [
        [
          'paid',
          () =>
            stopCall(
              guard,
              refund('run-1001', 'A-100', 30),
              'the payment provider timed out after 10 s',
              DESCRIBED_REFUND,
            ),
        ],
        [
          'unpaid',
          () =>
            stopCall(guard, refund('run-1002', 'A-200', 45), 'connection reset by peer', DESCRIBED_REFUND),
        ],
        [
          'email',
          () =>
            stopCall(
              guard,
              {
                tool: 'send_email',
                tenant: 'tenant-a',
                runId: 'run-1003',
                arguments: { to: 'c@example.com' },
              },
              'SMTP server closed the connection',
            ),
        ],
        [
          'hostile',
          () => stopCall(guard, { ...refund('run-1004', 'A-400', 5), tool: HOSTILE_TOOL }, HOSTILE_ERROR),
        ],
        [
          'otherTenant',
          () =>
            stopCall(
              guard,
              refund('run-2001', 'B-100', 99, 'tenant-b'),
              'tenant B timed out',
              DESCRIBED_REFUND,
            ),
        ],
      ];
      for (const [name, seed] of seeds) {
        keys[name] = await seed();
        // MemoryStore's clock stands still (stable screenshots): space the records out, oldest first.
        opened.clock?.advance(7 * 60_000);
      }
      opened.clock?.advance(45 * 60_000);
      // The attacker's site: another origin (127.0.0.2), its form posting to the console.
      attacker = createServer((request, response) => {
        const target = `${mounted.origin}${BASE}/resolve`;
        const url = new URL(request.url ?? '/', 'http://attacker.invalid');
        response.setHeader('Content-Type', 'text/html; charset=utf-8');
        response.end(`<!doctype html><title>win a prize</title>
<form method="post" action="${target}">
<input type="hidden" name="tenant" value="tenant-a">
<input type="hidden" name="key" value="${url.searchParams.get('key')}">
<input type="hidden" name="version" value="${url.searchParams.get('version')}">
<input type="hidden" name="action" value="release">
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

    it('lists indeterminate records first, filters by tool, opens one, and "it happened" reaches the next replay', async () => {
      const list = await page.goto(`${mounted.origin}${BASE}/`);
      expect(list?.status()).toBe(200);
      await expect(page.locator('nav.states a[aria-current="page"]').textContent()).resolves.toBe(
        'Indeterminate',
      );
      // The stylesheet applies under the CSP (the current tab has the accent background), and the
      // page broke no rule of the policy.
      const tabBackground = await page
        .locator('nav.states a[aria-current="page"]')
        .evaluate(
          (element) =>
            (
              globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
            ).getComputedStyle(element).backgroundColor,
        );
      expect(tabBackground).toBe('rgb(11, 87, 208)');
      const rows = page.locator('tbody tr');
      expect(await rows.count()).toBe(4);
      expect(await page.locator('tbody').textContent()).not.toContain('run-2001');
      if (storeName === 'memory') {
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(SCREENSHOTS, 'list.png'), fullPage: true });
      }

      await page.getByLabel('Tool', { exact: true }).fill('refund');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/tool=refund/);
      expect(await rows.count()).toBe(2);
      await page
        .getByRole('row', { name: /run-1001/ })
        .getByRole('link', { name: 'refund' })
        .click();
      await page.waitForURL(/\/record\?/);
      const facts = await page.locator('dl.facts').textContent();
      for (const text of ['refund A-100 EUR 30', 'run-1001', 'call_run-1001', keys.paid as string])
        expect(facts).toContain(text);
      expect(await page.locator('pre').first().textContent()).toBe(
        'the payment provider timed out after 10 s',
      );
      if (storeName === 'memory')
        await page.screenshot({ path: join(SCREENSHOTS, 'detail.png'), fullPage: true });

      await page.getByLabel('Outcome (JSON)').fill('{"refundId": "re_3PqX", "status": "succeeded"}');
      await page
        .getByLabel('Why (recorded with your name)')
        .first()
        .fill('refund re_3PqX is in the provider dashboard');
      await page.getByRole('button', { name: 'Review: it happened' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Confirm: it happened');
      expect(await page.locator('main').textContent()).toContain(
        'The next replay of run run-1001 gets this outcome',
      );
      if (storeName === 'memory')
        await page.screenshot({ path: join(SCREENSHOTS, 'confirm.png'), fullPage: true });
      await page.getByRole('button', { name: 'Record the outcome' }).click();
      await page.waitForURL(/done=completed/);
      expect(await page.getByRole('status').textContent()).toContain('Recorded: it happened');
      const history = await page.locator('table').last().textContent();
      expect(history).toContain('alice@example.com');
      expect(history).toContain('refund re_3PqX is in the provider dashboard');
      if (storeName === 'memory')
        await page.screenshot({ path: join(SCREENSHOTS, 'resolved.png'), fullPage: true });

      let runs = 0;
      const replay = await guard.run(
        { ...refund('run-1001', 'A-100', 30), policy: DESCRIBED_REFUND },
        async () => {
          runs += 1;
          return { refundId: 'a second refund' };
        },
      );
      expect([runs, replay]).toEqual([0, { refundId: 're_3PqX', status: 'succeeded' }]);
      expect(violations).toEqual([]);
      const resolved = events.filter((event) => event.type === 'tool.resolved');
      expect(resolved.map((event) => [event.key, event.resolution?.action, event.resolution?.by])).toEqual([
        [keys.paid, 'completed', 'alice@example.com'],
      ]);
    });

    it('"it did not happen" releases the call: the next replay runs it once, and the one after replays', async () => {
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.unpaid as string)}`);
      await page.locator('#reason-release').fill('no refund A-200 at the provider');
      await page.getByRole('button', { name: 'Review: it did not happen' }).click();
      expect(await page.locator('main').textContent()).toContain(
        'The next replay of run run-1002 runs refund again, once.',
      );
      await page.getByRole('button', { name: 'Release the call' }).click();
      await page.waitForURL(/done=released/);
      expect(await page.getByRole('status').textContent()).toContain('Released');
      expect(await page.locator('table').last().textContent()).toContain('no refund A-200 at the provider');

      let runs = 0;
      const call = { ...refund('run-1002', 'A-200', 45), policy: DESCRIBED_REFUND };
      const body = async () => {
        runs += 1;
        return { refundId: 're_new' };
      };
      expect(await guard.run(call, body)).toEqual({ refundId: 're_new' });
      expect(await guard.run(call, body)).toEqual({ refundId: 're_new' });
      expect(runs).toBe(1);
    });

    it('works from the keyboard alone: a skip link first, every field labelled, a review submitted with Enter and left by its Back link', async () => {
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.email as string)}`);
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document
              .activeElement.textContent,
        ),
      ).toBe('Skip to content');
      const unlabelled = await page
        .locator('input:not([type="hidden"]), select, textarea')
        .evaluateAll(
          (fields) =>
            fields.filter((field) => (field as unknown as { labels: { length: number } }).labels.length === 0)
              .length,
        );
      expect(unlabelled).toBe(0);
      await page.locator('#reason-release').focus();
      await page.keyboard.type('checked: no email in the outbox');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/confirm$/);
      const release = page.getByRole('button', { name: 'Release the call' });
      await release.focus();
      // Not released: the "Back" link, reached with Tab from the button, leaves it as it was.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/record\?/);
      expect((await opened.store.get({ tenant: 'tenant-a', key: keys.email as string }))?.state).toBe(
        'indeterminate',
      );
    });

    it('renders a tool name and an error message carrying <script> and quotes as text', async () => {
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(`${mounted.origin}${BASE}/?tool=${encodeURIComponent(HOSTILE_TOOL)}`);
      expect(await page.locator('tbody a').first().textContent()).toBe(HOSTILE_TOOL);
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.hostile as string)}`);
      expect(await page.locator('h1 .text').textContent()).toBe(HOSTILE_TOOL);
      expect(await page.locator('pre').first().textContent()).toBe(HOSTILE_ERROR);
      expect(await page.locator('main script, main img, main b').count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
      expect(dialogs).toEqual([]);
      // Scripts do run in this browser: what kept the markup above inert was the escaping.
      const probe = await alice.newPage();
      await probe.setContent(
        '<p id="p">before</p><script>document.getElementById("p").textContent = "after"</script>',
      );
      expect(await probe.locator('#p').textContent()).toBe('after');
      await probe.close();
    });

    it("refuses a cross-site form post (no token), and an operator of tenant A never reads or settles tenant B's record", async () => {
      // Alice, signed in, visits the attacker's page and clicks its button.
      const evil = await alice.newPage();
      await evil.goto(`${attackerOrigin}/?key=${keys.email}`);
      const [answer] = await Promise.all([
        evil.waitForResponse(`${mounted.origin}${BASE}/resolve`),
        evil.click('#go'),
      ]);
      expect(answer.status()).toBe(403);
      expect(await evil.locator('main').textContent()).toContain('Refused');
      await evil.close();
      expect((await opened.store.get({ tenant: 'tenant-a', key: keys.email as string }))?.state).toBe(
        'indeterminate',
      );

      // Alice guesses tenant B's key in the URL.
      const guessed = await page.goto(
        `${mounted.origin}${recordPath(BASE, 'tenant-b', keys.otherTenant as string)}`,
      );
      expect(guessed?.status()).toBe(403);
      expect(await page.locator('main').textContent()).not.toContain('tenant B timed out');
      const listed = await page.goto(`${mounted.origin}${BASE}/?tenant=tenant-b`);
      expect(listed?.status()).toBe(403);
      // And posts her own valid form with tenant B's key swapped in.
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.email as string)}`);
      await page
        .locator('form[action$="/confirm"]')
        .last()
        .evaluate((form, key) => {
          (form.querySelector('input[name="tenant"]') as unknown as { value: string }).value = 'tenant-b';
          (form.querySelector('input[name="key"]') as unknown as { value: string }).value = key;
        }, keys.otherTenant as string);
      await page.locator('#reason-release').fill('not mine');
      const [swapped] = await Promise.all([
        page.waitForResponse(`${mounted.origin}${BASE}/confirm`),
        page.getByRole('button', { name: 'Review: it did not happen' }).click(),
      ]);
      expect(swapped.status()).toBe(403);
      expect((await opened.store.get({ tenant: 'tenant-b', key: keys.otherTenant as string }))?.state).toBe(
        'indeterminate',
      );
    });
  },
);
