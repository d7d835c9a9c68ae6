import { tool } from '@langchain/core/tools';
import { Guard, type GuardEvent, type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { z } from 'zod';

/** A guard on a fresh MemoryStore (or the given store) that records its events. */
export function recordingGuard(store: IdempotencyStore = new MemoryStore()): {
  guard: Guard;
  events: GuardEvent[];
  types: (tool?: string) => string[];
} {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, onEvent: (event) => events.push(event) });
  return {
    guard,
    events,
    types: (name?: string) => events.filter((e) => name === undefined || e.tool === name).map((e) => e.type),
  };
}

/** An effectful tool that counts its effects. */
export function ticketTool(options: { delayMs?: number; fail?: () => Error | undefined } = {}) {
  const effects: string[] = [];
  const createTicket = tool(
    async ({ title }) => {
      if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      effects.push(title);
      const failure = options.fail?.();
      if (failure !== undefined) throw failure;
      return `Ticket T-${effects.length} created: ${title}`;
    },
    {
      name: 'create_ticket',
      description: 'Open a support ticket.',
      schema: z.object({ title: z.string().describe('Ticket title'), priority: z.number().int().default(3) }),
    },
  );
  return { createTicket, effects };
}

export const userMessage = { messages: [{ role: 'user', content: 'The printer is on fire.' }] };
