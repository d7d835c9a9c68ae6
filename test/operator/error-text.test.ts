// Issue 30, item 6: a body's error message is often built from the arguments. By default the
// guard records and emits only the error's type and code: a card number and an e-mail address in
// the message never reach the SQLite file, `toolfence list` / `inspect`, the console or the
// guard's events. With `describeError`, the hook's text is what is recorded.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createConsoleHandler } from '@toolfence/console';
import {
  type ErrorDescriber,
  Guard,
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
} from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, expect, it } from 'vitest';
import { authorizeByHeader, ConsoleClient, close, listen, recordPath } from '../support/console.js';
import { runCli } from '../support/run-cli.js';
import { sqliteDirectory } from '../support/sqlite.js';

const directory = sqliteDirectory('error-text');
afterAll(() => directory.remove());

const CARD = '4111111111111111';
const EMAIL = 'ana@example.com';
const tenant = 'tenant-a';

class ProviderError extends Error {
  override name = 'ProviderError';
  readonly code = 'card_declined';
}

async function scenario(name: string, describeError?: ErrorDescriber) {
  const path = directory.file(`${name}.db`);
  const store = new SQLiteStore({ path });
  await store.ensureSchema();
  const events: GuardEvent[] = [];
  const guard = new Guard({
    store,
    tenant,
    onEvent: (event) => events.push(event),
    ...(describeError === undefined ? {} : { describeError }),
  });
  const fail = () => Promise.reject(new ProviderError(`card ${CARD} declined for ${EMAIL}`));
  const stopped = await guard
    .run(
      {
        tool: 'charge',
        runId: 'run-1',
        arguments: { card: CARD, email: EMAIL },
        policy: { kind: Idempotency.EFFECTFUL },
      },
      fail,
    )
    .then(
      () => expect.unreachable('the charge must stop'),
      (error: unknown) => error as IndeterminateOutcomeError,
    );
  expect(stopped).toBeInstanceOf(IndeterminateOutcomeError);
  // The caller, in its own process, still gets the error whole.
  expect(stopped.message).toContain(CARD);
  await guard
    .run(
      {
        tool: 'lookup',
        runId: 'run-1',
        arguments: { email: EMAIL },
        policy: { kind: Idempotency.IDEMPOTENT, maxAttempts: 1 },
      },
      fail,
    )
    .catch(() => undefined);

  const handler = createConsoleHandler({ store, guard, authorize: authorizeByHeader, basePath: '/console' });
  const server = createServer((request, response) => void handler(request, response));
  const origin = await listen(server);
  const alice = new ConsoleClient(origin, 'alice');
  const consolePages = [
    (await alice.get('/console/')).text,
    (await alice.get(recordPath('/console', tenant, stopped.key))).text,
  ].join('\n');
  await close(server);
  await store.close();

  const storeArgs = ['--store', `sqlite:${path}`, '--tenant', tenant];
  const cli = [
    await runCli([...storeArgs, 'list']),
    await runCli([...storeArgs, 'list', '--json']),
    await runCli([...storeArgs, 'inspect', stopped.key]),
    await runCli([...storeArgs, 'inspect', stopped.key, '--json']),
  ];
  for (const run of cli) expect(run.code, run.stderr).toBe(0);
  const files = readdirSync(directory.path)
    .filter((file) => file.startsWith(`${name}.db`))
    .map((file) => readFileSync(join(directory.path, file)).toString('latin1'))
    .join('\n');
  return {
    record: cli[3]?.json[0]?.record as { error: { type: string; message: string } },
    texts: {
      file: files,
      cli: cli.map((run) => run.stdout + run.stderr).join('\n'),
      console: consolePages,
      events: JSON.stringify(events),
    },
    events,
  };
}

it('by default the type and code are recorded, never the message (file, CLI, console, events)', async () => {
  const { record, texts, events } = await scenario('default');
  expect(record.error).toEqual({
    type: 'ProviderError',
    message: 'code card_declined; (message not recorded)',
  });
  for (const [where, text] of Object.entries(texts)) {
    expect(text, where).not.toContain(CARD);
    expect(text, where).not.toContain(EMAIL.split('@')[0] + '@');
  }
  expect(texts.cli).toContain('ProviderError: code card_declined; (message not recorded)');
  expect(texts.console).toContain('code card_declined; (message not recorded)');
  const failures = events.filter((event) => event.error !== undefined);
  expect(failures.map((event) => [event.type, event.error])).toEqual([
    ['tool.indeterminate', { type: 'ProviderError', message: 'code card_declined; (message not recorded)' }],
    ['tool.failed', { type: 'ProviderError', message: 'code card_declined; (message not recorded)' }],
  ]);
}, 60_000);

it("with describeError the hook's text is recorded, and nothing else of the message", async () => {
  const redact = (error: unknown) => ({
    message: String((error as Error).message)
      .replace(/\d{12}(\d{4})/g, '****$1')
      .replace(/[^\s@]+@[^\s@]+/g, '<e-mail>'),
  });
  const { record, texts, events } = await scenario('hook', redact);
  expect(record.error).toEqual({ type: 'ProviderError', message: 'card ****1111 declined for <e-mail>' });
  for (const [where, text] of Object.entries(texts)) {
    expect(text, where).not.toContain(CARD);
    expect(text, where).not.toContain(EMAIL);
  }
  expect(texts.file).toContain('card ****1111 declined for <e-mail>');
  expect(texts.cli).toContain('ProviderError: card ****1111 declined for <e-mail>');
  expect(texts.console).toContain('card ****1111 declined for &lt;e-mail&gt;');
  expect(events.filter((event) => event.error !== undefined).map((event) => event.error?.message)).toEqual([
    'card ****1111 declined for <e-mail>',
    'card ****1111 declined for <e-mail>',
  ]);
}, 60_000);

it('a hook that throws or gives no message records the default', async () => {
  const { record } = await scenario('bad-hook', () => {
    throw new Error(`hook saw ${CARD}`);
  });
  expect(record.error).toEqual({
    type: 'ProviderError',
    message: 'code card_declined; (message not recorded)',
  });
});
