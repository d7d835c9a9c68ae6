// @toolfence/openai-agents against the real SDK (@openai/agents-core 0.20) with its own
// ScriptedModel: offline, no API key. Counts are what the refund body actually ran.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, handoff, RunState, run, tool } from '@openai/agents-core';
import {
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
  MemoryStore,
  PolicyError,
} from '@toolfence/core';
import { fenceAgent, fenceTool, fenceTools, stopErrorOf } from '@toolfence/openai-agents';
import { RedisStore } from '@toolfence/stores/redis';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  connectRedis,
  deletePrefix,
  keysUnder,
  randomPrefix,
  redisUrl,
} from '../../../test/support/redis.js';
import {
  agentWith,
  lookupTool,
  Payments,
  recordingGuard,
  refundCall,
  refundPolicy,
  refundTool,
  scriptedModel,
} from './support.js';

const types = (events: GuardEvent[]) => events.map((event) => event.type);

describe('fenceTool', () => {
  it('keeps name, description, JSON schema, strictness and approval setting', () => {
    const original = refundTool(new Payments(), { needsApproval: true });
    const fenced = fenceTool(original, {
      guard: recordingGuard(new MemoryStore()),
      policy: refundPolicy.refund_payment,
      runId: 'r',
    });
    expect(fenced).not.toBe(original);
    for (const field of [
      'type',
      'name',
      'description',
      'parameters',
      'strict',
      'needsApproval',
      'isEnabled',
    ] as const) {
      expect(fenced[field]).toBe(original[field]);
    }
    expect(fenced.invoke).not.toBe(original.invoke);
  });

  it('refuses at set-up: a run-scoped policy without runId, a policy for a missing tool', () => {
    const guard = recordingGuard(new MemoryStore());
    const refund = refundTool(new Payments());
    expect(() => fenceTool(refund, { guard, policy: refundPolicy.refund_payment })).toThrow(PolicyError);
    expect(() => fenceTool(refund, { guard, policy: refundPolicy.refund_payment })).toThrow(
      /runId is required/,
    );
    // A tenant-scoped key needs no run id.
    expect(() =>
      fenceTool(refund, { guard, policy: { kind: Idempotency.EFFECTFUL, scope: 'tenant' } }),
    ).not.toThrow();
    // Both misspellings are compile errors too (packages/openai-agents/test/fence-tool.test-d.ts); code
    // that gets past the types (plain JavaScript, a computed table) is refused here.
    expect(() =>
      // @ts-expect-error no tool is named refund_paymnet
      fenceTools([refund], { guard, policies: { refund_paymnet: refundPolicy.refund_payment }, runId: 'r' }),
    ).toThrow(/refund_paymnet/);
    expect(() =>
      fenceTool(refund, {
        guard,
        // @ts-expect-error 'order' is not an argument of refund_payment
        policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['order'] },
        runId: 'r',
      }),
    ).toThrow(PolicyError);
  });

  it('looks policies up by own property only: a tool named "toString" is not guarded by accident', () => {
    const named = tool({
      name: 'toString',
      description: 'x',
      parameters: z.object({}),
      execute: async () => 'ok',
    });
    const [same] = fenceTools([named], {
      guard: recordingGuard(new MemoryStore()),
      policies: {},
      runId: 'r',
    });
    expect(same).toBe(named);
  });
});

