// "Ask the provider" in a real browser (Debian's Chromium via playwright-core), the console mounted
// in a real Express app on a MemoryStore and given the application's policies: asking shows the
// probe's verdict and writes nothing to the record; "Settle by this answer" settles it through
// guard.reconcile (by: 'reconcile'), only for the holder shown and only when the provider gives
// the same answer again; a cross-site post is refused; the probe's words are shown as text; a
// tool without a probe has no button and a line saying why.
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
  type ReconcileInput,
  type ReconcileVerdict,
} from '@toolfence/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeByHeader, close, recordPath, stopCall } from '../../../test/support/console.js';
import { launchChromium } from './chromium.js';
import { type Mounted, mountExpress } from './mounts.js';
import { type OpenedStore, openStore } from './stores.js';

const BASE = '/admin/console';
const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/console');
const HOSTILE_DETAIL = `found "><script>window.pwned=1</script><img src=x onerror="window.pwned=2">`;

/** A fake payment provider that dedupes by idempotency key: what the probe asks. */
const provider = new Map<string, { chargeId: string }>();
/** What the probe says about a key it does not find (flipped by a test), and its detail. */
const probeSays: { missing: 'not_happened' | 'unknown'; detail?: string } = { missing: 'not_happened' };
const probed: ReconcileInput[] = [];

const CHARGE: IdempotencyPolicy = {
  kind: Idempotency.EFFECTFUL,
  reconcile: {
    attempts: 1,
    probe: async (input): Promise<ReconcileVerdict> => {
      probed.push(input);
      const found = provider.get(input.idempotencyKey);
      if (found !== undefined) {
        return { happened: true, outcome: found, detail: probeSays.detail ?? `found ${found.chargeId}` };
      }
      return probeSays.missing === 'unknown'
        ? { unknown: true, detail: 'the search index lags' }
        : { happened: false, detail: 'no charge for this key' };
    },
  },
};

function charge(runId: string, order: string) {
  return { tool: 'charge', tenant: 'tenant-a', runId, arguments: { order } };
}

