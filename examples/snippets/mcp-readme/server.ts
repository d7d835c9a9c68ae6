// packages/mcp/README.md, "server": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const [, transport] = InMemoryTransport.createLinkedPair();
const inputSchema = { orderId: z.string() };
const refund = async ({ orderId }: { orderId: string }): Promise<CallToolResult> => ({
  content: [{ type: 'text', text: `refunded ${orderId}` }],
});
const lookup = async ({ orderId }: { orderId: string }): Promise<CallToolResult> => ({
  content: [{ type: 'text', text: `order ${orderId}: shipped` }],
});

// #region server
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { fenceMcpServer } from '@toolfence/mcp';

const server = new McpServer({ name: 'payments', version: '1.0.0' });
server.registerTool('refund_order', { inputSchema, annotations: { destructiveHint: true } }, refund);
server.registerTool('lookup_order', { inputSchema, annotations: { readOnlyHint: true } }, lookup);

fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore() }) }); // RedisStore / PostgresStore across processes
await server.connect(transport); // fence before connect
// #endregion server
