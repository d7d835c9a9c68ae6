// An AI SDK agent that calls the tools of a guarded MCP server. Runs offline: the MCP server and
// client are the real @modelcontextprotocol/sdk ones (connected in memory here; stdio or
// Streamable HTTP work the same), the model is a scripted mock.
//
// The host loses the step after the refund went through (the model API fails) and retries the
// run in a new process: a new MCP connection, a client guard with an empty store. The client
// forwards a key derived from the guard's idempotency key in _meta (one per callTool), the server
// dedupes by it: paid once.
//
//   npx tsx --conditions=@toolfence/source examples/mcp-agent.ts
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, mcpToolPolicies, toolfenceCapabilityOf } from '@toolfence/mcp';
import { fenceTools, indeterminateErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

// --- the MCP server, as a team already has it -----------------------------------------------

const payments: string[] = [];

function paymentsServer(): McpServer {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  server.registerTool(
    'refund_order',
    {
      description: 'Refund an order',
      inputSchema: { orderId: z.string(), amountCents: z.number().int() },
      outputSchema: { refundId: z.string() },
      annotations: { destructiveHint: true }, // not read-only, not idempotent: EFFECTFUL
    },
    async ({ orderId, amountCents }) => {
      payments.push(`${orderId}:${amountCents}`);
      const refundId = `re_${payments.length}`;
      return {
        content: [{ type: 'text', text: `Refunded (${refundId}).` }],
        structuredContent: { refundId },
      };
    },
  );
  return server;
}

// --- toolfence on the server: one line, a store every server process shares ------------------

const serverGuard = new Guard({ store: new MemoryStore(), tenant: 'acme' }); // RedisStore in production

// --- the host: an AI SDK agent whose tools come from the MCP server ---------------------------

/** AI SDK tools from the tools an MCP client lists (what @ai-sdk/mcp does for AI SDK 7). */
function aiSdkTools(client: Client, listed: Awaited<ReturnType<Client['listTools']>>): ToolSet {
  const tools: ToolSet = {};
  for (const listedTool of listed.tools) {
    tools[listedTool.name] = tool({
      description: listedTool.description,
      inputSchema: jsonSchema(listedTool.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input: unknown, { abortSignal }) =>
        client.callTool({ name: listedTool.name, arguments: input as Record<string, unknown> }, undefined, {
          signal: abortSignal,
        }),
    });
  }
  return tools;
}

function scriptedModel(failAfterTool: boolean) {
  let calls = 0;
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      calls += 1;
      if (calls === 1) {
        return {
          content: [
            {
              type: 'tool-call' as const,
              toolCallId: 'call-1',
              toolName: 'refund_order',
              input: JSON.stringify({ orderId: 'A-100', amountCents: 3000 }),
            },
          ],
          finishReason: { unified: 'tool-calls' as const, raw: undefined },
          usage,
          warnings: [],
        };
      }
      if (failAfterTool) throw new Error('model API: 503 Service Unavailable');
      return {
        content: [{ type: 'text' as const, text: 'Refunded 30.00 on A-100.' }],
        finishReason: { unified: 'stop' as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

async function hostProcess(failAfterTool: boolean) {
  const server = fenceMcpServer(paymentsServer(), { guard: serverGuard }); // a server replica
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = fenceMcpClient(new Client({ name: 'support-agent', version: '1.0.0' }));
  await client.connect(clientTransport);
  console.log(`  server advertises: ${JSON.stringify(toolfenceCapabilityOf(client))}`);
  const listed = await client.listTools();
  try {
    const result = await generateText({
      model: scriptedModel(failAfterTool),
      tools: fenceTools(aiSdkTools(client, listed), {
        guard: new Guard({ store: new MemoryStore() }), // a new process: an empty client store
        policies: mcpToolPolicies(listed, { trustAnnotations: true }), // our own server
        runId: 'ticket-4711',
      }),
      prompt: 'Refund order A-100, 30.00.',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    const stopped = indeterminateErrorOf(result);
    if (stopped !== undefined) console.log(`  stopped: ${stopped.message}`);
    return result.text;
  } finally {
    await client.close();
  }
}

console.log('host, first attempt:');
try {
  await hostProcess(true);
} catch (error) {
  console.log(`  the run failed after the refund: ${(error as Error).message}`);
}
console.log('host, retried in a new process:');
console.log(`  model says: ${await hostProcess(false)}`);
console.log(`payments made: ${payments.length} (${payments.join(', ')})`);
if (payments.length !== 1) process.exit(1);