describe('run(agent, input) with fenced tools', () => {
  it('the same refund twice in one turn runs once; the second call gets the recorded result', async () => {
    const payments = new Payments();
    const events: GuardEvent[] = [];
    const model = scriptedModel([[refundCall('call_1'), refundCall('call_2')], 'Refunded.']);
    const agent = agentWith(
      model,
      fenceTools([refundTool(payments), lookupTool()], {
        guard: recordingGuard(new MemoryStore(), events),
        policies: refundPolicy,
        runId: 'ticket-1',
      }),
    );
    const result = await run(agent, 'Refund A-100');
    expect(result.finalOutput).toBe('Refunded.');
    expect(payments.refunds).toEqual(['A-100 2250']);
    expect(types(events).filter((type) => type === 'tool.deduplicated')).toHaveLength(1);
    const outputs = result.newItems.filter((item) => item.type === 'tool_call_output_item');
    expect(outputs.map((item) => [(item.rawItem as { callId: string }).callId, item.output])).toEqual([
      ['call_1', { refundId: 're_1' }],
      ['call_2', { refundId: 're_1' }],
    ]);
    // The call id reached the guard: the SDK's tool call id.
    expect(events.filter((event) => event.type === 'tool.started').map((event) => event.callId)).toHaveLength(
      1,
    );
    expect(['call_1', 'call_2']).toContain(events.find((event) => event.type === 'tool.started')?.callId);
  });

  it('the same call across turns (and a second run of the same conversation) runs once', async () => {
    const payments = new Payments();
    const guard = recordingGuard(new MemoryStore());
    const tools = fenceTools([refundTool(payments)], {
      guard,
      policies: refundPolicy,
      runId: (runContext) => (runContext.context as { ticket: string }).ticket,
    });
    const first = await run(
      agentWith(scriptedModel([[refundCall('call_1')], [refundCall('call_2')], 'Done.']), tools),
      'Refund A-100',
      { context: { ticket: 'T-7' } },
    );
    expect(first.finalOutput).toBe('Done.');
    // The host runs the job again: same conversation, new run.
    await run(agentWith(scriptedModel([[refundCall('call_3')], 'Done.']), tools), 'Refund A-100', {
      context: { ticket: 'T-7' },
    });
    expect(payments.refunds).toHaveLength(1);
    // Another ticket is another run: it refunds.
    await run(agentWith(scriptedModel([[refundCall('call_4')], 'Done.']), tools), 'Refund A-100', {
      context: { ticket: 'T-8' },
    });
    expect(payments.refunds).toHaveLength(2);
  });

  it('a refund whose reply is lost (ECONNRESET after the effect) stops run() with the typed error', async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const events: GuardEvent[] = [];
    const guard = recordingGuard(new MemoryStore(), events);
    // The tool has the SDK's default errorFunction, which would tell the model "Please try again".
    const tools = fenceTools([refundTool(payments)], { guard, policies: refundPolicy, runId: 'ticket-2' });
    const model = scriptedModel([[refundCall('call_1')], [refundCall('call_2')], 'Done.']);
    const failure = await run(agentWith(model, tools), 'Refund A-100').then(
      () => undefined,
      (error: unknown) => error,
    );
    const stop = stopErrorOf(failure);
    expect(IndeterminateOutcomeError.isInstance(stop)).toBe(true);
    expect(stop?.tool).toBe('refund_payment');
    expect((failure as Error).name).toBe('ToolCallError');
    // The model was not called again: the second refund call was never made.
    expect(model.calls).toHaveLength(1);
    expect(payments.refunds).toHaveLength(1);
    // The host retries the job: the guard answers with the same error, no second refund.
    const again = await run(
      agentWith(scriptedModel([[refundCall('call_9')], 'Done.']), tools),
      'Refund A-100',
    ).catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(stopErrorOf(again))).toBe(true);
    expect(payments.refunds).toHaveLength(1);
    expect(new Set(events.filter((e) => e.type === 'tool.indeterminate').map((e) => e.key)).size).toBe(1);
  });

  it("onIndeterminate: 'report' tells the model instead, and the run goes on", async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const tools = fenceTools([refundTool(payments)], {
      guard: recordingGuard(new MemoryStore()),
      policies: refundPolicy,
      runId: 'ticket-3',
      onIndeterminate: 'report',
    });
    const result = await run(
      agentWith(scriptedModel([[refundCall('call_1')], 'I will check.']), tools),
      'Refund',
    );
    expect(result.finalOutput).toBe('I will check.');
    const output = result.newItems.find((item) => item.type === 'tool_call_output_item')?.output;
    expect(output).toMatch(
      /Tool "refund_payment" did not finish cleanly: its outcome is unknown .*Do NOT call this tool again/,
    );
    expect(payments.refunds).toHaveLength(1);
  });

  it('an ordinary error of an idempotent tool reaches the model as the SDK says it, claim released', async () => {
    let calls = 0;
    const flaky = tool({
      name: 'update_address',
      description: 'Set the address.',
      parameters: z.object({ orderId: z.string() }),
      execute: async () => {
        calls++;
        if (calls === 1) throw new Error('503');
        return 'updated';
      },
    });
    const tools = fenceTools([flaky], {
      guard: recordingGuard(new MemoryStore()),
      policies: { update_address: { kind: Idempotency.IDEMPOTENT } },
      runId: 'ticket-4',
    });
    const call = (id: string) => ({ name: 'update_address', args: { orderId: 'A-1' }, id });
    const result = await run(
      agentWith(scriptedModel([[call('c1')], [call('c2')], 'Done.']), tools),
      'Fix it',
    );
    const outputs = result.newItems
      .filter((item) => item.type === 'tool_call_output_item')
      .map((i) => i.output);
    expect(outputs).toEqual(['An error occurred while running the tool. Please try again.', 'updated']);
    expect(calls).toBe(2);
  });

  it('streaming: run(agent, input, { stream: true }) dedupes, and a stop rejects the stream', async () => {
    const payments = new Payments();
    const guard = recordingGuard(new MemoryStore());
    const tools = fenceTools([refundTool(payments)], { guard, policies: refundPolicy, runId: 'ticket-5' });
    const streamed = await run(
      agentWith(scriptedModel([[refundCall('call_1'), refundCall('call_2')], 'Refunded.']), tools),
      'Refund',
      { stream: true },
    );
    const eventNames: string[] = [];
    for await (const event of streamed)
      if (event.type === 'run_item_stream_event') eventNames.push(event.name);
    await streamed.completed;
    expect(streamed.finalOutput).toBe('Refunded.');
    expect(eventNames.filter((name) => name === 'tool_output')).toHaveLength(2);
    expect(payments.refunds).toHaveLength(1);

    payments.loseReply = true;
    const lost = fenceTools([refundTool(payments)], { guard, policies: refundPolicy, runId: 'ticket-6' });
    const failing = await run(agentWith(scriptedModel([[refundCall('call_1')], 'Done.']), lost), 'Refund', {
      stream: true,
    });
    let iterationError: unknown;
    try {
      for await (const _ of failing) {
        // drain
      }
    } catch (caught) {
      iterationError = caught;
    }
    const completedError = await failing.completed.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((iterationError as Error).name).toBe('ToolCallError');
    expect(completedError).toBe(iterationError);
    expect(IndeterminateOutcomeError.isInstance(stopErrorOf(failing.error))).toBe(true);
    expect(payments.refunds).toHaveLength(2);
  });
});

