// The checks of the fault suite, over the whole recorded history of one run: the effect ledger
// (every body execution), the store's final records, the guard events the workers reported and
// every answer every caller got. Pure: no I/O, so checks.test.ts can feed it broken histories.
import type { IdempotencyRecord } from '@toolfence/core';
import {
  type Answer,
  type AnswerKind,
  EFFECTFUL_TOOL,
  type EventMessage,
  IDEMPOTENT_TOOL,
  type LedgerEntry,
  type ToolName,
  type ToolValue,
} from './protocol.js';

/** Answers that end a call. `pending` and `unavailable` are retried until one of these comes. */
export const TERMINAL_ANSWERS: ReadonlySet<AnswerKind> = new Set([
  'completed',
  'deduplicated',
  'indeterminate',
  'abandoned',
]);

export interface HistoryCall {
  readonly id: string;
  /** The idempotency key of the call. */
  readonly key: string;
  /** Every answer a caller got for this call, one per delivery that was answered. */
  readonly answers: readonly Answer[];
}

export interface History {
  readonly maxAttempts: number;
  /** Every key of the plan, with its tool. */
  readonly keys: ReadonlyMap<string, ToolName>;
  readonly calls: readonly HistoryCall[];
  readonly ledger: readonly LedgerEntry[];
  /** The store's record of each key at the end (null: none). */
  readonly records: ReadonlyMap<string, IdempotencyRecord | null>;
  readonly events: readonly EventMessage[];
  /** execId → true when the body returned a value, false when it threw. Absent: never reported. */
  readonly bodyEnds: ReadonlyMap<string, boolean>;
  /** Worker processes the coordinator SIGKILLed (their last reports may be missing). */
  readonly killedPids: ReadonlySet<number>;
  /** Deliveries sent to a live worker that never answered. */
  readonly hungDeliveries: number;
}

export interface HistoryChecks {
  /** Body executions in the ledger. */
  readonly executions: number;
  /**
   * Executions beyond what the kind allows: EFFECTFUL past the first; IDEMPOTENT past
   * `maxAttempts`, or a second execution under one fence.
   */
  readonly duplicates: number;
  /** Calls whose callers did not get a terminal answer the store agrees with, plus hung deliveries. */
  readonly lost: number;
  /** `tool.stale_result` events of superseded executions: late results the fence rejected. */
  readonly staleFenced: number;
  readonly detail: {
    readonly effectfulKeysOverrun: number;
    readonly idempotentKeysOverrun: number;
    readonly repeatedFences: number;
    readonly attemptNotFence: number;
    /** Completed records whose result is not the one of the highest fence, or names no execution. */
    readonly wrongRecords: number;
    readonly unanswered: number;
    readonly misanswered: number;
    readonly hungDeliveries: number;
    /** Executions whose fence was superseded by a later attempt of the same key. */
    readonly supersededExecutions: number;
    /** ...of which the body returned a value (a late result that had to be fenced). */
    readonly supersededReturned: number;
    /** ...of which the guard reported `tool.completed` with `recorded: true`: a stale result got in. */
    readonly supersededRecorded: number;
    /** Superseded executions that returned, on a worker never killed, with no event about their result. */
    readonly supersededUnaccounted: number;
    /** `tool.stale_result` for an execution that WAS the current holder (a spurious rejection). */
    readonly staleOnCurrent: number;
    /** Value answers from an execution whose result could not be recorded (store unreachable). */
    readonly unrecordedAnswers: number;
    /** Records still in progress at the end (a holder died, and no later call came). */
    readonly unsettledKeys: number;
    /**
     * EFFECTFUL keys recorded indeterminate whose body never ran (a holder died or stalled
     * between its claim and its body, or a claim ran twice): safe, but an operator must look.
     */
    readonly indeterminateUnexecuted: number;
  };
  /** The first violations, in words. */
  readonly violations: readonly string[];
}

function decodeValue(outcome: string | undefined): ToolValue | undefined {
  if (outcome === undefined || outcome === '') return undefined;
  try {
    return JSON.parse(outcome) as ToolValue;
  } catch {
    return undefined;
  }
}

const fenceKey = (key: string, fence: number) => `${key}#${fence}`;

