// The demo's scenarios. Each one runs the same agent twice on the same kind of failure: once with
// the tools as they are ("without"), once guarded by toolfence ("with"), and counts what the fake
// provider applied and what the guard reported.
import { randomUUID } from 'node:crypto';
import { Command, MemorySaver } from '@langchain/langgraph';
import { Guard, type GuardEvent, type IdempotencyStore } from '@toolfence/core';
import { SDK_DEFAULT_TOOL_ERROR, stopErrorOf } from '@toolfence/openai-agents';
import { indeterminateErrorOf } from '@toolfence/vercel-ai';
import { ToolMessage } from 'langchain';
import { runAiSdkAgent } from './ai-sdk-agent.js';
import { durableRefund } from './durable-step.js';
import { langchainAgent } from './langchain-agent.js';
import { runMcpHost } from './mcp-agent.js';
import { runOpenAIAgent } from './openai-agents-agent.js';
import { type Script, TENANT, type ToolName } from './policies.js';
import { type EffectKind, type Ledger, never, Provider, sleep } from './provider.js';
import { runReconcilingAgent } from './reconcile-row.js';
import type { WorkerArguments } from './worker-protocol.js';

/** What the guarded run of one tool ended with. */
export interface Counts {
  /** Effects the provider applied (refunds paid, address writes). */
  readonly effects: number;
  /** Repeats answered from the record, the tool body not entered (`tool.deduplicated`). */
  readonly deduplicated: number;
  /** Calls whose outcome is unknown, stopped instead of repeated (keys with `tool.indeterminate`). */
  readonly indeterminate: number;
  /** Idempotent calls given up after too many lost workers (keys with `tool.abandoned`). */
  readonly abandoned: number;
  /** Attempts that took over from a lost worker (`tool.started` with `takeover`). */
  readonly takeovers: number;
  /** Highest fencing token of a takeover (0 without one). */
  readonly takeoverFence: number;
}

/** One line of the table: one tool in one scenario. */
export interface Row {
  readonly id: string;
  readonly title: string;
  readonly agent: 'LangChain' | 'AI SDK' | 'OpenAI Agents' | 'AI+MCP' | 'Mastra' | 'LangGraph';
  readonly tool: ToolName;
  /** Effects applied without toolfence. */
  readonly without: number;
  readonly with: Counts;
  readonly expected: { readonly without: number; readonly with: Counts };
}

/** A guard event as the demo logs it. */
export interface LoggedEvent {
  /** Milliseconds since the scenario's guarded run started. */
  readonly atMs: number;
  /** Which worker saw it: this process, or the child process that was killed. */
  readonly worker: string;
  readonly event: GuardEvent;
}

export interface ScenarioResult {
  readonly id: string;
  readonly rows: Row[];
  readonly events: LoggedEvent[];
  /** Lines worth printing under the table (what the host saw, the takeover fence). */
  readonly notes: string[];
}

/** What a worker process killed mid-step reports back. */
export interface KilledWorker {
  readonly pid: number;
  readonly events: GuardEvent[];
}

/** What the scenarios run on. */
export interface DemoEnvironment {
  readonly store: IdempotencyStore;
  /** A fresh ledger (the provider's books) for one run. */
  newLedger(name: string): Promise<Ledger>;
  /** Lease of every guarded call; short, so a dead worker's call is redelivered quickly. */
  readonly leaseMs: number;
  /**
   * Runs worker A of the "worker dies" scenario in a child process that is SIGKILLed once both
   * calls of its step are inside the provider (Redis, SQLite). Absent: worker A runs in this process
   * and "dies" by never writing to the store again.
   */
  readonly runKilledWorker?: (spec: KilledWorkerSpec) => Promise<KilledWorker>;
}

/** What the child process needs to play worker A. */
export type KilledWorkerSpec = Omit<WorkerArguments, 'store'>;

const zero: Counts = {
  effects: 0,
  deduplicated: 0,
  indeterminate: 0,
  abandoned: 0,
  takeovers: 0,
  takeoverFence: 0,
};
const countsWith = (counts: Partial<Counts>): Counts => ({ ...zero, ...counts });

const effectOf: Record<ToolName, EffectKind | undefined> = {
  lookup_order: undefined,
  update_address: 'address',
  refund_payment: 'refund',
};

/** A recorder of the guard events of one guarded run. */
class EventLog {
  readonly entries: LoggedEvent[] = [];
  private readonly startedMs = Date.now();