describe('"Ask the provider" in the console, in Chromium', () => {
  let browser: Browser;
  let opened: OpenedStore;
  let guard: Guard;
  let mounted: Mounted;
  let alice: BrowserContext;
  let page: Page;
  let attacker: Server;
  let attackerOrigin: string;
  const events: GuardEvent[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    opened = await openStore('memory');
    // The stopped calls run without the probe (an operator's question, not the guard's own).
    guard = new Guard({ store: opened.store, tenant: 'tenant-a', onEvent: (event) => events.push(event) });
    const handler = createConsoleHandler({
      guard,
      basePath: BASE,
      authorize: authorizeByHeader,
      policies: { charge: CHARGE, send_email: { kind: Idempotency.EFFECTFUL } },
    });
    mounted = await mountExpress(handler, BASE);
    attacker = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://attacker.invalid');
      const field = (name: string) => url.searchParams.get(name) ?? '';
      response.setHeader('Content-Type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>win a prize</title>
<form method="post" action="${mounted.origin}${BASE}/reconcile">
<input type="hidden" name="tenant" value="tenant-a">
<input type="hidden" name="key" value="${field('key')}">
<input type="hidden" name="version" value="${field('version')}">
<input type="hidden" name="fence" value="${field('fence')}">
<input type="hidden" name="owner" value="${field('owner')}">
<input type="hidden" name="step" value="settle">
<input type="hidden" name="verdict" value="not_happened">
<button id="go">Claim your prize</button></form>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.2', resolve));
    const address = attacker.address();
    attackerOrigin = `http://127.0.0.2:${typeof address === 'object' && address !== null ? address.port : 0}`;
    alice = await browser.newContext({
      extraHTTPHeaders: { 'x-test-operator': 'alice' },
      viewport: { width: 1280, height: 860 },
    });
    page = await alice.newPage();
  });

  afterAll(async () => {
    await alice?.close();
    if (attacker !== undefined) await close(attacker);
    await mounted?.close();
    await opened?.close();
    await browser?.close();
  });

  const get = (key: string) => opened.store.get({ tenant: 'tenant-a', key });

  it('ask shows the verdict and writes nothing; "Settle by this answer" completes it by reconcile', async () => {
    const key = await stopCall(guard, charge('run-1', 'A-1'), 'the provider timed out');
    provider.set(key, { chargeId: 'ch_A1' });
    const before = await get(key);
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', key)}`);
    expect(await page.locator('#no-probe').count()).toBe(0);
    const [asked] = await Promise.all([
      page.waitForResponse(`${mounted.origin}${BASE}/reconcile`),
      page.getByRole('button', { name: 'Ask the provider' }).click(),
    ]);
    expect(asked.status()).toBe(200);
    const answer = await page.locator('#probe-answer').textContent();
    expect(answer).toContain('Verdict: happened');
    expect(answer).toContain('Nothing was written.');
    expect(await page.locator('#probe-detail').textContent()).toBe('found ch_A1');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'reconcile.png'), fullPage: true });
    // The operator's question carries no arguments (records keep none): the probe finds it by key.
    expect(probed.at(-1)).toMatchObject({ idempotencyKey: key, arguments: undefined, tool: 'charge' });
    expect(await get(key)).toEqual(before);
    expect(await guard.resolutions(key)).toEqual([]);

    await page.getByRole('button', { name: 'Settle by this answer' }).click();
    await page.waitForURL(/done=reconciled/);
    expect(await page.locator('#reconciled').textContent()).toContain("Settled by the provider's answer");
    expect(await get(key)).toMatchObject({ state: 'completed', resolution: { by: 'reconcile' } });
    const history = await guard.resolutions(key);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ by: 'reconcile', action: 'completed' });
    expect(history[0]?.reason).toContain('found ch_A1');
    // The next replay of the run gets the provider's outcome instead of charging again.
    let body = 0;
    const replay = await guard.run(
      { ...charge('run-1', 'A-1'), callId: 'call_run-1', policy: CHARGE },
      async () => {
        body += 1;
        return { chargeId: 'ch_second' };
      },
    );
    expect(replay).toEqual({ chargeId: 'ch_A1' });
    expect(body).toBe(0);
    expect(events.some((event) => event.type === 'tool.reconciled' && event.key === key)).toBe(true);
  });

  it('not_happened releases it, so the replay runs the tool once', async () => {
    const key = await stopCall(guard, charge('run-2', 'A-2'), 'connection reset');
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', key)}`);
    await page.getByRole('button', { name: 'Ask the provider' }).click();
    await page.waitForSelector('#probe-answer');
    expect(await page.locator('#probe-answer').textContent()).toContain('Verdict: not_happened');
    expect((await get(key))?.state).toBe('indeterminate');
    await page.getByRole('button', { name: 'Settle by this answer' }).click();
    await page.waitForURL(/done=reconciled/);
    expect(await get(key)).toBeNull();
    expect(await guard.resolutions(key)).toEqual([
      expect.objectContaining({ by: 'reconcile', action: 'released' }),
    ]);
    let body = 0;
    await guard.run({ ...charge('run-2', 'A-2'), callId: 'call_run-2', policy: CHARGE }, async () => {
      body += 1;
      return { chargeId: 'ch_A2' };
    });
    expect(body).toBe(1);
  });

  it('an unknown verdict offers no settlement; an answer that changed settles nothing (409)', async () => {
    const key = await stopCall(guard, charge('run-3', 'A-3'), 'the provider timed out');
    probeSays.missing = 'unknown';
    try {
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', key)}`);
      await page.getByRole('button', { name: 'Ask the provider' }).click();
      await page.waitForSelector('#probe-answer');
      expect(await page.locator('#probe-answer').textContent()).toContain('Verdict: unknown');
      expect(await page.locator('#settle-by-answer').count()).toBe(0);
      // The provider now finds the charge; then, between the answer and the click, it answers
      // unknown, and then not_happened: neither settles by the answer the operator saw.
      provider.set(key, { chargeId: 'ch_A3' });
      await page.getByRole('button', { name: 'Ask again' }).click();
      await page.waitForSelector('#settle-by-answer');
      provider.delete(key);
      const settle = async () => {
        const [settled] = await Promise.all([
          page.waitForResponse(`${mounted.origin}${BASE}/reconcile`),
          page.getByRole('button', { name: 'Settle by this answer' }).click(),
        ]);
        return settled.status();
      };
      expect(await settle()).toBe(409);
      expect(await page.locator('#problem-settle').textContent()).toBe(
        'The provider answered unknown this time: nothing was settled.',
      );
      provider.set(key, { chargeId: 'ch_A3' });
      await page.getByRole('button', { name: 'Ask again' }).click();
      await page.waitForSelector('#settle-by-answer');
      provider.delete(key);
      probeSays.missing = 'not_happened';
      expect(await settle()).toBe(409);
      expect(await page.locator('#problem-settle').textContent()).toContain(
        'The provider answered not_happened this time, not happened as shown: nothing was settled.',
      );
      expect((await get(key))?.state).toBe('indeterminate');
      expect(await guard.resolutions(key)).toEqual([]);
    } finally {
      probeSays.missing = 'not_happened';
    }
  });

  it('a record that changed under the page (settled, claimed again) is refused plainly: 409, nothing settled', async () => {
    const key = await stopCall(guard, charge('run-4', 'A-4'), 'the provider timed out');
    provider.set(key, { chargeId: 'ch_A4' });
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', key)}`);
    await page.getByRole('button', { name: 'Ask the provider' }).click();
    await page.waitForSelector('#settle-by-answer');
    // Another operator released it and the run called again: a new life of the key, stopped again.
    await guard.resolve(key, { released: true }, { by: 'bob@example.com', reason: 'checked by hand' });
    await stopCall(guard, charge('run-4', 'A-4'), 'timed out again');
    const now = await get(key);
    const [settled] = await Promise.all([
      page.waitForResponse(`${mounted.origin}${BASE}/reconcile`),
      page.getByRole('button', { name: 'Settle by this answer' }).click(),
    ]);
    expect(settled.status()).toBe(409);
    expect(await page.locator('main').textContent()).toContain('The record changed since you opened it');
    expect(await get(key)).toEqual(now);
    expect((await guard.resolutions(key)).map((entry) => entry.by)).toEqual(['bob@example.com']);
  });

  it('refuses a cross-site settlement before asking the provider', async () => {
    const key = await stopCall(guard, charge('run-5', 'A-5'), 'the provider timed out');
    const record = await get(key);
    const asks = probed.length;
    const evil = await alice.newPage();
    const query = new URLSearchParams({
      key,
      version: 'whatever-the-page-showed',
      fence: String(record?.fence),
      owner: record?.owner ?? '',
    });
    await evil.goto(`${attackerOrigin}/?${query}`);
    const [answer] = await Promise.all([
      evil.waitForResponse(`${mounted.origin}${BASE}/reconcile`),
      evil.click('#go'),
    ]);
    expect(answer.status()).toBe(403);
    expect(await evil.locator('body').textContent()).toContain('Refused');
    await evil.close();
    expect(probed.length).toBe(asks);
    expect(await get(key)).toEqual(record);
  });

  it('shows a hostile probe detail as text; a tool without a probe has no button and says why', async () => {
    const key = await stopCall(guard, charge('run-6', 'A-6'), 'the provider timed out');
    provider.set(key, { chargeId: 'ch_A6' });
    probeSays.detail = HOSTILE_DETAIL;
    try {
      await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', key)}`);
      await page.getByRole('button', { name: 'Ask the provider' }).click();
      await page.waitForSelector('#probe-detail');
      expect(await page.locator('#probe-detail').textContent()).toBe(HOSTILE_DETAIL);
      expect(await page.locator('main script, main img').count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    } finally {
      delete probeSays.detail;
    }
    const email = await stopCall(
      guard,
      { tool: 'send_email', tenant: 'tenant-a', runId: 'run-7', arguments: { to: 'c@example.com' } },
      'SMTP closed',
    );
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', email)}`);
    expect(await page.locator('#no-probe').textContent()).toContain(
      'the console was given no reconcile probe',
    );
    expect(await page.locator('form[action$="/reconcile"]').count()).toBe(0);
    // The by-hand actions stay.
    expect(await page.getByRole('button', { name: 'Review: it did not happen' }).count()).toBe(1);
  });
});
