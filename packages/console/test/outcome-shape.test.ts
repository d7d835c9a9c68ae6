// Beside "Outcome (JSON)", the record page shows what the tool's outcomes look like: the top-level
// keys and types of its newest completed call in the same tenant (never a value), preferring one
// the tool returned over one an operator stated; a tool without a completed call says so. In real
// Chromium, on a MemoryStore (the page reads only `list` and `get`).
import { createConsoleHandler } from '@toolfence/console';
import { Guard } from '@toolfence/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeByHeader, DESCRIBED_REFUND, recordPath, stopCall } from '../../../test/support/console.js';
import { launchChromium } from './chromium.js';
import { type Mounted, mountExpress } from './mounts.js';
import { type OpenedStore, openStore } from './stores.js';

const BASE = '/admin/toolfence';
let browser: Browser;
let opened: OpenedStore;
let mounted: Mounted;
let page: Page;
const keys: Record<string, string> = {};

beforeAll(async () => {
  browser = await launchChromium();
  opened = await openStore('memory');
  const guard = new Guard({ store: opened.store, tenant: 'tenant-a' });
  // The tool completed a refund itself: its outcome is the example.
  await guard.run(
    { tool: 'refund', runId: 'run-1', arguments: { order: 'A-1', amount: 10 }, policy: DESCRIBED_REFUND },
    async () => ({ refundId: 're_SECRET_VALUE', amount: 10, status: 'succeeded', lines: [1, 2], meta: null }),
  );
  // In another tenant, another shape: never shown for tenant-a.
  await new Guard({ store: opened.store, tenant: 'tenant-b' }).run(
    { tool: 'refund', runId: 'run-b', arguments: { order: 'B-1', amount: 1 }, policy: DESCRIBED_REFUND },
    async () => ({ otherTenantKey: 'x' }),
  );
  opened.clock?.advance(60_000);
  keys.refund = await stopCall(
    guard,
    { tool: 'refund', tenant: 'tenant-a', runId: 'run-2', arguments: { order: 'A-2', amount: 20 } },
    'gateway timeout',
    DESCRIBED_REFUND,
  );
  keys.email = await stopCall(
    guard,
    { tool: 'send_email', tenant: 'tenant-a', runId: 'run-3', arguments: { to: 'c@example.com' } },
    'SMTP closed',
  );
  // A tool whose only completed call an operator resolved: that outcome is the example, said so.
  const resolvedBefore = await stopCall(
    guard,
    { tool: 'book', tenant: 'tenant-a', runId: 'run-4', arguments: { room: 1 } },
    'timeout',
  );
  await guard.resolve(resolvedBefore, { outcome: { bookingId: 'b-1', nights: 2 } }, { by: 'ana' });
  keys.book = await stopCall(
    guard,
    { tool: 'book', tenant: 'tenant-a', runId: 'run-5', arguments: { room: 2 } },
    'timeout',
  );
  const handler = createConsoleHandler({ guard, basePath: BASE, authorize: authorizeByHeader });
  mounted = await mountExpress(handler, BASE);
  const context = await browser.newContext({ extraHTTPHeaders: { 'x-test-operator': 'alice' } });
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await mounted?.close();
  await opened?.close();
});

describe('the outcome field shows the shape of the tool’s outcomes', () => {
  it('keys and types of the newest completed call of the tool in the tenant, no value', async () => {
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.refund as string)}`);
    const field = page.getByLabel('Outcome (JSON)');
    const described = (await field.getAttribute('aria-describedby'))?.split(' ') ?? [];
    expect(described).toContain('outcome-shape');
    const hint = page.locator('#outcome-shape');
    const text = (await hint.textContent()) ?? '';
    expect(text).toContain(
      'Outcomes of refund look like { refundId: string, amount: number, status: string, lines: array, meta: null }',
    );
    expect(text).toContain('returned by its newest completed call in this tenant');
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).not.toContain('re_SECRET_VALUE');
    expect(text).not.toContain('succeeded');
    expect(body).not.toContain('otherTenantKey');
    // Beside the field: right after the textarea.
    expect(await page.locator('textarea#outcome + #outcome-shape').count()).toBe(1);
  }, 60_000);

  it('an outcome an operator stated is the example when the tool completed none, and says so', async () => {
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.book as string)}`);
    const text = (await page.locator('#outcome-shape').textContent()) ?? '';
    expect(text).toContain('Outcomes of book look like { bookingId: string, nights: number }');
    expect(text).toContain('stated by an operator for its newest completed call');
    expect(text).not.toContain('b-1');
  }, 60_000);

  it('a tool without a completed call in the tenant says so', async () => {
    await page.goto(`${mounted.origin}${recordPath(BASE, 'tenant-a', keys.email as string)}`);
    expect(await page.locator('#outcome-shape').textContent()).toContain(
      'No completed call of send_email in this tenant to show the shape of its outcome',
    );
  }, 60_000);
});