  listener(worker: string, alive: () => boolean = () => true) {
    return (event: GuardEvent) => {
      // A dead worker reports nothing: its events after the "death" are dropped.
      if (alive()) this.entries.push({ atMs: event.timeMs - this.startedMs, worker, event });
    };
  }

  add(worker: string, events: GuardEvent[]): void {
    for (const event of events) this.entries.push({ atMs: event.timeMs - this.startedMs, worker, event });
  }

  counts(tool: ToolName, effects: number): Counts {
    const of = (type: GuardEvent['type']) =>
      this.entries.map((entry) => entry.event).filter((event) => event.tool === tool && event.type === type);
    const keys = (type: GuardEvent['type']) => new Set(of(type).map((event) => event.key)).size;
    // A key whose unknown outcome the policy's probe settled is not left for a person.
    const reconciled = new Set(
      of('tool.reconciled')
        .filter((event) => event.reconcile?.applied === 'resolved')
        .map((event) => event.key),
    );
    const unsettled = new Set(
      of('tool.indeterminate')
        .map((event) => event.key)
        .filter((key) => !reconciled.has(key)),
    );
    const takeovers = of('tool.started').filter((event) => event.takeover === true);
    return {
      effects,
      deduplicated: of('tool.deduplicated').length,
      indeterminate: unsettled.size,
      abandoned: keys('tool.abandoned'),
      takeovers: takeovers.length,
      takeoverFence: Math.max(0, ...takeovers.map((event) => event.fence)),
    };
  }

  sorted(): LoggedEvent[] {
    return [...this.entries].sort((a, b) => a.atMs - b.atMs);
  }
}

interface Mode {
  readonly guarded: boolean;
  readonly runId: string;
  readonly ledger: Ledger;
  readonly log: EventLog;
  guard(worker?: string, store?: IdempotencyStore, alive?: () => boolean): Guard | undefined;
}

async function mode(env: DemoEnvironment, scenario: string, guarded: boolean): Promise<Mode> {
  const runId = `${scenario}-${guarded ? 'with' : 'without'}-${randomUUID().slice(0, 8)}`;
  const log = new EventLog();
  return {
    guarded,
    runId,
    ledger: await env.newLedger(runId),
    log,
    guard: (worker = 'worker', store = env.store, alive) =>
      guarded
        ? new Guard({
            store,
            tenant: TENANT,
            defaults: { leaseMs: env.leaseMs },
            onEvent: log.listener(worker, alive),
          })
        : undefined,
  };
}

/** Run a scenario without and with toolfence and build its rows. */
async function compare(
  env: DemoEnvironment,
  spec: {
    id: string;
    title: string;
    agent: Row['agent'];
    tools: ReadonlyArray<{ tool: ToolName; without: number; with: Partial<Counts>; title?: string }>;
    run: (mode: Mode) => Promise<string | undefined>;
  },
): Promise<ScenarioResult> {
  const without = await mode(env, spec.id, false);
  const noteWithout = await spec.run(without);
  const withToolfence = await mode(env, spec.id, true);
  const noteWith = await spec.run(withToolfence);
  const rows: Row[] = [];
  for (const [index, entry] of spec.tools.entries()) {
    const effect = effectOf[entry.tool] as EffectKind;
    rows.push({
      id: spec.tools.length > 1 ? `${spec.id}${'abcdef'[index]}` : spec.id,
      title: entry.title ?? spec.title,
      agent: spec.agent,
      tool: entry.tool,
      without: await without.ledger.count(effect),
      with: withToolfence.log.counts(entry.tool, await withToolfence.ledger.count(effect)),
      expected: { without: entry.without, with: countsWith(entry.with) },
    });
  }
  return {
    id: spec.id,
    rows,
    events: withToolfence.log.sorted(),
    notes: [noteWithout, noteWith].filter((note) => note !== undefined).map((note) => `${spec.id}: ${note}`),
  };
}

const user = { role: 'user', content: 'Order A-100 arrived damaged. Refund 22.50 EUR.' };
const lookup = { name: 'lookup_order', args: { orderId: 'A-100' }, id: 'call_lookup' } as const;
const refund = (id: string) =>
  ({ name: 'refund_payment', args: { orderId: 'A-100', amountCents: 2250 }, id }) as const;
const address = (id: string) =>
  ({ name: 'update_address', args: { orderId: 'A-100', address: '12 Analytical Row, London' }, id }) as const;

