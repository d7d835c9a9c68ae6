// Every mount of docs/console.md serves the console: the pages, the stylesheet, and a form post
// that settles a record (so each framework hands the console an unread body).
import { createConsoleHandler } from '@toolfence/console';
import { Guard, MemoryStore } from '@toolfence/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  EFFECTFUL,
  formFields,
  recordPath,
  stopCall,
} from '../../../test/support/console.js';
import { MOUNTS, type Mounted, type MountName } from './mounts.js';

const BASE = '/admin/toolfence';
let mounted: Mounted | undefined;

afterEach(async () => {
  await mounted?.close();
  mounted = undefined;
});

describe.each(Object.keys(MOUNTS) as MountName[])('the console mounted with %s', (name) => {
  it('serves its pages and stylesheet under the base path, and a release posted through it runs the call once', async () => {
    const store = new MemoryStore();
    const guard = new Guard({
      store,
      tenant: 'tenant-a',
      describeError: (error: unknown) => ({ message: (error as Error).message }),
    });
    mounted = await MOUNTS[name](
      createConsoleHandler({ store, guard, authorize: authorizeByHeader, basePath: BASE }),
      BASE,
    );
    const alice = new ConsoleClient(mounted.origin, 'alice');
    const call = { tool: 'refund', tenant: 'tenant-a', runId: `run-${name}`, arguments: { order: 'A-100' } };
    const key = await stopCall(guard, call, 'the provider timed out');

    const list = await alice.get(`${BASE}/`);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-security-policy')).toContain("default-src 'none'");
    const stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(list.text)?.[1] as string;
    const css = await alice.get(stylesheet);
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);

    const page = await alice.get(recordPath(BASE, 'tenant-a', key));
    expect(page.status).toBe(200);
    expect(page.text).toContain('the provider timed out');
    const release = formFields(page.text, '/confirm');
    const confirm = await alice.post(`${BASE}/confirm`, {
      ...release,
      action: 'release',
      reason: 'no refund at the provider',
    });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('runs <span class="text">refund</span> again, once');
    const resolved = await alice.post(`${BASE}/resolve`, formFields(confirm.text, '/resolve'));
    expect(resolved.status).toBe(303);
    expect(resolved.headers.get('location')).toBe(`${recordPath(BASE, 'tenant-a', key)}&done=released`);

    let runs = 0;
    const value = await guard.run({ ...call, callId: 'again', policy: EFFECTFUL }, async () => {
      runs += 1;
      return { refunded: true };
    });
    expect([runs, value]).toEqual([1, { refunded: true }]);
    expect((await alice.get('/')).text).toBe('the app');
  });
});
