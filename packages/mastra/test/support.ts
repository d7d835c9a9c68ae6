// Shared pieces of the Mastra tests: a scripted model (the AI SDK's MockLanguageModelV3, which
// Mastra takes as a model), a payments provider that counts refunds (in memory, or in a file
// when several processes refund), the refund tool, the approval workflow and its Mastra instance
// on a LibSQL file (the snapshots every process of a test shares).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { LibSQLStore } from '@mastra/libsql';
import { Guard, type GuardEvent, Idempotency, type IdempotencyStore } from '@toolfence/core';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { fenceStep, fenceTool } from '../src/index.js';

export const refundPolicy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;

/** One tool call the scripted model makes. */
export interface Call {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly id: string;
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model answering each turn with the given tool calls, or a final text; then 'Done.'. */
export function scriptedModel(turns: ReadonlyArray<ReadonlyArray<Call> | string>): MockLanguageModelV3 {
  let turn = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const next = turns[turn++] ?? 'Done.';
      if (typeof next === 'string') {
        return {
          content: [{ type: 'text', text: next }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: next.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.id,
          toolName: call.name,
          input: JSON.stringify(call.args),
        })),
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

export const refundCall = (id: string, orderId = 'A-100'): Call => ({
  name: 'refund_payment',
  args: { orderId, amountCents: 2250 },
  id,
});

/** A payments provider that counts refunds; with a file, the count is shared by processes. */
export class Payments {
  private readonly local: string[] = [];
  /** The next refund lands, then its reply is lost (throws ECONNRESET). */
  loseReply = false;
  /** Milliseconds each refund takes. */
  delayMs = 10;

  constructor(readonly file?: string) {}

  get refunds(): string[] {
    if (this.file === undefined) return this.local;
    return existsSync(this.file)
      ? readFileSync(this.file, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
      : [];
  }

  async refund(orderId: string, amountCents: number, signal?: AbortSignal): Promise<{ refundId: string }> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (signal?.aborted) return { refundId: 'aborted' };
    const line = `${orderId} ${amountCents} pid ${process.pid}`;
    if (this.file === undefined) this.local.push(line);
    else appendFileSync(this.file, `${line}\n`);
    if (this.loseReply) {
      throw Object.assign(new Error(`read ECONNRESET (refund ${orderId})`), { code: 'ECONNRESET' });
    }
    return { refundId: `re_${this.refunds.length}` };
  }
}

export function refundTool(payments: Payments, extra: { requireApproval?: boolean } = {}) {
  return createTool({
    id: 'refund_payment',
    description: 'Refund (part of) an order.',
    inputSchema: z.object({ orderId: z.string(), amountCents: z.number().int() }),
    outputSchema: z.object({ refundId: z.string() }),
    ...extra,
    execute: async ({ orderId, amountCents }, context) =>
      payments.refund(orderId, amountCents, context?.abortSignal),
  });
}

export function recordingGuard(store: IdempotencyStore, events: GuardEvent[] = []): Guard {
  return new Guard({ store, tenant: 'shop', onEvent: (event) => events.push(event) });
}

export function agentWith(model: MockLanguageModelV3, tools: Record<string, unknown>, id = 'support'): Agent {
  return new Agent({ id, name: id, instructions: 'You help customers.', model, tools: tools as never });
}

const order = z.object({ orderId: z.string(), amountCents: z.number().int() });

export interface RefundWorkflowOptions {
  readonly payments: Payments;
  /** Fence the refund tool and the approval step with this guard; none: plain Mastra. */
  readonly guard?: Guard | undefined;
  /** The snapshots' LibSQL file. */
  readonly dbFile: string;
  /** `retries` of the refund step. */
  readonly retries?: number | undefined;
}

/**
 * approve (suspends until resumed with `{ approved }`) -> refund_payment (the tool as a step)
 * when approved, else `denied`. With a guard, the tool is fenced and the approval step's resume
 * is bound to the call.
 */
export function refundWorkflow(options: RefundWorkflowOptions) {
  const { payments, guard } = options;
  const approve = createStep({
    id: 'approve',
    inputSchema: order,
    outputSchema: order.extend({ approved: z.boolean() }),
    resumeSchema: z.object({ approved: z.boolean() }),
    execute: async ({ inputData, resumeData, suspend }) => {
      if (resumeData === undefined) return suspend({ question: `Refund ${inputData.orderId}?` });
      return { ...inputData, approved: resumeData.approved };
    },
  });
  const tool = refundTool(payments);
  const refund = createStep(guard === undefined ? tool : fenceTool(tool, { guard, policy: refundPolicy }), {
    retries: options.retries ?? 0,
  });
  const denied = createStep({
    id: 'denied',
    inputSchema: order.extend({ approved: z.boolean() }),
    outputSchema: z.object({ refundId: z.string() }),
    execute: async () => ({ refundId: 'none: denied' }),
  });
  const workflow = createWorkflow({
    id: 'refund-workflow',
    inputSchema: order,
    outputSchema: z.any(),
    retryConfig: { attempts: 0 },
  })
    .then(guard === undefined ? approve : fenceStep(approve, { guard }))
    .branch([
      // The tool's schema takes the order; its parse drops `approved` (Mastra types branch steps
      // by the previous step's whole output).
      [async ({ inputData }) => inputData.approved, refund as unknown as typeof denied],
      [async ({ inputData }) => !inputData.approved, denied],
    ])
    .commit();
  const mastra = new Mastra({
    workflows: { refundWorkflow: workflow },
    storage: new LibSQLStore({ id: 'snapshots', url: `file:${options.dbFile}` }),
    logger: false,
  });
  return { mastra, workflow: mastra.getWorkflow('refundWorkflow') };
}

/** The workflow snapshot store of a Mastra instance (to save and put back a snapshot). */
export async function snapshotsOf(mastra: Mastra) {
  const storage = mastra.getStorage();
  if (storage === undefined) throw new Error('no storage');
  const workflows = await storage.getStore('workflows');
  if (workflows === undefined) throw new Error('no workflows store');
  return workflows;
}

/**
 * Make this Mastra instance's snapshot store one without the concurrent-update contract (Mastra
 * 1.71 claims a resume with a compare-and-set on the run's status only where the storage says
 * `supportsConcurrentUpdates()`, and warns that concurrent resumes may run downstream steps
 * twice elsewhere), with writes `delayMs` slower (a database further away): two processes that
 * resume at once then both read the run as suspended.
 */
export async function storageWithoutResumeClaims(mastra: Mastra, delayMs: number): Promise<void> {
  const snapshots = await snapshotsOf(mastra);
  snapshots.supportsConcurrentUpdates = () => false;
  const persist = snapshots.persistWorkflowSnapshot.bind(snapshots);
  snapshots.persistWorkflowSnapshot = async (args) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return persist(args);
  };
}