async function invokeLangchain(provider: Provider, script: Script, m: Mode) {
  const agent = langchainAgent(provider, script, m.guard());
  return agent.invoke({ messages: [user] }, { configurable: { thread_id: m.runId } });
}

/** The host's retry loop: a run that failed (threw, or a tool failed) is run again, up to `times`. */
async function hostRetries(times: number, attempt: () => Promise<boolean>): Promise<string[]> {
  const outcomes: string[] = [];
  for (let run = 1; run <= times; run++) {
    try {
      if (await attempt()) {
        outcomes.push('ok');
        break;
      }
      outcomes.push('tool error');
    } catch (error) {
      outcomes.push((error as Error).name);
    }
  }
  return outcomes;
}

/** `['a', 'a', 'b']` -> `'2x a, then b'`. */
function summarize(outcomes: string[]): string {
  const groups: [string, number][] = [];
  for (const outcome of outcomes) {
    const last = groups.at(-1);
    if (last !== undefined && last[0] === outcome) last[1]++;
    else groups.push([outcome, 1]);
  }
  return groups.map(([outcome, times]) => (times > 1 ? `${times}x ${outcome}` : outcome)).join(', then ');
}

// --- 1. the model asks for the same refund twice in one step -------------------------------------

const doubleScript: Script = [
  [lookup],
  [refund('call_refund_1'), refund('call_refund_2')],
  'Refunded 22.50 EUR.',
];

function sameRefundTwice(env: DemoEnvironment, agent: Row['agent'], id: string) {
  return compare(env, {
    id,
    title: 'model sends the same refund twice in a step',
    agent,
    tools: [{ tool: 'refund_payment', without: 2, with: { effects: 1, deduplicated: 1 } }],
    run: async (m) => {
      const provider = new Provider(m.ledger);
      if (agent === 'LangChain') await invokeLangchain(provider, doubleScript, m);
      else if (agent === 'OpenAI Agents') await runOpenAIAgent(provider, doubleScript, m.runId, m.guard());
      else await runAiSdkAgent(provider, doubleScript, m.runId, m.guard());
      return undefined;
    },
  });
}

// --- 2. the refund lands, its response is lost (ETIMEDOUT), the host retries the run -------------

const HOST_RETRIES = 3;
const lostScript: Script = [[lookup], [refund('call_refund')], 'Refund sent.'];

function lostResponse(env: DemoEnvironment, agent: Row['agent'], id: string) {
  return compare(env, {
    id,
    title: `refund lands, reply lost; host retries ${HOST_RETRIES}x`,
    agent,
    tools: [{ tool: 'refund_payment', without: 3, with: { effects: 1, indeterminate: 1 } }],
    run: async (m) => {
      // One provider for all runs: its network loses the first two answers.
      const provider = new Provider(m.ledger);
      provider.faults.lostRefundResponses = 2;
      const outcomes = await hostRetries(HOST_RETRIES, async () => {
        if (agent === 'LangChain') {
          const result = await invokeLangchain(provider, lostScript, m);
          return !result.messages.some(
            (message) => ToolMessage.isInstance(message) && message.status === 'error',
          );
        }
        if (agent === 'OpenAI Agents') {
          // Guarded, the unknown outcome rejects run() (a ToolCallError around it): the host sees why.
          const result = await runOpenAIAgent(provider, lostScript, m.runId, m.guard()).catch((error) => {
            throw stopErrorOf(error) ?? error;
          });
          // Unguarded, the SDK's default errorFunction turned the lost reply into this text.
          return !result.newItems.some(
            (item) => item.type === 'tool_call_output_item' && item.output === SDK_DEFAULT_TOOL_ERROR,
          );
        }
        const result = await runAiSdkAgent(provider, lostScript, m.runId, m.guard());
        // Guarded, the run stopped at the unknown outcome (stopOnIndeterminate): the host sees why.
        const stopped = indeterminateErrorOf(result);
        if (stopped !== undefined) throw stopped;
        return !result.steps.some((step) => step.content.some((part) => part.type === 'tool-error'));
      });
      return `${m.guarded ? 'with' : 'without'} toolfence (reply lost: ETIMEDOUT) the host ran the job ${outcomes.length}x: ${summarize(outcomes)}`;
    },
  });
}

// --- 4d. the same lost reply, with a reconcile probe: the provider is asked, no person -----------

