// Our own scenarios beside the official conformance suite (run.sh), for what it does not look at:
// a replayed call with notifications, sampling and elicitation; a waiting duplicate with
// progress; -32042 under every kind of policy. The same server as the suite's run
// (everything-server.ts), in its own process over Streamable HTTP with sessions, in each mode;
// plain is the reference. The SDK's real Client.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type McpError,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { isReplayed } from '@toolfence/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = join(here, '..', '..');

async function startServer(mode: string): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@toolfence/source', '--import', 'tsx', join(here, 'everything-server.ts'), mode],
    { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const url = await new Promise<URL>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const found = /listening (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(output);
      if (found?.[1] !== undefined) resolve(new URL(found[1]));
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`${mode} server exited (${code}): ${output}`)));
  });
  return { child, url };
}

/** A user's client: answers elicitation with `name` and sampling with `reply`; counts what it heard. */
async function userClient(url: URL, name: string, reply: string) {
  const client = new Client(
    { name: `user-${name}`, version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const heard = { logs: 0, elicitations: 0, samplings: 0 };
  client.setRequestHandler(ElicitRequestSchema, async () => {
    heard.elicitations += 1;
    return { action: 'accept', content: { response: name } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    heard.samplings += 1;
    return { role: 'assistant', model: 'scripted', content: { type: 'text', text: reply } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
    heard.logs += 1;
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  return { client, heard };
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text;

const MODES = ['plain', 'realistic', 'effectful', 'annotations'] as const;

for (const mode of MODES) {
  const fenced = mode !== 'plain';

  // The modes run side by side (each its own server process; keys differ per mode).
  describe.concurrent(`beside the conformance suite, ${mode}${fenced ? ' (fenced)' : ' (the reference)'}`, () => {
    let server: { child: ChildProcess; url: URL };
    const clients: Client[] = [];
    beforeAll(async () => {
      server = await startServer(mode);
    });
    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => undefined);
      server?.child.kill();
    });
    const user = async (name: string, reply: string) => {
      const made = await userClient(server.url, name, reply);
      clients.push(made.client);
      return made;
    };

    it('a repeat in another session: fenced, nothing runs (no log, sampling or elicitation) and it is marked', async () => {
      const ada = await user('Ada', 'blue');
      const bob = await user('Bob', 'green');
      const calls = [
        { name: 'test_tool_with_logging', arguments: {}, _meta: { idempotencyKey: `log-${mode}` } },
        {
          name: 'test_sampling',
          arguments: { prompt: 'colour?' },
          _meta: { idempotencyKey: `sample-${mode}` },
        },
        {
          name: 'test_elicitation',
          arguments: { message: 'name?' },
          _meta: { idempotencyKey: `elicit-${mode}` },
        },
      ];
      const first = [];
      for (const call of calls) first.push(await ada.client.callTool(call));
      expect(first.map(textOf)).toEqual([
        'Tool with logging executed successfully',
        'LLM response: blue',
        'User response: action=accept, content={"response":"Ada"}',
      ]);
      expect(ada.heard).toEqual({ logs: 3, elicitations: 1, samplings: 1 });
      expect(first.map((result) => isReplayed(result))).toEqual([false, false, false]);

      const again = [];
      for (const call of calls) again.push(await bob.client.callTool(call));
      if (fenced) {
        // The first user's answers, recorded; Bob is asked nothing and hears nothing.
        expect(again.map(textOf)).toEqual(first.map(textOf));
        expect(again.map((result) => isReplayed(result))).toEqual([true, true, true]);
        expect(bob.heard).toEqual({ logs: 0, elicitations: 0, samplings: 0 });
      } else {
        expect(again.map(textOf)).toEqual([
          'Tool with logging executed successfully',
          'LLM response: green',
          'User response: action=accept, content={"response":"Bob"}',
        ]);
        expect(bob.heard).toEqual({ logs: 3, elicitations: 1, samplings: 1 });
      }
    });

    it('a duplicate sent while the first runs: fenced, it hears keep-alive progress and gets the first result', async () => {
      const ada = await user('Ada', '-');
      const bob = await user('Bob', '-');
      const call = {
        name: 'test_slow_progress',
        arguments: { ms: 3_000 },
        _meta: { idempotencyKey: `slow-${mode}` },
      };
      // A client timeout of 2.5 s, reset by progress (a keep-alive comes every 1 s): the tool runs 3 s.
      const options = { timeout: 2_500, resetTimeoutOnProgress: true };
      const progress: [number, number] = [0, 0];
      const first = ada.client.callTool(call, undefined, { ...options, onprogress: () => progress[0]++ });
      // Bob calls once Ada's call runs (its first progress arrived), never before it.
      await until(() => progress[0] > 0);
      const second = bob.client
        .callTool(call, undefined, { ...options, onprogress: () => progress[1]++ })
        .catch((error: McpError) => error);
      const [a, b] = await Promise.all([first, second]);
      expect(textOf(a)).toMatch(/^done \(run \d+\)$/);
      expect(progress[0]).toBe(12);
      if (fenced) {
        expect(b).not.toBeInstanceOf(Error);
        expect(textOf(b)).toBe(textOf(a));
        expect(isReplayed(b)).toBe(true);
        expect(progress[1]).toBeGreaterThanOrEqual(1);
      } else {
        expect(textOf(b)).not.toBe(textOf(a));
        expect(progress[1]).toBe(12);
      }
    });

    for (const kind of ['read_only', 'idempotent', 'effectful'] as const) {
      it(`-32042 from a tool (${kind} where the mode says so): the client gets the URL; after it opened it the call runs`, async () => {
        const { client } = await user('Ada', '-');
        const call = {
          name: `test_url_elicitation_${kind}`,
          arguments: { account: 'DE02-1203' },
          _meta: { idempotencyKey: `url-${kind}-${mode}` },
        };
        const refused = await client.callTool(call).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
        const [elicitation] = (refused as UrlElicitationRequiredError).elicitations;
        expect(elicitation?.mode).toBe('url');
        const url = (elicitation as { url: string }).url;
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorise\?id=/);
        // Asked again before authorising: the same -32042 (nothing was recorded).
        expect(await client.callTool(call).catch((error: unknown) => error)).toBeInstanceOf(
          UrlElicitationRequiredError,
        );
        expect(await (await fetch(url)).text()).toBe('authorised');
        const linked = await client.callTool(call);
        expect(textOf(linked)).toBe('linked DE02-1203 (#1)');
        const again = await client.callTool(call);
        // Guarded tools replay; a READ_ONLY one (and every tool of the plain server) runs again.
        const guarded = fenced && !(mode !== 'effectful' && kind === 'read_only');
        expect(textOf(again)).toBe(guarded ? 'linked DE02-1203 (#1)' : 'linked DE02-1203 (#2)');
        expect(isReplayed(again)).toBe(guarded);
      });
    }
  });
}