export function checkHistory(history: History): HistoryChecks {
  const violations: string[] = [];
  const violation = (text: string) => {
    if (violations.length < 25) violations.push(text);
  };

  // ---- executions per key ----
  const byKey = new Map<string, LedgerEntry[]>();
  const byExecId = new Map<string, LedgerEntry>();
  for (const entry of history.ledger) {
    const list = byKey.get(entry.key) ?? [];
    list.push(entry);
    byKey.set(entry.key, list);
    byExecId.set(entry.execId, entry);
  }

  let duplicates = 0;
  let effectfulKeysOverrun = 0;
  let idempotentKeysOverrun = 0;
  let repeatedFences = 0;
  let attemptNotFence = 0;
  for (const [key, entries] of byKey) {
    const tool = history.keys.get(key) ?? entries[0]?.tool;
    const fences = new Set(entries.map((entry) => entry.fence));
    for (const entry of entries) {
      if (entry.attempt !== entry.fence) {
        attemptNotFence += 1;
        violation(
          `key ${key.slice(0, 12)}: execution ${entry.execId} has attempt ${entry.attempt} under fence ${entry.fence}`,
        );
      }
    }
    if (tool === EFFECTFUL_TOOL) {
      if (entries.length > 1) {
        effectfulKeysOverrun += 1;
        duplicates += entries.length - 1;
        violation(
          `EFFECTFUL key ${key.slice(0, 12)} ran ${entries.length} times: ${entries
            .map((entry) => `${entry.execId}@fence${entry.fence}`)
            .join(', ')}`,
        );
      }
    } else if (tool === IDEMPOTENT_TOOL) {
      const repeated = entries.length - fences.size;
      const beyond = Math.max(0, fences.size - history.maxAttempts);
      const fenceTooHigh = [...fences].some((fence) => fence > history.maxAttempts);
      if (repeated > 0) {
        repeatedFences += repeated;
        violation(`IDEMPOTENT key ${key.slice(0, 12)}: ${repeated} execution(s) repeated a fence`);
      }
      if (beyond > 0 || fenceTooHigh) {
        idempotentKeysOverrun += 1;
        violation(
          `IDEMPOTENT key ${key.slice(0, 12)} ran under fences ${[...fences].join(',')} (maxAttempts ${history.maxAttempts})`,
        );
      }
      duplicates += repeated + beyond;
    } else {
      violation(`ledger names key ${key.slice(0, 12)} that is not in the plan`);
    }
  }

  // ---- events per (key, fence) ----
  const staleEvents = new Map<string, number>();
  const recordedCompletions = new Map<string, number>();
  const unrecordedCompletions = new Map<string, number>();
  for (const event of history.events) {
    const id = fenceKey(event.key, event.fence);
    if (event.type === 'tool.stale_result') staleEvents.set(id, (staleEvents.get(id) ?? 0) + 1);
    if (event.type === 'tool.completed') {
      const map = event.recorded === false ? unrecordedCompletions : recordedCompletions;
      map.set(id, (map.get(id) ?? 0) + 1);
    }
  }

  // ---- the recorded result of each key ----
  let wrongRecords = 0;
  let unsettledKeys = 0;
  let indeterminateUnexecuted = 0;
  const highestFence = new Map<string, number>();
  for (const [key, entries] of byKey) {
    highestFence.set(key, Math.max(...entries.map((entry) => entry.fence)));
  }
  for (const [key, record] of history.records) {
    const maxLedgerFence = highestFence.get(key) ?? 0;
    if (record === null) {
      if (maxLedgerFence > 0) {
        wrongRecords += 1;
        violation(`key ${key.slice(0, 12)} ran (fence ${maxLedgerFence}) but has no record`);
      }
      continue;
    }
    highestFence.set(key, Math.max(maxLedgerFence, record.fence));
    if (record.state === 'in_progress') unsettledKeys += 1;
    if (record.state === 'indeterminate' && maxLedgerFence === 0) indeterminateUnexecuted += 1;
    if (record.state !== 'completed') continue;
    const value = decodeValue(record.outcome);
    const execution = value === undefined ? undefined : byExecId.get(value.execId);
    if (
      value === undefined ||
      execution === undefined ||
      execution.key !== key ||
      execution.fence !== record.fence ||
      record.fence !== maxLedgerFence
    ) {
      wrongRecords += 1;
      violation(
        `key ${key.slice(0, 12)}: recorded result ${record.outcome} at fence ${record.fence}, ` +
          `highest executed fence ${maxLedgerFence}`,
      );
    }
  }

  // ---- every caller's answer ----
  let unanswered = 0;
  let misanswered = 0;
  let unrecordedAnswers = 0;
  for (const call of history.calls) {
    const terminal = call.answers.filter((answer) => TERMINAL_ANSWERS.has(answer.kind));
    if (terminal.length === 0) {
      unanswered += 1;
      violation(
        `call ${call.id} got no terminal answer (${call.answers.map((a) => a.kind).join(',') || 'none'})`,
      );
      continue;
    }
    const record = history.records.get(call.key) ?? null;
    const tool = history.keys.get(call.key);
    let wrong = false;
    for (const answer of terminal) {
      const fault = judgeAnswer(answer, call.key, tool, record, byExecId, unrecordedCompletions);
      if (fault === 'unrecorded') unrecordedAnswers += 1;
      else if (fault !== undefined) {
        wrong = true;
        violation(`call ${call.id}: ${fault}`);
      }
    }
    if (wrong) misanswered += 1;
  }

  // ---- superseded executions: their results must have been fenced ----
  let supersededExecutions = 0;
  let supersededReturned = 0;
  let supersededRecorded = 0;
  let supersededUnaccounted = 0;
  let staleFenced = 0;
  let staleOnCurrent = 0;
  for (const entry of history.ledger) {
    const top = highestFence.get(entry.key) ?? entry.fence;
    if (entry.fence >= top) continue;
    supersededExecutions += 1;
    const id = fenceKey(entry.key, entry.fence);
    if ((recordedCompletions.get(id) ?? 0) > 0) {
      supersededRecorded += 1;
      violation(`key ${entry.key.slice(0, 12)}: superseded fence ${entry.fence} had its result recorded`);
    }
    if (history.bodyEnds.get(entry.execId) === true) {
      supersededReturned += 1;
      const accounted =
        (staleEvents.get(id) ?? 0) > 0 ||
        (unrecordedCompletions.get(id) ?? 0) > 0 ||
        (recordedCompletions.get(id) ?? 0) > 0 ||
        history.killedPids.has(entry.pid);
      if (!accounted) supersededUnaccounted += 1;
    }
  }
  for (const [id, count] of staleEvents) {
    const [key, fenceText] = id.split('#') as [string, string];
    const top = highestFence.get(key) ?? 0;
    if (Number(fenceText) < top) staleFenced += count;
    else staleOnCurrent += count;
  }

  const lost = unanswered + misanswered + history.hungDeliveries;
  return {
    executions: history.ledger.length,
    duplicates,
    lost,
    staleFenced,
    detail: {
      effectfulKeysOverrun,
      idempotentKeysOverrun,
      repeatedFences,
      attemptNotFence,
      wrongRecords,
      unanswered,
      misanswered,
      hungDeliveries: history.hungDeliveries,
      supersededExecutions,
      supersededReturned,
      supersededRecorded,
      supersededUnaccounted,
      staleOnCurrent,
      unrecordedAnswers,
      unsettledKeys,
      indeterminateUnexecuted,
    },
    violations,
  };
}