function lostResponseReconciled(env: DemoEnvironment, id: string) {
  return compare(env, {
    id,
    title: 'reply lost; the probe asks the provider',
    agent: 'AI SDK',
    tools: [{ tool: 'refund_payment', without: HOST_RETRIES, with: { effects: 1 } }],
    run: async (m) => {
      const provider = new Provider(m.ledger);
      provider.faults.lostRefundResponses = 2;
      const outcomes = await hostRetries(HOST_RETRIES, async () => {
        const result = await runReconcilingAgent(provider, lostScript, m.runId, m.guard());
        const stopped = indeterminateErrorOf(result);
        if (stopped !== undefined) throw stopped;
        return !result.steps.some((step) => step.content.some((part) => part.type === 'tool-error'));
      });
      const reconciled = m.log.entries.find((entry) => entry.event.type === 'tool.reconciled')?.event;
      const probe =
        reconciled === undefined
          ? ''
          : `; the probe said ${reconciled.reconcile?.verdict} (${reconciled.reconcile?.detail}), settled by reconcile`;
      return `${m.guarded ? 'with' : 'without'} toolfence (reply lost: ETIMEDOUT) the host ran the job ${outcomes.length}x: ${summarize(outcomes)}${probe}`;
    },
  });
}

// --- 3. a worker dies mid-step; the step is redelivered after the lease --------------------------

const stepScript: Script = [
  [lookup],
  [address('call_address'), refund('call_refund')],
  'Refunded and re-shipped.',
];

function workerDies(env: DemoEnvironment, id: string) {
  const killed = env.runKilledWorker !== undefined;
  return compare(env, {
    id,
    title: killed ? 'worker process SIGKILLed mid-step' : 'worker dies mid-step, step redelivered',
    agent: 'AI SDK',
    tools: [
      { tool: 'refund_payment', without: 2, with: { effects: 1, indeterminate: 1 } },
      {
        tool: 'update_address',
        without: 2,
        with: { effects: 2, takeovers: 1, takeoverFence: 2 },
        title: '  …the same step: the address upsert',
      },
    ],
    run: async (m) => {
      let workerA: string;
      if (env.runKilledWorker !== undefined) {
        const child = await env.runKilledWorker({
          runId: m.runId,
          ledger: m.runId,
          guarded: m.guarded,
          leaseMs: env.leaseMs,
          script: stepScript,
        });
        m.log.add(`pid ${child.pid}`, child.events);
        workerA = `worker pid ${child.pid} was SIGKILLed inside both calls`;
      } else {
        await dyingWorker(env, m);
        workerA = 'worker A died inside both calls';
      }
      // The queue redelivers the job to worker B: the agent replays the step with the same calls.
      // Guarded, B's calls find A's claims, wait for A's lease to run out, then decide per kind.
      await runAiSdkAgent(new Provider(m.ledger), stepScript, m.runId, m.guard('worker B'));
      if (!m.guarded) return undefined;
      const fence = m.log.counts('update_address', 0).takeoverFence;
      return `${workerA}; worker B took update_address over with fence ${fence}, refund_payment indeterminate`;
    },
  });
}

/**
 * Worker A in this process: runs the agent until both calls of the step have applied their
 * effect, then "dies": its calls never return and its guard never reaches the store again (no
 * renewal, no result, no release), as after a crash.
 */
async function dyingWorker(env: DemoEnvironment, m: Mode): Promise<void> {
  let dead = false;
  const deadStore = new Proxy(env.store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (dead ? never() : value.apply(target, args));
    },
  });
  const provider = new Provider(m.ledger);
  let inside = 0;
  let bothInside!: () => void;
  const crashed = new Promise<void>((resolve) => {
    bothInside = resolve;
  });
  provider.faults.dieAfterEffect = () => {
    if (++inside === 2) {
      dead = true;
      bothInside();
    }
    return never();
  };
  // Never settles: worker A is gone.
  void runAiSdkAgent(
    provider,
    stepScript,
    m.runId,
    m.guard('worker A', deadStore, () => !dead),
  );
  await crashed;
}

// --- 4. an interrupt() beside the refund; the resume re-runs the step -----------------------------

const approvalScript: Script = [
  [
    refund('call_refund'),
    { name: 'ask_approval', args: { question: 'Also ship a replacement?' }, id: 'call_ask' },
  ],
  'Refunded; the replacement is on its way.',
];

