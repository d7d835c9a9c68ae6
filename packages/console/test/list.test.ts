// The list page over HTTP: state tabs, the tenant, tool and age filters, and paging with the
// store's cursor (MemoryStore on a clock the test moves).
import { createServer } from 'node:http';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, MemoryStore } from '@toolfence/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  close,
  formFields,
  listen,
  stopCall,
} from '../../../test/support/console.js';

const BASE = '/ops';
let nowMs = Date.UTC(2026, 11, 1, 8, 0, 0);
const store = new MemoryStore({ clock: { now: () => nowMs } });
const guard = new Guard({ store, tenant: 'tenant-a' });
const handler = createConsoleHandler({
  store,
  guard,
  authorize: authorizeByHeader,
  basePath: BASE,
  pageSize: 2,
});
const server = createServer((request, response) => void handler(request, response));
let origin: string;

/** The run ids of the rows of a list page, in order. */
function runsOf(html: string): string[] {
  return [
    ...html.matchAll(
      /<tr>\s*<td class="text"><a [^>]*>[^<]*<\/a>.*?<\/td>\s*<td class="text nowrap">[^<]*<\/td>\s*<td class="text">([^<]*)/gs,
    ),
  ].map((row) => row[1] as string);
}

function nextLink(html: string): string | undefined {
  const found = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(html)?.[1];
  return found?.replaceAll('&amp;', '&');
}

beforeAll(async () => {
  origin = await listen(server);
  // Five records of tenant-a, ten minutes apart (the oldest two hours old), and one of tenant-b.
  for (const [index, tool] of ['refund', 'email', 'refund', 'refund', 'email'].entries()) {
    await stopCall(
      guard,
      { tool, tenant: 'tenant-a', runId: `run-${index}`, arguments: { n: index } },
      'timed out',
    );
    nowMs += 10 * 60_000;
  }
  await stopCall(guard, { tool: 'refund', tenant: 'tenant-b', runId: 'run-b', arguments: {} }, 'timed out');
  nowMs += 80 * 60_000;
});

afterAll(async () => {
  await close(server);
});

