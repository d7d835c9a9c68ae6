// AI SDK tools made from the tools an MCP client lists, as @ai-sdk/mcp does for AI SDK 7
// (@ai-sdk/mcp 2.x needs ai 7 and Node 22, so the AI SDK 6 tests build them from the SDK Client).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { jsonSchema, type ToolSet, tool } from 'ai';

export async function aiSdkToolsOf(
  client: Client,
): Promise<{ tools: ToolSet; listed: Awaited<ReturnType<Client['listTools']>> }> {
  const listed = await client.listTools();
  const tools: ToolSet = {};
  for (const listedTool of listed.tools) {
    tools[listedTool.name] = tool({
      description: listedTool.description,
      inputSchema: jsonSchema(listedTool.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input: unknown, { abortSignal }) =>
        client.callTool({ name: listedTool.name, arguments: input as Record<string, unknown> }, undefined, {
          signal: abortSignal,
        }),
    });
  }
  return { tools, listed };
}