function interruptResume(env: DemoEnvironment, id: string) {
  return compare(env, {
    id,
    title: 'interrupt() + resume re-runs the step',
    agent: 'LangChain',
    tools: [{ tool: 'refund_payment', without: 2, with: { effects: 1, deduplicated: 1 } }],
    run: async (m) => {
      const agent = langchainAgent(new Provider(m.ledger), approvalScript, m.guard());
      const config = { configurable: { thread_id: m.runId } };
      const paused = await agent.invoke({ messages: [user] }, config);
      if (paused.__interrupt__ === undefined) throw new Error('the agent did not stop at the interrupt');
      // The supervisor takes a moment; the refund of the first pass has finished by then.
      for (let waited = 0; (await m.ledger.count('refund')) < 1; waited += 10) {
        if (waited > 5000) throw new Error('the first pass never refunded');
        await sleep(10);
      }
      await agent.invoke(new Command({ resume: 'yes' }), config);
      return undefined;
    },
  });
}

// --- 7. the refund is a tool of an MCP server; the step is lost, a new host retries it ----------

const mcpScript: Script = [[refund('call_refund')], 'Refunded 22.50 EUR.'];

function mcpHostRetries(env: DemoEnvironment, id: string) {
  return compare(env, {
    id,
    title: 'MCP tool: step lost after refund, retried',
    agent: 'AI+MCP',
    tools: [{ tool: 'refund_payment', without: 2, with: { effects: 1, deduplicated: 1 } }],
    run: async (m) => {
      // One provider behind every replica of the server. The first host's model API fails after
      // the refund; the host runs the job again in a new process (an empty client-side store).
      const provider = new Provider(m.ledger);
      const serverGuard = m.guard('mcp server');
      let hosts = 0;
      const outcomes = await hostRetries(2, async () => {
        hosts += 1;
        await runMcpHost(provider, mcpScript, m.runId, serverGuard, hosts === 1);
        return true;
      });
      if (outcomes.length !== 2) throw new Error(`the MCP host ran ${outcomes.length}x, not twice`);
      return m.guarded
        ? 'the first host failed after the refund (model API 503); the second sent the same key in _meta and the MCP server replayed the refund'
        : undefined;
    },
  });
}

/** Every scenario, in the order the table shows them. */
// --- 8. a durable step: two workers resume one LangGraph thread at once ----------------------

function durableStepTwins(env: DemoEnvironment, id: string) {
  return compare(env, {
    id,
    title: 'durable task(): two workers resume at once',
    agent: 'LangGraph',
    tools: [{ tool: 'refund_payment', without: 2, with: { effects: 1, deduplicated: 1 } }],
    run: async (m) => {
      // One checkpointer (the thread's state) and one toolfence store; a guard per worker.
      const checkpointer = new MemorySaver();
      const provider = new Provider(m.ledger);
      const workerA = durableRefund(provider, m.guard('worker A'), checkpointer);
      const workerB = durableRefund(provider, m.guard('worker B'), checkpointer);
      const config = { configurable: { thread_id: m.runId } };
      await workerA.invoke({ orderId: 'A-100', amountCents: 2250 }, config);
      const approve = new Command({ resume: 'yes' });
      await Promise.all([workerA.invoke(approve, config), workerB.invoke(approve, config)]);
      return undefined;
    },
  });
}

export async function runScenarios(env: DemoEnvironment): Promise<ScenarioResult[]> {
  return [
    await sameRefundTwice(env, 'LangChain', '1'),
    await sameRefundTwice(env, 'AI SDK', '2'),
    await sameRefundTwice(env, 'OpenAI Agents', '2b'),
    await lostResponse(env, 'LangChain', '3'),
    await lostResponse(env, 'AI SDK', '4'),
    await lostResponse(env, 'OpenAI Agents', '4b'),
    await lostResponseReconciled(env, '4d'),
    await workerDies(env, '5'),
    await interruptResume(env, '6'),
    await mcpHostRetries(env, '7'),
    await durableStepTwins(env, '8'),
  ];
}

/** The counts of a row that differ from what was expected (empty when all are right). */
export function mismatches(row: Row): string[] {
  const wrong: string[] = [];
  for (const field of Object.keys(zero) as (keyof Counts)[]) {
    if (row.with[field] !== row.expected.with[field]) {
      wrong.push(`${field} ${row.with[field]} (expected ${row.expected.with[field]})`);
    }
  }
  return wrong;
}
