// End-to-end tests of @toolfence/vercel-ai with a scripted model: generateText and streamText,
// AI SDK 6 (workspace) and AI SDK 7 (test/vercel-ai-v7/run.sh).
import {
  type CallStopError,
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
  KeyDerivationError,
  MemoryStore,
  PolicyError,
} from '@toolfence/core';
import {
  fenceTools,
  indeterminateErrorOf,
  isSetupFault,
  stopOnIndeterminate,
  toolfenceContext,
} from '@toolfence/vercel-ai';
import {
  generateText,
  jsonSchema,
  type StopCondition,
  stepCountIs,
  streamText,
  type Tool,
  type ToolSet,
  tool,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zodMini from 'zod/mini';
import { z as zod3 } from 'zod/v3';
import { aiMajor, scriptedModel } from '../../../test/support/scripted-model.js';

const effectful = { kind: Idempotency.EFFECTFUL } as const;
const idempotent = { kind: Idempotency.IDEMPOTENT } as const;

function connectionReset(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** A booking tool whose body counts its runs (the effect). */
function bookingTools() {
  const effects: Array<{ seat: string; callId: string | undefined }> = [];
  const tools = {
    bookSeat: tool({
      description: 'Book a seat',
      inputSchema: z.object({ seat: z.string(), note: z.string().optional() }),
      execute: async ({ seat }) => {
        effects.push({ seat, callId: currentToolCall()?.callId });
        return { booked: seat, confirmation: `C-${effects.length}` };
      },
    }),
  };
  return { tools, effects };
}

function guardWithEvents() {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
  return { guard, events };
}

function partsOf(steps: ReadonlyArray<{ content: ReadonlyArray<unknown> }>) {
  return steps.flatMap((step) => step.content as Array<Record<string, unknown>>);
}

describe('fenceTools: wrapping', () => {
  it('keeps every field of a guarded tool and replaces only execute; others pass through as the same object', () => {
    const { guard } = guardWithEvents();
    const needsApproval = async () => false;
    const toModelOutput = ({ output }: { output: unknown }) => ({
      type: 'json' as const,
      value: output as never,
    });
    const onInputStart = () => undefined;
    const inputSchema = z.object({ seat: z.string() });
    const original = tool({
      description: 'Book a seat',
      title: 'Booking',
      inputSchema,
      needsApproval,
      providerOptions: { openai: { strict: true } },
      toModelOutput,
      onInputStart,
      execute: async ({ seat }) => seat,
    });
    const readOnly = tool({ inputSchema: z.object({}), execute: async () => 'weather' });
    const clientSide = tool({ inputSchema: z.object({ answer: z.string() }) });
    const tools = { bookSeat: original, weather: readOnly, askUser: clientSide };

    const fenced = fenceTools(tools, {
      guard,
      policies: { bookSeat: effectful, askUser: effectful },
      runId: 'r',
    });

    expect(Object.keys(fenced)).toEqual(['bookSeat', 'weather', 'askUser']);
    expect(fenced.weather).toBe(readOnly);
    expect(fenced.askUser).toBe(clientSide);
    expect(fenced.bookSeat).not.toBe(original);
    expect(fenced.bookSeat.execute).not.toBe(original.execute);
    const { execute: _fencedExecute, ...fencedFields } = fenced.bookSeat;
    const { execute: _originalExecute, ...originalFields } = original;
    expect(fencedFields).toEqual(originalFields);
    expect(fenced.bookSeat.inputSchema).toBe(inputSchema);
    expect(fenced.bookSeat.needsApproval).toBe(needsApproval);
    expect(fenced.bookSeat.toModelOutput).toBe(toModelOutput);
    expect(fenced.bookSeat.onInputStart).toBe(onInputStart);
    expect(fenced.bookSeat.providerOptions).toEqual({ openai: { strict: true } });
    expect(fenced.bookSeat.description).toBe('Book a seat');
    expect(fenced.bookSeat.title).toBe('Booking');
  });

  it('refuses at wrap time a key argument that is not a parameter of a zod input schema', () => {
    const { guard } = guardWithEvents();
    const { tools } = bookingTools();
    const wrap = () =>
      // @ts-expect-error a key argument the schema lacks is a compile error as well
      fenceTools(tools, { guard, policies: { bookSeat: { ...effectful, keyArguments: ['seatNumber'] } } });
    expect(wrap).toThrow(PolicyError);
    expect(wrap).toThrow(/"seatNumber", which is not a parameter of the tool \(parameters: seat, note\)/);
    expect(() =>
      fenceTools(tools, { guard, policies: { bookSeat: { ...effectful, keyArguments: ['seat'] } } }),
    ).not.toThrow();
  });

  it("refuses at wrap time a key argument that is not in a jsonSchema() tool's properties", () => {
    const { guard } = guardWithEvents();
    const tools = {
      refund: tool({
        inputSchema: jsonSchema<{ orderId: string; cents: number }>({
          type: 'object',
          properties: { orderId: { type: 'string' }, cents: { type: 'number' } },
          required: ['orderId', 'cents'],
        }),
        execute: async ({ orderId }) => orderId,
      }),
    };
    let caught: unknown;
    try {
      // @ts-expect-error a key argument the schema lacks is a compile error as well
      fenceTools(tools, { guard, policies: { refund: { ...effectful, keyArguments: ['order'] } } });
    } catch (error) {
      caught = error;
    }
    expect(PolicyError.isInstance(caught)).toBe(true);
    expect((caught as PolicyError).tool).toBe('refund');
    expect((caught as PolicyError).field).toBe('keyArguments');
    expect(() =>
      fenceTools(tools, { guard, policies: { refund: { ...effectful, keyArguments: ['orderId'] } } }),
    ).not.toThrow();
  });

  it('reads parameter names from zod 3, zod mini and JSON-schema-converted (piped) zod schemas', () => {
    const { guard } = guardWithEvents();
    const schemas = {
      zod3: zod3.object({ orderId: zod3.string() }),
      zodMini: zodMini.object({ orderId: zodMini.string() }),
      piped: z.object({ orderId: z.string() }).transform((value) => value),
    };
    for (const [name, inputSchema] of Object.entries(schemas)) {
      const tools = { refund: { inputSchema, execute: async () => 'ok' } as unknown as Tool };
      expect(() =>
        fenceTools(tools, { guard, policies: { refund: { ...effectful, keyArguments: ['orderId'] } } }),
      ).not.toThrow();
      expect(
        () => fenceTools(tools, { guard, policies: { refund: { ...effectful, keyArguments: ['order'] } } }),
        name,
      ).toThrow(/"order", which is not a parameter of the tool \(parameters: orderId\)/);
    }
  });

  it('refuses at wrap time an invalid policy and a policy for a tool the set does not have', () => {
    const { guard } = guardWithEvents();
    const { tools } = bookingTools();
    expect(() =>
      fenceTools(tools, {
        guard,
        policies: { bookSeat: { ...effectful, leaseMs: 1000, heartbeatMs: 1000 } },
      }),
    ).toThrow(/heartbeatMs \(1000\) must be shorter than leaseMs \(1000\)/);
    expect(() =>
      fenceTools(tools, { guard, policies: { bookSeats: effectful } as Record<string, typeof effectful> }),
    ).toThrow(
      /names tool "bookSeats", which is not in the tool set \(tools: bookSeat\); a misspelt name would leave a tool unguarded/,
    );
  });
});

describe('fenceTools with generateText', () => {
  it('runs the body once when the model calls the same effectful tool twice in one step', async () => {
    const { guard, events } = guardWithEvents();
    const { tools, effects } = bookingTools();
    const model = scriptedModel([
      [
        { toolName: 'bookSeat', input: { seat: '12A' }, toolCallId: 'first' },
        { toolName: 'bookSeat', input: { seat: '12A' }, toolCallId: 'second' },
      ],
      'Booked.',
    ]);
    const result = await generateText({
      model,
      tools: fenceTools(tools, { guard, policies: { bookSeat: effectful }, runId: 'run-1' }),
      prompt: 'Book 12A',
      stopWhen: stepCountIs(5),
    });

    expect(effects).toHaveLength(1);
    const results = partsOf(result.steps).filter((part) => part.type === 'tool-result');
    // Each call gets its own result part (the SDK answers the current call id) with the one outcome.
    expect(results.map((part) => part.toolCallId).sort()).toEqual(['first', 'second']);
    expect(results.map((part) => part.output)).toEqual([
      { booked: '12A', confirmation: 'C-1' },
      { booked: '12A', confirmation: 'C-1' },
    ]);
    expect(events.filter((event) => event.type === 'tool.started')).toHaveLength(1);
    expect(result.text).toBe('Booked.');
  });

  it('runs the body once when the model repeats the call in a later step', async () => {
    const { guard, events } = guardWithEvents();
    const { tools, effects } = bookingTools();
    const model = scriptedModel([
      [{ toolName: 'bookSeat', input: { seat: '7C' } }],
      [{ toolName: 'bookSeat', input: { seat: '7C' } }],
      'Booked once.',
    ]);
    const result = await generateText({
      model,
      tools: fenceTools(tools, { guard, policies: { bookSeat: effectful }, runId: 'run-2' }),
      prompt: 'Book 7C',
      stopWhen: stepCountIs(5),
    });

    expect(effects).toEqual([{ seat: '7C', callId: 'call-0-0' }]);
    expect(result.steps).toHaveLength(3);
    const results = partsOf(result.steps).filter((part) => part.type === 'tool-result');
    expect(results.map((part) => [part.toolCallId, part.output])).toEqual([
      ['call-0-0', { booked: '7C', confirmation: 'C-1' }],
      ['call-1-0', { booked: '7C', confirmation: 'C-1' }],
    ]);
    const deduplicated = events.filter((event) => event.type === 'tool.deduplicated');
    expect(deduplicated.map((event) => event.callId)).toEqual(['call-1-0']);
  });

  it('gives the body the SDK call id, tenant and run id through currentToolCall()', async () => {
    const { guard } = guardWithEvents();
    const seen: Array<Record<string, unknown>> = [];
    const tools = {
      send: tool({
        inputSchema: z.object({ to: z.string() }),
        execute: async () => {
          const call = currentToolCall();
          seen.push({
            callId: call?.callId,
            tenant: call?.tenant,
            runId: call?.runId,
            key: call?.idempotencyKey,
          });
          return 'sent';
        },
      }),
    };
    await generateText({
      model: scriptedModel([
        [{ toolName: 'send', input: { to: 'a@example.com' }, toolCallId: 'tc-9' }],
        'ok',
      ]),
      tools: fenceTools(tools, {
        guard,
        policies: { send: effectful },
        tenant: 'acme',
        runId: (options, toolName) => `thread-for-${toolName}-${options.toolCallId}`,
      }),
      prompt: 'send',
      stopWhen: stepCountIs(3),
    });
    expect(seen).toEqual([
      {
        callId: 'tc-9',
        tenant: 'acme',
        runId: 'thread-for-send-tc-9',
        key: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
  });

  it('takes tenant and run id per call from the execution context (AI SDK 6 experimental_context, 7 toolsContext)', async () => {
    const { guard } = guardWithEvents();
    const seen: Array<[string | undefined, string | undefined]> = [];
    const tools = {
      send: tool({
        inputSchema: z.object({ to: z.string() }),
        execute: async () => {
          seen.push([currentToolCall()?.tenant, currentToolCall()?.runId]);
          return 'sent';
        },
      }),
    };
    const fenced = fenceTools(tools, { guard, policies: { send: effectful }, tenant: 'fallback-tenant' });
    const context = toolfenceContext({ tenant: 'globex', runId: 'thread-42' });
    const perCall =
      aiMajor === 6 ? { experimental_context: context } : { toolsContext: { send: context } as never };
    await generateText({
      model: scriptedModel([[{ toolName: 'send', input: { to: 'b@example.com' } }], 'ok']),
      tools: fenced,
      prompt: 'send',
      stopWhen: stepCountIs(3),
      ...perCall,
    });
    expect(seen).toEqual([['globex', 'thread-42']]);
    expect(toolfenceContext({ runId: 'thread-7' }, { userId: 'u-1' })).toEqual({
      userId: 'u-1',
      toolfence: { runId: 'thread-7' },
    });
  });

  it('without a run id, stops the run at the first call (generateText rejects; the model never reads it), naming both fixes', async () => {
    const { guard, events } = guardWithEvents();
    const { tools, effects } = bookingTools();
    const model = scriptedModel([
      [
        { toolName: 'bookSeat', input: { seat: '1A' } },
        { toolName: 'bookSeat', input: { seat: '1B' } },
      ],
      'could not book',
    ]);
    const error = await generateText({
      model,
      tools: fenceTools(tools, { guard, policies: { bookSeat: effectful } }),
      prompt: 'Book 1A and 1B',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    }).catch((caught: unknown) => caught);
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    expect(isSetupFault(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('Cannot derive the idempotency key of tool "bookSeat": no run id');
    expect(message).toContain('fenceTools(tools, { runId })');
    expect(message).toContain('toolfenceContext({ runId })');
    expect(effects).toHaveLength(0);
    expect(events).toEqual([]);
    // One model call: the error went to the caller, not back to the model.
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('ends the run with IndeterminateOutcomeError after ECONNRESET and never re-runs the tool', async () => {
    const { guard } = guardWithEvents();
    let charges = 0;
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
        execute: async (): Promise<string> => {
          charges++; // the request reached the provider ...
          throw connectionReset(); // ... and the answer was lost
        },
      }),
    };
    const fenced = fenceTools(tools, { guard, policies: { charge: effectful }, runId: 'order-run' });
    const model = scriptedModel([
      [{ toolName: 'charge', input: { orderId: 'A-1', cents: 500 } }],
      [{ toolName: 'charge', input: { orderId: 'A-1', cents: 500 } }],
      'Charged twice?',
    ]);
    const result = await generateText({
      model,
      tools: fenced,
      prompt: 'charge A-1',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });

    expect(charges).toBe(1);
    expect(result.steps).toHaveLength(1);
    expect(model.doGenerateCalls).toHaveLength(1);
    const error = indeterminateErrorOf(result);
    expect(error).toBeInstanceOf(IndeterminateOutcomeError);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(error?.tool).toBe('charge');
    expect((error as IndeterminateOutcomeError).reasonType).toBe('ECONNRESET');
    expect(error?.attempt).toBe(1);
    const toolError = partsOf(result.steps).find((part) => part.type === 'tool-error');
    expect(toolError?.error).toBe(error);

    // A later run that asks again (same run id: a resumed conversation) gets the same answer and
    // the body is not entered.
    const again = await generateText({
      model: scriptedModel([[{ toolName: 'charge', input: { cents: 500, orderId: 'A-1' } }], 'x']),
      tools: fenced,
      prompt: 'charge A-1 again',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    expect(charges).toBe(1);
    expect(again.steps).toHaveLength(1);
    expect(indeterminateErrorOf(again)?.key).toBe(error?.key);
  });

  it('without the stop condition the model may ask again, and still the body does not run again', async () => {
    const { guard } = guardWithEvents();
    let charges = 0;
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async (): Promise<string> => {
          charges++;
          throw connectionReset();
        },
      }),
    };
    const result = await generateText({
      model: scriptedModel([
        [{ toolName: 'charge', input: { orderId: 'B-2' } }],
        [{ toolName: 'charge', input: { orderId: 'B-2' } }],
        'gave up',
      ]),
      tools: fenceTools(tools, { guard, policies: { charge: effectful }, runId: 'r' }),
      prompt: 'charge',
      stopWhen: stepCountIs(5),
    });
    expect(result.steps).toHaveLength(3);
    expect(charges).toBe(1);
    const errors = partsOf(result.steps).filter((part) => part.type === 'tool-error');
    expect(errors.map((part) => IndeterminateOutcomeError.isInstance(part.error))).toEqual([true, true]);
  });

  it('rejects generateText with the typed error with stopOnIndeterminate({ rethrow: true })', async () => {
    const { guard } = guardWithEvents();
    let charges = 0;
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async (): Promise<string> => {
          charges++;
          throw connectionReset();
        },
      }),
    };
    const model = scriptedModel([[{ toolName: 'charge', input: { orderId: 'C-3' } }], 'next step']);
    const rejection = await generateText({
      model,
      tools: fenceTools(tools, { guard, policies: { charge: effectful }, runId: 'r' }),
      prompt: 'charge',
      stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBeInstanceOf(IndeterminateOutcomeError);
    expect((rejection as IndeterminateOutcomeError).tool).toBe('charge');
    expect((rejection as IndeterminateOutcomeError).reasonType).toBe('ECONNRESET');
    expect(charges).toBe(1);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("calls onStop with the error and the call; aborting the caller's controller there rejects only before another step", async () => {
    const { guard } = guardWithEvents();
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async (): Promise<string> => {
          throw connectionReset();
        },
      }),
    };
    const reported: Array<{ error: CallStopError; toolName: string; toolCallId: string; input: unknown }> =
      [];
    const run = async (runId: string, stopWhen: StopCondition<any> | undefined) => {
      const controller = new AbortController();
      const fenced = fenceTools(tools, {
        guard,
        policies: { charge: effectful },
        runId,
        onStop: (error, call) => {
          reported.push({ error, ...call });
          controller.abort(error);
        },
      });
      return generateText({
        model: scriptedModel([[{ toolName: 'charge', input: { orderId: 'C-4' } }], 'next step']),
        tools: fenced,
        prompt: 'charge',
        stopWhen,
        abortSignal: controller.signal,
      }).then(
        (result) => ({ resolvedSteps: result.steps.length }),
        (error: unknown) => ({ rejectedWith: error }),
      );
    };

    // The SDK would go on to a second step: it checks the signal first and rejects with the reason.
    const goingOn = await run('r-1', stepCountIs(5));
    expect(goingOn).toEqual({ rejectedWith: reported[0]?.error });
    expect(IndeterminateOutcomeError.isInstance(reported[0]?.error)).toBe(true);
    expect(reported.map(({ toolName, toolCallId, input }) => [toolName, toolCallId, input])).toEqual([
      ['charge', 'call-0-0', { orderId: 'C-4' }],
    ]);
    // The failing step is the last one (the default stopWhen is one step): the run resolves.
    const lastStep = await run('r-2', undefined);
    expect(lastStep).toEqual({ resolvedSteps: 1 });
    expect(reported).toHaveLength(2);
  });

  it('keeps the SDK behaviour for ordinary tool errors: a tool-error part the model sees, the loop goes on', async () => {
    const { guard } = guardWithEvents();
    let attempts = 0;
    const tools = {
      upsert: tool({
        inputSchema: z.object({ id: z.string() }),
        execute: async ({ id }) => {
          attempts++;
          if (attempts === 1) throw new Error('version conflict, retry');
          return { saved: id };
        },
      }),
    };
    const model = scriptedModel([
      [{ toolName: 'upsert', input: { id: 'x' } }],
      [{ toolName: 'upsert', input: { id: 'x' } }],
      'saved',
    ]);
    const result = await generateText({
      model,
      tools: fenceTools(tools, { guard, policies: { upsert: idempotent }, runId: 'r' }),
      prompt: 'save',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    expect(attempts).toBe(2);
    expect(result.steps).toHaveLength(3);
    const parts = partsOf(result.steps).filter(
      (part) => part.type === 'tool-error' || part.type === 'tool-result',
    );
    expect(parts.map((part) => part.type)).toEqual(['tool-error', 'tool-result']);
    expect((parts[0]?.error as Error | undefined)?.message).toBe('version conflict, retry');
    expect(parts[1]?.output).toEqual({ saved: 'x' });
    expect(indeterminateErrorOf(result)).toBeUndefined();
    // The model saw the error text in the next step's prompt.
    expect(JSON.stringify(model.doGenerateCalls[1]?.prompt)).toContain('version conflict, retry');
  });

  it('keeps needsApproval: the call waits for approval and the body does not run', async () => {
    const { guard } = guardWithEvents();
    const { tools, effects } = bookingTools();
    const approvalTools = { bookSeat: { ...tools.bookSeat, needsApproval: true } } satisfies ToolSet;
    const result = await generateText({
      model: scriptedModel([[{ toolName: 'bookSeat', input: { seat: '3F' } }], 'after']),
      tools: fenceTools(approvalTools, { guard, policies: { bookSeat: effectful }, runId: 'r' }),
      prompt: 'book',
      stopWhen: stepCountIs(5),
    });
    expect(effects).toHaveLength(0);
    expect(result.steps).toHaveLength(1);
    const approval = partsOf(result.steps).find((part) => part.type === 'tool-approval-request');
    expect((approval?.toolCall as { toolName: string } | undefined)?.toolName).toBe('bookSeat');
  });

  it("passes the caller's abort to the tool through the guard's signal", async () => {
    const { guard } = guardWithEvents();
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const tools = {
      slow: tool({
        inputSchema: z.object({ id: z.string() }),
        execute: async (_input, { abortSignal }) => {
          toolSignal = abortSignal;
          controller.abort(new Error('user left'));
          return abortSignal?.aborted;
        },
      }),
    };
    const run = generateText({
      model: scriptedModel([[{ toolName: 'slow', input: { id: '1' } }], 'x']),
      tools: fenceTools(tools, { guard, policies: { slow: idempotent }, runId: 'r' }),
      prompt: 'go',
      stopWhen: stepCountIs(5),
      abortSignal: controller.signal,
    });
    await expect(run).rejects.toThrow('user left');
    expect(toolSignal).toBeDefined();
    expect(toolSignal).not.toBe(controller.signal);
    expect(toolSignal?.aborted).toBe(true);
    expect((toolSignal?.reason as Error | undefined)?.message).toBe('user left');
  });

  it('runs a READ_ONLY tool every time and records nothing', async () => {
    const { guard, events } = guardWithEvents();
    let reads = 0;
    const tools = {
      weather: tool({
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `${city}: ${++reads}`,
      }),
    };
    const result = await generateText({
      model: scriptedModel([
        [{ toolName: 'weather', input: { city: 'Oslo' } }],
        [{ toolName: 'weather', input: { city: 'Oslo' } }],
        'ok',
      ]),
      tools: fenceTools(tools, { guard, policies: { weather: { kind: Idempotency.READ_ONLY } } }),
      prompt: 'weather',
      stopWhen: stepCountIs(5),
    });
    expect(reads).toBe(2);
    expect(
      partsOf(result.steps)
        .filter((part) => part.type === 'tool-result')
        .map((part) => part.output),
    ).toEqual(['Oslo: 1', 'Oslo: 2']);
    expect(events).toHaveLength(0);
  });
});

describe('fenceTools with streamText', () => {
  it('runs the body once for the same call in one step and across steps', async () => {
    const { guard } = guardWithEvents();
    const { tools, effects } = bookingTools();
    const result = streamText({
      model: scriptedModel([
        [
          { toolName: 'bookSeat', input: { seat: '9B' } },
          { toolName: 'bookSeat', input: { seat: '9B' } },
        ],
        [{ toolName: 'bookSeat', input: { seat: '9B' } }],
        'Booked.',
      ]),
      tools: fenceTools(tools, { guard, policies: { bookSeat: effectful }, runId: 'stream-run' }),
      prompt: 'Book 9B',
      stopWhen: stepCountIs(5),
    });
    expect(await result.text).toBe('Booked.');
    expect(effects).toHaveLength(1);
    const steps = await result.steps;
    expect(steps).toHaveLength(3);
    const outputs = partsOf(steps)
      .filter((part) => part.type === 'tool-result')
      .map((part) => [part.toolCallId, part.output]);
    expect(outputs).toEqual([
      ['call-0-0', { booked: '9B', confirmation: 'C-1' }],
      ['call-0-1', { booked: '9B', confirmation: 'C-1' }],
      ['call-1-0', { booked: '9B', confirmation: 'C-1' }],
    ]);
  });

  it('ends the run with IndeterminateOutcomeError after ECONNRESET; the stream shows the tool error', async () => {
    const { guard } = guardWithEvents();
    let charges = 0;
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async (): Promise<string> => {
          charges++;
          throw connectionReset();
        },
      }),
    };
    const model = scriptedModel([
      [{ toolName: 'charge', input: { orderId: 'D-4' } }],
      [{ toolName: 'charge', input: { orderId: 'D-4' } }],
    ]);
    const result = streamText({
      model,
      tools: fenceTools(tools, { guard, policies: { charge: effectful }, runId: 'r' }),
      prompt: 'charge',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    const streamed: Array<{ type: string; error?: unknown }> = [];
    for await (const part of result.fullStream) streamed.push(part as { type: string; error?: unknown });
    expect(streamed.map((part) => part.type)).toEqual([
      'start',
      'start-step',
      'tool-call',
      'tool-error',
      'finish-step',
      'finish',
    ]);
    const steps = await result.steps;
    expect(steps).toHaveLength(1);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(charges).toBe(1);
    const error = indeterminateErrorOf({ steps });
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(streamed.find((part) => part.type === 'tool-error')?.error).toBe(error);
    expect(indeterminateErrorOf(steps)).toBe(error);
  });

  it('with stopOnIndeterminate({ rethrow: true }) the stream throws the typed error and the promises reject', async () => {
    const { guard } = guardWithEvents();
    const tools = {
      charge: tool({
        inputSchema: z.object({ orderId: z.string() }),
        execute: async (): Promise<string> => {
          throw connectionReset();
        },
      }),
    };
    const result = streamText({
      model: scriptedModel([[{ toolName: 'charge', input: { orderId: 'E-5' } }], 'next']),
      tools: fenceTools(tools, { guard, policies: { charge: effectful }, runId: 'r' }),
      prompt: 'charge',
      stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
      onError: () => undefined,
    });
    const types: string[] = [];
    let thrown: unknown;
    try {
      for await (const part of result.fullStream) types.push(part.type);
    } catch (error) {
      thrown = error;
    }
    expect(types).toEqual(['start', 'start-step', 'tool-call', 'tool-error', 'finish-step']);
    expect(IndeterminateOutcomeError.isInstance(thrown)).toBe(true);
    const rejection = await result.steps.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBe(thrown);
    await expect(result.text).rejects.toBe(thrown);
  });
});

describe('fenceTools with streaming (async generator) tools', () => {
  function progressTools() {
    let runs = 0;
    const tools = {
      deploy: tool({
        inputSchema: z.object({ service: z.string() }),
        async *execute({ service }) {
          runs++;
          yield { service, status: 'building' as const, key: currentToolCall()?.idempotencyKey };
          yield { service, status: 'rolling out' as const, key: currentToolCall()?.idempotencyKey };
          yield { service, status: 'live' as const, key: currentToolCall()?.idempotencyKey };
        },
      }),
    };
    return { tools, runs: () => runs };
  }

  it('stays a generator: preliminary results pass through, the last one is recorded and replayed once', async () => {
    const { guard } = guardWithEvents();
    const { tools, runs } = progressTools();
    const fenced = fenceTools(tools, { guard, policies: { deploy: idempotent }, runId: 'deploy-run' });
    expect(Object.prototype.toString.call(fenced.deploy.execute)).toBe('[object AsyncGeneratorFunction]');
    const result = streamText({
      model: scriptedModel([
        [{ toolName: 'deploy', input: { service: 'api' } }],
        [{ toolName: 'deploy', input: { service: 'api' } }],
        'deployed',
      ]),
      tools: fenced,
      prompt: 'deploy api',
      stopWhen: stepCountIs(5),
    });
    const toolResults: Array<{ id: string; status: string; preliminary: boolean }> = [];
    let key: unknown;
    for await (const part of result.fullStream) {
      if (part.type !== 'tool-result') continue;
      const output = part.output as { status: string; key: string };
      key ??= output.key;
      expect(output.key).toBe(key);
      toolResults.push({
        id: part.toolCallId,
        status: output.status,
        preliminary: part.preliminary === true,
      });
    }
    expect(runs()).toBe(1);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(toolResults).toEqual([
      { id: 'call-0-0', status: 'building', preliminary: true },
      { id: 'call-0-0', status: 'rolling out', preliminary: true },
      { id: 'call-0-0', status: 'live', preliminary: true },
      { id: 'call-0-0', status: 'live', preliminary: false },
      // The repeat: just the recorded final value.
      { id: 'call-1-0', status: 'live', preliminary: true },
      { id: 'call-1-0', status: 'live', preliminary: false },
    ]);
  });

  it('works with generateText: the output is the last yielded value, first run and repeat', async () => {
    const { guard } = guardWithEvents();
    const { tools, runs } = progressTools();
    const result = await generateText({
      model: scriptedModel([
        [{ toolName: 'deploy', input: { service: 'web' } }],
        [{ toolName: 'deploy', input: { service: 'web' } }],
        'ok',
      ]),
      tools: fenceTools(tools, { guard, policies: { deploy: effectful }, runId: 'r' }),
      prompt: 'deploy web',
      stopWhen: stepCountIs(5),
    });
    expect(runs()).toBe(1);
    const outputs = partsOf(result.steps)
      .filter((part) => part.type === 'tool-result')
      .map((part) => (part.output as { status: string }).status);
    expect(outputs).toEqual(['live', 'live']);
  });

  it('a generator that fails after its effect ends in IndeterminateOutcomeError and is not re-run', async () => {
    const { guard } = guardWithEvents();
    let runs = 0;
    const tools = {
      migrate: tool({
        inputSchema: z.object({ database: z.string() }),
        async *execute() {
          runs++;
          yield 'step 1 applied';
          throw connectionReset();
        },
      }),
    };
    const fenced = fenceTools(tools, { guard, policies: { migrate: effectful }, runId: 'r' });
    const first = streamText({
      model: scriptedModel([[{ toolName: 'migrate', input: { database: 'main' } }], 'x']),
      tools: fenced,
      prompt: 'migrate',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    const types: string[] = [];
    for await (const part of first.fullStream) {
      types.push(part.type === 'tool-result' && part.preliminary ? 'preliminary' : part.type);
    }
    expect(types).toEqual([
      'start',
      'start-step',
      'tool-call',
      'preliminary',
      'tool-error',
      'finish-step',
      'finish',
    ]);
    const error = indeterminateErrorOf({ steps: await first.steps });
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);

    const second = await generateText({
      model: scriptedModel([[{ toolName: 'migrate', input: { database: 'main' } }], 'x']),
      tools: fenced,
      prompt: 'migrate',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    expect(runs).toBe(1);
    expect(indeterminateErrorOf(second)?.key).toBe(error?.key);
  });
});

describe('the AI SDK under test', () => {
  it('is the major the run expects (6 in the workspace, 7 under test/vercel-ai-v7/run.sh)', () => {
    expect(aiMajor).toBe(Number(process.env.TOOLFENCE_EXPECT_AI_MAJOR ?? '6'));
  });
});