describe('the list', () => {
  it('pages with the store cursor, oldest first or newest first', async () => {
    const alice = new ConsoleClient(origin, 'alice');
    const first = await alice.get(`${BASE}/`);
    expect(runsOf(first.text)).toEqual(['run-0', 'run-1']);
    const second = await alice.get(nextLink(first.text) as string);
    expect(runsOf(second.text)).toEqual(['run-2', 'run-3']);
    expect(second.text).toContain('>First page</a>');
    const third = await alice.get(nextLink(second.text) as string);
    expect(runsOf(third.text)).toEqual(['run-4']);
    expect(nextLink(third.text)).toBeUndefined();
    expect(runsOf((await alice.get(`${BASE}/?order=newest`)).text)).toEqual(['run-4', 'run-3']);
    expect((await alice.get(`${BASE}/?cursor=not-a-cursor`)).status).toBe(400);
  });

  it('filters by tool and by age, and shows only the tenants the operator may see', async () => {
    const alice = new ConsoleClient(origin, 'alice');
    const refunds = await alice.get(`${BASE}/?tool=refund`);
    expect(runsOf(refunds.text)).toEqual(['run-0', 'run-2']);
    expect(runsOf((await alice.get(nextLink(refunds.text) as string)).text)).toEqual(['run-3']);
    // Older than 2 hours: run-0 (130 min) and run-1 (120 min).
    const old = await alice.get(`${BASE}/?age=${2 * 60 * 60_000}`);
    expect(runsOf(old.text)).toEqual(['run-0', 'run-1']);
    expect(nextLink(old.text)).toBeUndefined();
    expect(old.text).toContain('<option value="7200000" selected>older than 2 h</option>');
    const root = new ConsoleClient(origin, 'root');
    expect(runsOf((await root.get(`${BASE}/?tenant=tenant-b`)).text)).toEqual(['run-b']);
    expect(runsOf((await root.get(`${BASE}/?order=newest`)).text)).toEqual(['run-b', 'run-4']);
    expect((await alice.get(`${BASE}/?tenant=tenant-b`)).status).toBe(403);
    expect((await alice.get(`${BASE}/?age=-5`)).status).toBe(400);
  });

  it('lists a holder whose lease ran out under "Lease expired", and offers the actions on it (its holder is gone)', async () => {
    const ref = { tenant: 'tenant-a', key: 'a'.repeat(64) };
    const claim = {
      tool: 'charge',
      fingerprint: 'f'.repeat(64),
      owner: 'worker-1',
      leaseMs: 1000,
      retentionMs: 3_600_000,
    };
    await store.claim(ref, {
      ...claim,
      mode: 'at-most-once',
      maxAttempts: 1,
      checkFingerprint: false,
      runId: 'run-held',
    });
    nowMs += 5000;
    const alice = new ConsoleClient(origin, 'alice');
    expect(runsOf((await alice.get(`${BASE}/?state=lease_expired`)).text)).toEqual(['run-held']);
    const page = await alice.get(`${BASE}/record?tenant=tenant-a&key=${ref.key}`);
    // Issue #27: nothing runs it any more, so an operator may settle it (on the holder shown).
    expect(page.text).toContain('Its holder <span class="mono text">worker-1</span> is gone');
    expect(formFields(page.text, '/confirm')).toMatchObject({ fence: '1', owner: 'worker-1' });
  });

  it('settles an abandoned record too: "it happened" from the Abandoned tab', async () => {
    const ref = { tenant: 'tenant-a', key: 'b'.repeat(64) };
    const claim = { tool: 'sync', fingerprint: 'f'.repeat(64), leaseMs: 1000, retentionMs: 3_600_000 };
    const options = {
      ...claim,
      mode: 'at-least-once',
      maxAttempts: 1,
      checkFingerprint: false,
      runId: 'run-lost',
    } as const;
    await store.claim(ref, { ...options, owner: 'worker-1' });
    nowMs += 5000;
    expect((await store.claim(ref, { ...options, owner: 'worker-2' })).status).toBe('abandoned');
    const alice = new ConsoleClient(origin, 'alice');
    expect(runsOf((await alice.get(`${BASE}/?state=abandoned`)).text)).toEqual(['run-lost']);
    const page = await alice.get(`${BASE}/record?tenant=tenant-a&key=${ref.key}`);
    const fields = formFields(page.text, '/confirm');
    const confirm = await alice.post(`${BASE}/confirm`, {
      ...fields,
      action: 'complete',
      outcome: '"synced"',
      reason: 'synced by hand',
    });
    expect((await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'))).status).toBe(303);
    expect((await store.get(ref))?.state).toBe('completed');
    const history = await store.resolutions?.(ref);
    expect(history?.map((entry) => [entry.action, entry.fromState, entry.by, entry.reason])).toEqual([
      ['completed', 'abandoned', 'alice@example.com', 'synced by hand'],
    ]);
  });

  it('has a tab per state, indeterminate first and chosen by default', async () => {
    const page = await new ConsoleClient(origin, 'root').get(`${BASE}/?state=completed&tenant=tenant-c`);
    const tabs = [
      ...page.text.matchAll(/<li><a href="[^"]*"( aria-current="page")?>([^<]+)<\/a><\/li>/g),
    ].map((tab) => `${tab[2]}${tab[1] === undefined ? '' : ' (current)'}`);
    expect(tabs).toEqual([
      'Indeterminate',
      // Beside the unknown outcomes: the calls that wait for an operator's approval.
      'Pending approvals',
      'Abandoned',
      'Lease expired',
      'In progress',
      'Completed (current)',
    ]);
    expect(page.text).toContain('No completed records.');
    expect((await new ConsoleClient(origin, 'alice').get(`${BASE}/`)).text).toContain(
      '<h1>Indeterminate records</h1>',
    );
  });
});
