// A small MCP server for the tests and the example: a payments provider behind three tools
// (an effectful refund with structured output, an idempotent address update, a read-only
// lookup), registered with the SDK's own API and annotations. Nothing in it knows toolfence.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** The fake provider: every refund it pays, and an optional hold on the next payments. */
export class PaymentsProvider {
  readonly refunds: Array<{ orderId: string; amountCents: number; refundId: string }> = [];
  /** While set, a refund pays, then waits for this promise before it answers (a slow reply). */
  hold: Promise<void> | undefined;
  /** Called after a refund was paid, before it answers. */
  onPaid: (() => void) | undefined;
  /** Make the next refunds throw after paying (the reply is lost). */
  failAfterPaying = false;

  async refund(orderId: string, amountCents: number): Promise<string> {
    const refundId = `re_${this.refunds.length + 1}`;
    this.refunds.push({ orderId, amountCents, refundId });
    this.onPaid?.();
    if (this.hold !== undefined) await this.hold;
    if (this.failAfterPaying) throw new Error('connection reset by the payments API');
    return refundId;
  }
}

/** An McpServer with the payments tools registered (not fenced, not connected). */
export function createPaymentsServer(provider: PaymentsProvider, name = 'payments'): McpServer {
  const server = new McpServer({ name, version: '1.0.0' });
  server.registerTool(
    'refund_order',
    {
      description: 'Refund an order. Pays money out: never repeat it.',
      inputSchema: { orderId: z.string(), amountCents: z.number().int().positive() },
      outputSchema: { refundId: z.string(), orderId: z.string(), amountCents: z.number() },
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    async ({ orderId, amountCents }) => {
      const refundId = await provider.refund(orderId, amountCents);
      const structuredContent = { refundId, orderId, amountCents };
      return {
        content: [{ type: 'text', text: `Refunded ${amountCents} cents on ${orderId} (${refundId}).` }],
        structuredContent,
      };
    },
  );
  server.registerTool(
    'set_address',
    {
      description: 'Set the shipping address of an order.',
      inputSchema: { orderId: z.string(), address: z.string() },
      annotations: { idempotentHint: true },
    },
    async ({ orderId, address }) => ({
      content: [{ type: 'text', text: `${orderId} ships to ${address}.` }],
    }),
  );
  server.registerTool(
    'lookup_order',
    {
      description: 'Look an order up.',
      inputSchema: { orderId: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ orderId }) => ({
      content: [
        {
          type: 'text',
          text: `${orderId}: ${provider.refunds.filter((r) => r.orderId === orderId).length} refund(s).`,
        },
      ],
    }),
  );
  return server;
}