/**
 * Is a terminal answer one the store's final record agrees with? Returns undefined when it is,
 * 'unrecorded' when it is a value the guard could not record (the store was unreachable; the
 * caller was still told the truth), or the fault in words.
 */
function judgeAnswer(
  answer: Answer,
  key: string,
  tool: ToolName | undefined,
  record: IdempotencyRecord | null,
  byExecId: ReadonlyMap<string, LedgerEntry>,
  unrecordedCompletions: ReadonlyMap<string, number>,
): string | 'unrecorded' | undefined {
  switch (answer.kind) {
    case 'completed':
    case 'deduplicated': {
      const value = answer.value;
      const execution = value === undefined ? undefined : byExecId.get(value.execId);
      if (value === undefined || execution === undefined || execution.key !== key) {
        return `${answer.kind} with a value no execution of this key produced: ${JSON.stringify(value)}`;
      }
      const recorded = record?.state === 'completed' ? decodeValue(record.outcome) : undefined;
      if (recorded?.execId === value.execId) return undefined;
      if ((unrecordedCompletions.get(fenceKey(key, value.fence)) ?? 0) > 0) return 'unrecorded';
      return `${answer.kind} with ${value.execId}@fence${value.fence}, but the store recorded ${
        record === null ? 'nothing' : `${record.state} ${record.outcome ?? ''}@fence${record.fence}`
      }`;
    }
    case 'indeterminate':
      if (tool !== EFFECTFUL_TOOL) return `indeterminate for a ${tool} tool`;
      if (record?.state === 'indeterminate') return undefined;
      if (record?.state === 'completed' && record.fence === answer.fence) return undefined;
      return `indeterminate (fence ${answer.fence}), but the store holds ${record?.state ?? 'nothing'}@fence${record?.fence}`;
    case 'abandoned':
      if (tool !== IDEMPOTENT_TOOL) return `abandoned for a ${tool} tool`;
      if (record?.state === 'abandoned') return undefined;
      if (record?.state === 'completed' && record.fence === answer.fence) return undefined;
      return `abandoned (fence ${answer.fence}), but the store holds ${record?.state ?? 'nothing'}@fence${record?.fence}`;
    default:
      return `not a terminal answer: ${answer.kind}`;
  }
}
