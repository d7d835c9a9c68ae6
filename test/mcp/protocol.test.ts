// A fenced McpServer speaks the protocol as the plain one does (issue #36): a JSON-RPC error that
// asks the client to act (-32042) passes through, a waiting duplicate hears progress, a replay is
// marked. The SDK's real Client and McpServer over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type McpError, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Guard, Idempotency, type IdempotencyPolicy, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, isClientActionError, mcpToolPolicies } from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

async function connect(server: McpServer, client = new Client({ name: 'test-client', version: '1.0.0' })) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  return client;
}

const AUTHORISE_URL = 'https://bank.example/authorise?session=s-1';

/**
 * A bank-link tool: until the user has authorised at a URL, it throws the SDK's
 * UrlElicitationRequiredError (nothing done); after that it links the account once per call.
 */
function bankServer(annotations: { idempotentHint?: boolean; readOnlyHint?: boolean } = {}) {
  const server = new McpServer({ name: 'bank', version: '1.0.0' });
  const state = { authorised: false, asked: 0, linked: 0 };
  server.registerTool(
    'link_account',
    { inputSchema: { iban: z.string() }, annotations },
    async ({ iban }) => {
      if (!state.authorised) {
        state.asked += 1;
        throw new UrlElicitationRequiredError([
          {
            mode: 'url',
            elicitationId: 'authorise-1',
            url: AUTHORISE_URL,
            message: 'Authorise toolfence-bank to link your account',
          },
        ]);
      }
      state.linked += 1;
      return { content: [{ type: 'text', text: `linked ${iban} (#${state.linked})` }] };
    },
  );
  return { server, state };
}

const EVERY_STATE = ['in_progress', 'completed', 'indeterminate', 'abandoned', 'lease_expired'] as const;

/** The kinds a tool can be fenced under: by an explicit policy or by its own annotations. */
const kinds: ReadonlyArray<{
  readonly name: string;
  readonly annotations?: { idempotentHint?: boolean; readOnlyHint?: boolean };
  readonly policy?: IdempotencyPolicy;
}> = [
  { name: 'EFFECTFUL by default (no annotations)' },
  { name: 'EFFECTFUL (explicit)', policy: { kind: Idempotency.EFFECTFUL } },
  { name: 'IDEMPOTENT (explicit)', policy: { kind: Idempotency.IDEMPOTENT } },
  { name: 'IDEMPOTENT (idempotentHint)', annotations: { idempotentHint: true } },
  { name: 'READ_ONLY (readOnlyHint)', annotations: { readOnlyHint: true } },
];

const linkCall = {
  name: 'link_account',
  arguments: { iban: 'DE02 1203 0000 0000 2020 51' },
  _meta: { idempotencyKey: 'link-1' },
};

describe('-32042 UrlElicitationRequired passes through and records nothing', () => {
  it('plain server (the reference): the client sees -32042 and its URL', async () => {
    const { server, state } = bankServer();
    const client = await connect(server);
    const error = await client.callTool(linkCall).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect((error as UrlElicitationRequiredError).code).toBe(-32042);
    expect((error as UrlElicitationRequiredError).elicitations[0]?.url).toBe(AUTHORISE_URL);
    expect(state.asked).toBe(1);
  });

  for (const kind of kinds) {
    it(`fenced, ${kind.name}: -32042 with the URL on every try, then the authorised retry runs once`, async () => {
      const { server, state } = bankServer(kind.annotations);
      const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
      fenceMcpServer(server, {
        guard,
        ...(kind.policy === undefined ? {} : { policies: { link_account: kind.policy } }),
      });
      const client = await connect(server);
      for (let attempt = 1; attempt <= 2; attempt++) {
        const error = await client.callTool(linkCall).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(UrlElicitationRequiredError);
        expect((error as McpError).code).toBe(-32042);
        expect((error as UrlElicitationRequiredError).elicitations).toEqual([
          {
            mode: 'url',
            elicitationId: 'authorise-1',
            url: AUTHORISE_URL,
            message: 'Authorise toolfence-bank to link your account',
          },
        ]);
        expect(state.asked).toBe(attempt);
      }
      // Nothing was recorded: no record in any state.
      const page = await guard.list({ states: [...EVERY_STATE] });
      expect(page.records).toEqual([]);

      state.authorised = true; // the user opened the URL
      const linked = await client.callTool(linkCall);
      expect(linked.isError).toBeUndefined();
      expect(linked.content).toEqual([{ type: 'text', text: 'linked DE02 1203 0000 0000 2020 51 (#1)' }]);
      expect(state.linked).toBe(1);
      const again = await client.callTool(linkCall);
      if (kind.annotations?.readOnlyHint === true) {
        // READ_ONLY is not guarded: it runs again, as it did before fencing.
        expect(state.linked).toBe(2);
      } else {
        expect(again.content).toEqual(linked.content);
        expect(state.linked).toBe(1);
      }
    });
  }

  it('a fenced client in a guarded EFFECTFUL call: rejects with -32042 and releases its claim', async () => {
    const { server, state } = bankServer();
    fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }) });
    const client = fenceMcpClient(await connect(server));
    const policies = mcpToolPolicies(await client.listTools(), {
      policies: { link_account: { kind: Idempotency.EFFECTFUL } },
    });
    const clientGuard = new Guard({ store: new MemoryStore(), tenant: 'agent' });
    const args = { iban: 'DE02 1203 0000 0000 2020 51' };
    const step = () =>
      clientGuard.run(
        { tool: 'link_account', arguments: args, runId: 'conversation-1', policy: policies.link_account! },
        () => client.callTool({ name: 'link_account', arguments: args }),
      );
    const error = await step().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect(isClientActionError(error)).toBe(true);
    expect((await clientGuard.list({ states: [...EVERY_STATE] })).records).toEqual([]);
    state.authorised = true;
    const result = await step();
    expect(result.content).toEqual([{ type: 'text', text: 'linked DE02 1203 0000 0000 2020 51 (#1)' }]);
    expect(state.linked).toBe(1);
  });
});
