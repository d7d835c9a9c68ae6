// Where a guarded call's span sits: under the AI SDK's own `ai.toolCall` span when its telemetry
// is on, under whatever span the application made active, and above the body's own spans; and
// what the telemetry option costs when nothing is registered, or when the telemetry is broken.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AIMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import type { MeterProvider, Span, SpanOptions, TracerProvider } from '@opentelemetry/api';
import { Guard, type GuardEvent, Idempotency, MemoryStore, PolicyError } from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { fenceTools } from '@toolfence/vercel-ai';
import { generateText, tool } from 'ai';
import { createAgent, fakeModel } from 'langchain';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../support/scripted-model.js';
import { AsyncLocalStorageContextManager, api, Telemetry } from './harness.js';

let telemetry: Telemetry;

beforeAll(() => {
  // What an application's SDK setup (NodeSDK, NodeTracerProvider.register) does.
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterAll(() => {
  api.context.disable();
});

afterEach(async () => {
  await telemetry?.shutdown();
});

function refundTools() {
  const refunds: string[] = [];
  const tracer = () => telemetry.tracerProvider.getTracer('payments');
  const tools = {
    refundOrder: tool({
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => {
        // The body's own span (a payments client's, say).
        tracer().startSpan('POST /refunds').end();
        refunds.push(orderId);
        return `refunded ${orderId}`;
      },
    }),
  };
  return { tools, refunds };
}

describe('telemetry: the span nests where the call runs', () => {
  it("under the AI SDK's ai.toolCall span (experimental_telemetry), with the body's spans under it", async () => {
    telemetry = new Telemetry();
    const guard = new Guard({
      store: new MemoryStore(),
      telemetry: { tracerProvider: telemetry.tracerProvider },
    });
    const { tools, refunds } = refundTools();
    const fenced = fenceTools(tools, {
      guard,
      policies: { refundOrder: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
      runId: 'conversation-9',
    });
    const run = () =>
      generateText({
        model: scriptedModel([
          [{ toolName: 'refundOrder', input: { orderId: 'A-1' }, toolCallId: 'call_1' }],
          'ok',
        ]),
        tools: fenced,
        prompt: 'refund A-1',
        experimental_telemetry: { isEnabled: true, tracer: telemetry.tracerProvider.getTracer('ai') },
      });
    await run();
    await run(); // the host retries the whole step: replayed
    expect(refunds).toEqual(['A-1']);

    const spans = telemetry.spans.getFinishedSpans();
    const sdkToolSpans = spans.filter((span) => span.name === 'ai.toolCall');
    const guarded = telemetry.toolSpans();
    expect(sdkToolSpans).toHaveLength(2);
    expect(guarded.map((span) => span.attributes['toolfence.outcome'])).toEqual(['executed', 'replayed']);
    for (const [index, span] of guarded.entries()) {
      const parent = sdkToolSpans[index]!;
      expect(span.name).toBe('execute_tool refundOrder');
      expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(span.attributes['gen_ai.tool.call.id']).toBe(parent.attributes['ai.toolCall.id']);
      expect(span.attributes['gen_ai.conversation.id']).toBe('conversation-9');
    }
    const bodySpans = spans.filter((span) => span.name === 'POST /refunds');
    expect(bodySpans).toHaveLength(1);
    expect(bodySpans[0]!.parentSpanContext?.spanId).toBe(guarded[0]!.spanContext().spanId);
  });

  it('a LangChain createAgent run: under the span active around agent.invoke (LangChain makes none)', async () => {
    telemetry = new Telemetry();
    const guard = new Guard({
      store: new MemoryStore(),
      telemetry: { tracerProvider: telemetry.tracerProvider },
    });
    const refundOrder = langchainTool(async ({ orderId }: { orderId: string }) => `refunded ${orderId}`, {
      name: 'refund_order',
      description: 'Refund an order',
      schema: z.object({ orderId: z.string() }),
    });
    const agent = createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1' }, id: 'call_a' }])
        .respond(new AIMessage('Refunded.')),
      tools: [refundOrder],
      middleware: [
        toolfenceMiddleware({ guard, policies: { refund_order: { kind: Idempotency.EFFECTFUL } } }),
      ],
    });
    const app = telemetry.tracerProvider.getTracer('app');
    await app.startActiveSpan('POST /tickets/4711', async (request) => {
      await agent.invoke(
        { messages: [{ role: 'user', content: 'refund A-1' }] },
        { configurable: { thread_id: 'ticket-4711' } },
      );
      request.end();
    });
    const [span] = telemetry.toolSpans();
    const request = telemetry.spans.getFinishedSpans().find((each) => each.name === 'POST /tickets/4711')!;
    expect(span!.name).toBe('execute_tool refund_order');
    expect(span!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(span!.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_a',
      'gen_ai.conversation.id': 'ticket-4711',
      'toolfence.outcome': 'executed',
    });
  });

  it('under the span the application made active', async () => {
    telemetry = new Telemetry();
    const guard = new Guard({
      store: new MemoryStore(),
      telemetry: { tracerProvider: telemetry.tracerProvider },
    });
    const app = telemetry.tracerProvider.getTracer('app');
    await app.startActiveSpan('POST /tickets/4711', async (request) => {
      await guard.run(
        { tool: 'send_email', arguments: { to: 'a' }, runId: 'r', policy: { kind: Idempotency.EFFECTFUL } },
        () => 'sent',
      );
      request.end();
    });
    const [span] = telemetry.toolSpans();
    const request = telemetry.spans.getFinishedSpans().find((each) => each.name === 'POST /tickets/4711')!;
    expect(span!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
  });
});

describe('telemetry: what the option costs and risks', () => {
  it('the API with no SDK registered: the call and its events are as without the option', async () => {
    const events: GuardEvent[] = [];
    const guard = new Guard({
      store: new MemoryStore(),
      onEvent: (event) => events.push(event),
      telemetry: {
        tracerProvider: api.trace.getTracerProvider(),
        meterProvider: api.metrics.getMeterProvider(),
      },
    });
    const call = {
      tool: 'refund',
      arguments: { orderId: 'A' },
      runId: 'r',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    await expect(guard.run(call, () => 'done')).resolves.toBe('done');
    await expect(guard.run(call, () => 'again')).resolves.toBe('done');
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('metrics without a tracer: calls counted, overhead and waits timed, no span made', async () => {
    telemetry = new Telemetry();
    const guard = new Guard({
      store: new MemoryStore(),
      telemetry: { meterProvider: telemetry.meterProvider },
    });
    const call = {
      tool: 'refund',
      arguments: { orderId: 'A' },
      runId: 'r',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const leader = guard.run(call, async () => {
      await held;
      return 'done';
    });
    const follower = guard.run(call, () => 'never');
    await new Promise((resolve) => setTimeout(resolve, 60));
    release();
    await expect(Promise.all([leader, follower])).resolves.toEqual(['done', 'done']);
    const points = await telemetry.points();
    const of = (metric: string, outcome: string) =>
      points.filter((point) => point.metric === metric && point.attributes['toolfence.outcome'] === outcome);
    expect(of('toolfence.guard.calls', 'executed')[0]?.value).toBe(1);
    expect(of('toolfence.guard.calls', 'waited')[0]?.value).toBe(1);
    expect(of('toolfence.guard.wait.duration', 'waited')[0]?.sum).toBeGreaterThanOrEqual(0.05);
    expect(of('toolfence.guard.wait.duration', 'executed')).toEqual([]);
    // The leader's overhead leaves out its body's 60 ms.
    expect(of('toolfence.guard.overhead.duration', 'executed')[0]?.sum).toBeLessThan(0.05);
    expect(telemetry.spans.getFinishedSpans()).toEqual([]);
  });

  it('a meter or tracer that throws never changes the answer', async () => {
    const throwing = () => {
      throw new Error('exporter down');
    };
    const instrument = { add: throwing, record: throwing };
    const meterProvider = {
      getMeter: () => ({
        createCounter: () => instrument,
        createUpDownCounter: () => instrument,
        createHistogram: () => instrument,
      }),
    } as unknown as MeterProvider;
    telemetry = new Telemetry();
    const tracerProvider = {
      getTracer: () => {
        const tracer = telemetry.tracerProvider.getTracer('x');
        return {
          startActiveSpan: (name: string, options: SpanOptions, fn: (span: Span) => unknown) =>
            tracer.startActiveSpan(name, options, (span) =>
              fn(Object.assign(Object.create(span), { end: throwing, setAttributes: throwing })),
            ),
        };
      },
    } as unknown as TracerProvider;
    const guard = new Guard({ store: new MemoryStore(), telemetry: { tracerProvider, meterProvider } });
    const call = {
      tool: 'refund',
      arguments: { orderId: 'A' },
      runId: 'r',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    let runs = 0;
    await expect(guard.run(call, () => ++runs)).resolves.toBe(1);
    await expect(guard.run(call, () => ++runs)).resolves.toBe(1);
    expect(runs).toBe(1);
    // A tracer that cannot even start a span: the call runs without one.
    const broken = new Guard({
      store: new MemoryStore(),
      telemetry: {
        tracerProvider: { getTracer: () => ({ startActiveSpan: throwing }) } as unknown as TracerProvider,
      },
    });
    await expect(broken.run(call, () => 'ran')).resolves.toBe('ran');
  });

  it('a telemetry option that cannot trace or meter anything is refused with a PolicyError', () => {
    const store = new MemoryStore();
    const refused = [{}, { tracerProvider: {} }, { meterProvider: { getMeter: 'no' } }, null, 'otel'];
    for (const telemetryOption of refused) {
      expect(
        () => new Guard({ store, telemetry: telemetryOption as never }),
        JSON.stringify(telemetryOption),
      ).toThrow(PolicyError);
    }
    expect(() => new Guard({ store, telemetry: undefined })).not.toThrow();
  });

  it('no source file loads @opentelemetry/api: every import of it is a type import', () => {
    const root = join(import.meta.dirname, '..', '..', 'packages');
    const offenders: string[] = [];
    let typeImports = 0;
    const walk = (directory: string): void => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        const path = join(directory, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
        } else if (entry.name.endsWith('.ts')) {
          for (const statement of readFileSync(path, 'utf8').match(
            /import[^;]*?['"]@opentelemetry\/[^'"]+['"]/g,
          ) ?? []) {
            if (/^import\s+type\s/.test(statement)) typeImports++;
            else offenders.push(`${path}: ${statement}`);
          }
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
    expect(typeImports).toBeGreaterThanOrEqual(3);
  });
});
