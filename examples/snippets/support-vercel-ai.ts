// What the AI SDK snippets take for granted: an app's tools and model.
import { type LanguageModel, tool } from 'ai';
import { z } from 'zod';

export declare const model: LanguageModel;
export const tools = {
  chargeCard: tool({
    description: 'Charge the customer',
    inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
    execute: async ({ orderId }) => ({ charged: orderId }),
  }),
  upsertContact: tool({
    description: 'Create or update a contact',
    inputSchema: z.object({ email: z.string() }),
    execute: async ({ email }) => ({ contact: email }),
  }),
};
export const conversationId = 'conversation-7';
export const prompt = 'Charge order A-100';
