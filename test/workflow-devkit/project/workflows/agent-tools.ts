// A DurableAgent (@workflow/ai) whose tool's execute is a "use step" function, for
// twin.test.ts: the same tool plain and guarded by workflowStepGuard. A scripted model (the
// engine's own mockSequenceModel) calls the tool once, then answers.
import { Guard, MemoryStore } from '@toolfence/core';
import { workflowStepGuard } from '@toolfence/durable';
import { DurableAgent } from '@workflow/ai/agent';
import { mockSequenceModel } from '@workflow/ai/test';
import { FatalError, getStepMetadata, getWorkflowMetadata, getWritable } from 'workflow';
import { z } from 'zod';

const shared = globalThis as { agentEffects?: string[] };
shared.agentEffects ??= [];
/** One entry per refund the tool made: `<tool>:<orderId>`. */
export const agentEffects: string[] = shared.agentEffects;

const store = new MemoryStore();

async function refund(tool: string, orderId: string) {
  agentEffects.push(`${tool}:${orderId}`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { refunded: orderId };
}

async function refundPlain({ orderId }: { orderId: string }) {
  'use step';
  return refund('plain', orderId);
}

async function refundFenced({ orderId }: { orderId: string }) {
  'use step';
  // A guard per delivery, as two workers would have: one store between them.
  const fenced = workflowStepGuard({
    guard: new Guard({ store }),
    getStepMetadata,
    getWorkflowMetadata,
    FatalError,
  });
  return fenced({ arguments: { orderId } }, () => refund('fenced', orderId));
}

function agentWith(execute: (input: { orderId: string }) => Promise<{ refunded: string }>) {
  return new DurableAgent({
    model: mockSequenceModel([
      { type: 'tool-call', toolName: 'refundPayment', input: JSON.stringify({ orderId: 'A-100' }) },
      { type: 'text', text: 'Refunded.' },
    ]),
    tools: {
      refundPayment: {
        description: 'Refund an order',
        inputSchema: z.object({ orderId: z.string() }),
        execute,
      },
    },
  });
}

export async function plainAgentWorkflow() {
  'use workflow';
  const result = await agentWith(refundPlain).stream({
    messages: [{ role: 'user', content: 'Refund order A-100.' }],
    writable: getWritable(),
  });
  return result.messages.length;
}

export async function fencedAgentWorkflow() {
  'use workflow';
  const result = await agentWith(refundFenced).stream({
    messages: [{ role: 'user', content: 'Refund order A-100.' }],
    writable: getWritable(),
  });
  return result.messages.length;
}
