// docs/mcp.md, "server-fencemcpserverserver-options": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { redis } from '../support.js';

const [, transport] = InMemoryTransport.createLinkedPair();
const inputSchema = { orderId: z.string() };
const outputSchema = { refundId: z.string() };
const refund = async ({ orderId }: { orderId: string }): Promise<CallToolResult> => ({
  content: [{ type: 'text', text: `refunded ${orderId}` }],
  structuredContent: { refundId: `R-${orderId}` },
});
const lookup = async ({ orderId }: { orderId: string }): Promise<CallToolResult> => ({
  content: [{ type: 'text', text: `order ${orderId}: shipped` }],
});

// #region server-fencemcpserverserver-options
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Guard, Idempotency } from '@toolfence/core';
import { fenceMcpServer } from '@toolfence/mcp';
import { RedisStore } from '@toolfence/stores/redis';

const server = new McpServer({ name: 'payments', version: '1.0.0' });
server.registerTool(
  'refund_order',
  { inputSchema, outputSchema, annotations: { destructiveHint: true } },
  refund,
);
server.registerTool('lookup_order', { inputSchema, annotations: { readOnlyHint: true } }, lookup);

fenceMcpServer(server, {
  guard: new Guard({ store: new RedisStore({ client: redis }) }), // every server process shares it
  policies: { refund_order: { kind: Idempotency.EFFECTFUL, leaseMs: 10_000 } }, // optional: wins over annotations
  tenant: (extra) => extra.authInfo?.clientId, // optional
});
await server.connect(transport); // after fencing: capabilities are fixed once connected
// #endregion server-fencemcpserverserver-options
