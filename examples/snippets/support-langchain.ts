// What the LangChain snippets take for granted: an app's tools, model and checkpointer.
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { fakeModel, HumanMessage } from 'langchain';
import { z } from 'zod';

export const lookupOrder = tool(async ({ orderId }) => `order ${orderId}: shipped`, {
  name: 'lookup_order',
  description: 'Look an order up',
  schema: z.object({ orderId: z.string() }),
});
export const refundOrder = tool(async ({ orderId, amount }) => `refunded ${amount} for ${orderId}`, {
  name: 'refund_order',
  description: 'Refund an order',
  schema: z.object({ orderId: z.string(), amount: z.number() }),
});
export const model = fakeModel();
export const checkpointer = new MemorySaver();
export const messages = [new HumanMessage('Refund order A-100')];
export const createTicket = tool(async ({ title }) => `ticket opened: ${title}`, {
  name: 'create_ticket',
  description: 'Open a ticket',
  schema: z.object({ title: z.string() }),
});
export const searchDocs = tool(async ({ query }) => `no results for ${query}`, {
  name: 'search_docs',
  description: 'Search the docs',
  schema: z.object({ query: z.string() }),
});
export const config = { configurable: { thread_id: 'ticket-4711' } };