describe('fenceAgent', () => {
  it("guards a handoff agent's tools from one policy table, without changing the agents given", async () => {
    const payments = new Payments();
    const refunds = agentWith(
      scriptedModel([[refundCall('call_1'), refundCall('call_2')], 'Refunded.']),
      [refundTool(payments)],
      'refunds',
    );
    const originalRefund = refunds.tools[0];
    const billing = agentWith(scriptedModel([]), [], 'billing');
    const triage = new Agent({
      name: 'triage',
      instructions: 'Route.',
      model: scriptedModel([[{ name: 'transfer_to_refunds', args: {}, id: 'call_h' }]]),
      handoffs: [refunds, handoff(billing)],
    });
    // billing hands back to triage: a cycle.
    billing.handoffs = [triage];
    const events: GuardEvent[] = [];
    const guarded = fenceAgent(triage, {
      guard: recordingGuard(new MemoryStore(), events),
      policies: refundPolicy,
      runId: 'ticket-8',
    });
    expect(guarded).not.toBe(triage);
    expect(triage.handoffs[0]).toBe(refunds);
    expect(refunds.tools[0]).toBe(originalRefund);
    const result = await run(guarded, 'I want my money back');
    expect(result.finalOutput).toBe('Refunded.');
    expect(result.lastAgent?.name).toBe('refunds');
    expect(payments.refunds).toHaveLength(1);
    expect(types(events)).toContain('tool.deduplicated');
    // A policy that names no tool of any reachable agent is refused.
    expect(() =>
      fenceAgent(triage, {
        guard: recordingGuard(new MemoryStore()),
        policies: { refnd: refundPolicy.refund_payment },
        runId: 'r',
      }),
    ).toThrow(PolicyError);
  });

  it('needsApproval: approve, serialise the RunState, resume in a second process on Redis twice: one refund', async () => {
    const client = await connectRedis();
    const prefix = randomPrefix('oa-resume');
    const store = new RedisStore({ client, prefix });
    try {
      const payments = new Payments();
      const runId = `ticket-${prefix}`;
      const agent = fenceAgent(
        agentWith(scriptedModel([[refundCall('call_1')]]), [refundTool(payments, { needsApproval: true })]),
        { guard: recordingGuard(store), policies: refundPolicy, runId },
      );
      const paused = await run(agent, 'Refund A-100');
      expect(paused.interruptions).toHaveLength(1);
      expect(payments.refunds).toHaveLength(0);
      paused.state.approve(paused.interruptions[0]!);
      const stateFile = join(tmpdir(), `${prefix}.json`);
      writeFileSync(stateFile, paused.state.toString());
      // A RunState can also be restored here; the resume happens elsewhere.
      await RunState.fromString(agent, paused.state.toString());

      const first = await resumeInChild(prefix, runId, stateFile);
      const second = await resumeInChild(prefix, runId, stateFile);
      expect(first).toMatchObject({ refunds: 1, final: 'Refunded.' });
      expect(first.events).toContain('tool.completed');
      // The same approved call resumed again: the recorded result, the body not entered.
      expect(second).toMatchObject({ refunds: 0, final: 'Refunded.' });
      expect(second.events).toContain('tool.deduplicated');
      expect(second.events).not.toContain('tool.started');
    } finally {
      await store.close();
      await deletePrefix(client, prefix);
      expect(await keysUnder(client, prefix)).toEqual([]);
      client.disconnect();
    }
  }, 120_000);
});

const root = fileURLToPath(new URL('../../../', import.meta.url));

function resumeInChild(
  prefix: string,
  runId: string,
  stateFile: string,
): Promise<{ refunds: number; final: string; events: string[] }> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child = spawn(
    process.execPath,
    [
      '--import',
      tsx,
      '--conditions=@toolfence/source',
      'packages/openai-agents/test/resume-worker.ts',
      redisUrl,
      prefix,
      runId,
      stateFile,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) =>
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`resume worker exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1) as string));
    }),
  );
}
