// The demo's MCP row: the refund tool lives on an MCP server (a real McpServer of
// @modelcontextprotocol/sdk, connected to a real Client in memory), and the AI SDK agent calls it
// through tools made from the client's tool list. Guarding it is `fenceMcpServer(server, { guard })`
// on the server, `fenceMcpClient(client)` and `fenceTools` on the host, which sends a key derived
// from the guard's (one per callTool) in `_meta` so the server dedupes by it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, mcpToolPolicies } from '@toolfence/mcp';
import { fenceTools, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from 'ai';
import { z } from 'zod';
import { scriptedAiModel } from './ai-sdk-agent.js';
import type { Script } from './policies.js';
import type { Provider } from './provider.js';

/** The payments MCP server: refund_payment, annotated as what it is (not read-only, not idempotent). */
function paymentsServer(provider: Provider): McpServer {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  server.registerTool(
    'refund_payment',
    {
      description: 'Refund (part of) an order.',
      inputSchema: { orderId: z.string(), amountCents: z.number().int() },
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    async ({ orderId, amountCents }) => {
      const refund = await provider.refund(orderId, amountCents);
      return { content: [{ type: 'text', text: JSON.stringify(refund) }], structuredContent: refund };
    },
  );
  return server;
}

/** AI SDK tools from the tools an MCP client lists. */
function toolsOf(client: Client, listed: Awaited<ReturnType<Client['listTools']>>): ToolSet {
  const tools: ToolSet = {};
  for (const listedTool of listed.tools) {
    tools[listedTool.name] = tool({
      description: listedTool.description,
      inputSchema: jsonSchema(listedTool.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input: unknown) =>
        client.callTool({ name: listedTool.name, arguments: input as Record<string, unknown> }),
    });
  }
  return tools;
}

/**
 * One host process running the AI SDK agent against a new replica of the MCP server.
 * `serverGuard` given: the server replica is fenced with it, and the host guards its tools with
 * a guard of its own on an empty store (a new process remembers nothing). `failAfterTools`: the
 * model API fails on the call after the tool step, so the run rejects after the refund landed.
 */
export async function runMcpHost(
  provider: Provider,
  script: Script,
  runId: string,
  serverGuard: Guard | undefined,
  failAfterTools: boolean,
) {
  const server = paymentsServer(provider);
  if (serverGuard !== undefined) fenceMcpServer(server, { guard: serverGuard });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'demo-host', version: '1.0.0' });
  await client.connect(clientTransport);
  if (serverGuard !== undefined) fenceMcpClient(client);
  try {
    const listed = await client.listTools();
    const tools = toolsOf(client, listed);
    const model = scriptedAiModel(script);
    const generate = model.doGenerate.bind(model);
    let calls = 0;
    model.doGenerate = async (options) => {
      if (++calls === 2 && failAfterTools) throw new Error('model API: 503 Service Unavailable');
      return generate(options);
    };
    return await generateText({
      model,
      tools:
        serverGuard === undefined
          ? tools
          : fenceTools(tools, {
              guard: new Guard({ store: new MemoryStore() }),
              policies: mcpToolPolicies(listed, { trustAnnotations: true }), // the demo's own server
              runId,
            }),
      prompt: 'Order A-100 arrived damaged. Refund the customer.',
      stopWhen: serverGuard === undefined ? stepCountIs(6) : [stepCountIs(6), stopOnIndeterminate()],
    });
  } finally {
    await client.close();
  }
}
