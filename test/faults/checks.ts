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

/** A caller's answer, with when its delivery was sent and when the answer came (Date.now()). */
export type TimedAnswer = Answer & { readonly sentMs?: number; readonly answeredMs?: number };

export interface HistoryCall {
  readonly id: string;
  /** The idempotency key of the call. */
  readonly key: string;
  /** Every answer a caller got for this call, one per delivery that was answered. */
  readonly answers: readonly TimedAnswer[];
}

/**
 * A record-loss fault: the store forgot every record at one instant inside [startMs, endMs]
 * (Date.now() of the coordinator; every process of a run shares the machine's clock).
 */
export interface RecordLoss {
  readonly startMs: number;
  readonly endMs: number;
  /** The store's records just before it forgot them (absent key: no record). */
  readonly records: ReadonlyMap<string, IdempotencyRecord>;
}

/** A release the store answered `released` (the record deleted), sent and replied at these times. */
export interface KeyRelease {
  readonly key: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface History {
  readonly maxAttempts: number;
  /** Every key of the plan, with its tool. */
  readonly keys: ReadonlyMap<string, ToolName>;
  readonly calls: readonly HistoryCall[];
  readonly ledger: readonly LedgerEntry[];
  /** The store's record of each key at the end (null: none). */
  readonly records: ReadonlyMap<string, IdempotencyRecord | null>;
  /** Record-loss faults, in time order. None: the store kept everything (one life). */
  readonly losses?: readonly RecordLoss[];
  /**
   * Releases of IDEMPOTENT claims (a failed body, or a call that used up its own maxAttempts,
   * RULES G1): the key's record is deleted and its next claim starts again at fence 1, so check
   * (b) counts an IDEMPOTENT key's fences per life of that key (between losses and releases).
   */
  readonly releases?: readonly KeyRelease[];
  readonly events: readonly EventMessage[];
  /** execId → true when the body returned a value, false when it threw. Absent: never reported. */
  readonly bodyEnds: ReadonlyMap<string, boolean>;
  /**
   * execId → when its body ended (worker clock). Ties an event to its execution when one call ran
   * the same fence twice (check (a) failing, or an IDEMPOTENT call re-entering in a new life).
   */
  readonly bodyEndTimes?: ReadonlyMap<string, number>;
  /** Worker processes the coordinator SIGKILLed (their last reports may be missing). */
  readonly killedPids: ReadonlySet<number>;
  /** Deliveries sent to a live worker that never answered. */
  readonly hungDeliveries: number;
}

export interface HistoryChecks {
  /** Body executions in the ledger. */
  readonly executions: number;
  /** Sum of the two duplicate checks: `detail.duplicatesInOneCall` + `detail.duplicatesPerLife`. */
  readonly duplicates: number;
  /** Calls whose callers did not get a terminal answer the store agrees with, plus hung deliveries. */
  readonly lost: number;
  /** `tool.stale_result` events of superseded executions: late results the fence rejected. */
  readonly staleFenced: number;
  readonly detail: {
    /**
     * Check (a): executions one `guard.run` call (one delivery) made beyond what it may, whatever
     * the store did: an EFFECTFUL call past its first, an IDEMPOTENT one past `maxAttempts`.
     */
    readonly duplicatesInOneCall: number;
    /** Deliveries counted by duplicatesInOneCall. */
    readonly callsRepeated: number;
    /** IDEMPOTENT calls that entered their body more than once (allowed up to maxAttempts, RULES G1). */
    readonly idempotentCallsReentered: number;
    /**
     * Check (b): executions of a key beyond what one life of the store allows (a life: the time
     * between two record losses): an EFFECTFUL key past one per life, an IDEMPOTENT key past one
     * per fence per life. Executions are placed in lives by their claim's window; two are
     * allowed only when a loss may have fallen between their claims.
     */
    readonly duplicatesPerLife: number;
    readonly effectfulKeysOverrun: number;
    readonly idempotentKeysOverrun: number;
    readonly repeatedFences: number;
    readonly attemptNotFence: number;
    /** Record losses in the history (the store's lives are one more). */
    readonly recordLosses: number;
    /** Keys executed in more than one life (legitimately: the store forgot them in between). */
    readonly keysReexecutedAfterLoss: number;
    /** Executions whose claim was in flight across a loss (their life is one of two). */
    readonly executionsAcrossLoss: number;
    /** Completed records whose result is not the one of the highest fence, or names no execution. */
    readonly wrongRecords: number;
    readonly unanswered: number;
    readonly misanswered: number;
    /** Answers whose delivery spanned a loss and match no record of the lives it spanned. */
    readonly answersAcrossLoss: number;
    readonly hungDeliveries: number;
    /** Executions whose fence was superseded by a later attempt of the same key in the same life. */
    readonly supersededExecutions: number;
    /** ...of which the body returned a value (a late result that had to be fenced). */
    readonly supersededReturned: number;
    /** ...of which the guard reported `tool.completed` with `recorded: true`: a stale result got in. */
    readonly supersededRecorded: number;
    /** ...whose value was recorded only after a loss: re-recorded in the next life (RULES G1). */
    readonly supersededReRecorded: number;
    /**
     * Records naming an execution that may be of an earlier life (a claim in flight across the
     * loss counts too), or of a lower fence: a known outcome re-recorded by its call under a
     * newer claim (G1), or an ordinary record of a claim that straddled a loss.
     */
    readonly reRecordedOutcomes: number;
    /** Superseded executions that returned, on a worker never killed, with no event about their result. */
    readonly supersededUnaccounted: number;
    /** `tool.stale_result` for an execution that WAS the current holder (a spurious rejection). */
    readonly staleOnCurrent: number;
    /** `tool.stale_result` for an execution whose record the store lost (not fenced: forgotten). */
    readonly staleAfterLoss: number;
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

/** The lives an instant or a window may fall in: [earliest, latest], numbered from 0. */
interface Lives {
  readonly low: number;
  readonly high: number;
}

/**
 * Places a window [fromMs, toMs] (something happened at one instant inside it) in the store's
 * lives. Life j runs from loss j-1 to loss j. A loss certainly came before the instant when it
 * ended before `fromMs`; it may have when it started before `toMs`.
 */
function livesOf(losses: readonly RecordLoss[], fromMs: number, toMs: number): Lives {
  let low = 0;
  let high = 0;
  for (const loss of losses) {
    if (loss.endMs <= fromMs) low += 1;
    if (loss.startMs < toMs) high += 1;
  }
  return { low, high: Math.max(low, high) };
}

/**
 * How many of `windows` cannot each have a life of its own: the fewest that must share a life
 * with another. Greedy by latest possible life, each taking the earliest free life it may have
 * (optimal for intervals and distinct points). With no loss every window is life 0: n - 1.
 */
function sharedLives(windows: readonly Lives[]): number {
  const used = new Set<number>();
  let shared = 0;
  for (const window of [...windows].sort((a, b) => a.high - b.high || a.low - b.low)) {
    let life = window.low;
    while (life <= window.high && used.has(life)) life += 1;
    if (life > window.high) shared += 1;
    else used.add(life);
  }
  return shared;
}

export function checkHistory(history: History): HistoryChecks {
  const violations: string[] = [];
  const violation = (text: string) => {
    if (violations.length < 60) violations.push(text);
  };
  const losses = history.losses ?? [];
  const lastLife = losses.length;
  /** The records of each life: the snapshot taken at its loss, or the final records. */
  const recordOf = (key: string, life: number): IdempotencyRecord | null =>
    life < lastLife ? (losses[life]?.records.get(key) ?? null) : (history.records.get(key) ?? null);

  // ---- executions: their lives, per key, per call ----
  const byKey = new Map<string, LedgerEntry[]>();
  const byExecId = new Map<string, LedgerEntry>();
  const byDelivery = new Map<number, LedgerEntry[]>();
  const livesOfExecution = new Map<string, Lives>();
  /** `delivery#key#fence` → its executions (one, unless the call ran that fence in two lives). */
  const byCallFence = new Map<string, LedgerEntry[]>();
  const callFence = (delivery: number | undefined, key: string, fence: number) =>
    `${delivery ?? 0}#${key}#${fence}`;
  let executionsAcrossLoss = 0;
  for (const entry of history.ledger) {
    const list = byKey.get(entry.key) ?? [];
    list.push(entry);
    byKey.set(entry.key, list);
    byExecId.set(entry.execId, entry);
    const perCall = byDelivery.get(entry.delivery ?? 0) ?? [];
    perCall.push(entry);
    byDelivery.set(entry.delivery ?? 0, perCall);
    const sameFence = byCallFence.get(callFence(entry.delivery, entry.key, entry.fence)) ?? [];
    sameFence.push(entry);
    byCallFence.set(callFence(entry.delivery, entry.key, entry.fence), sameFence);
    const lives = livesOf(losses, entry.claimSentMs ?? 0, entry.claimRepliedMs ?? 0);
    if (lives.low !== lives.high) executionsAcrossLoss += 1;
    livesOfExecution.set(entry.execId, lives);
  }
  const livesOfEntry = (entry: LedgerEntry): Lives =>
    livesOfExecution.get(entry.execId) ?? { low: 0, high: lastLife };

  // ---- lives of a key: the store's lives, cut further where the key's record was released ----
  // A release the store answered `released` deleted the record, so the key's next claim starts
  // again at fence 1 (RULES G1, G2): what ran before it and what runs after are two lives of the
  // key, as two lives of the store are. Key life j runs from break j-1 to break j.
  const releasesByKey = new Map<string, RecordLoss[]>();
  for (const release of history.releases ?? []) {
    const list = releasesByKey.get(release.key) ?? [];
    list.push({ startMs: release.startMs, endMs: release.endMs, records: new Map() });
    releasesByKey.set(release.key, list);
  }
  const breaksByKey = new Map<string, RecordLoss[]>();
  const breaksOf = (key: string): RecordLoss[] => {
    let breaks = breaksByKey.get(key);
    if (breaks === undefined) {
      breaks = [...losses, ...(releasesByKey.get(key) ?? [])].sort((a, b) => a.startMs - b.startMs);
      breaksByKey.set(key, breaks);
    }
    return breaks;
  };
  const keyLivesOf = (entry: LedgerEntry): Lives =>
    livesOf(breaksOf(entry.key), entry.claimSentMs ?? 0, entry.claimRepliedMs ?? 0);
  /** The key life whose records store life `life` ended with (its snapshot, or the final records). */
  const lastKeyLife = (key: string, life: number): number => {
    const breaks = breaksOf(key);
    const loss = losses[life];
    return life < lastLife && loss !== undefined ? breaks.indexOf(loss) : breaks.length;
  };

  // ---- check (a): one guard.run call, whatever its retries inside the guard ----
  let duplicatesInOneCall = 0;
  let callsRepeated = 0;
  let idempotentCallsReentered = 0;
  for (const [delivery, entries] of byDelivery) {
    // Delivery 0: not known (a hand-made history); check (a) needs to know the call.
    if (entries.length < 2 || delivery === 0) continue;
    const tool = history.keys.get(entries[0]?.key ?? '') ?? entries[0]?.tool;
    const allowed = tool === IDEMPOTENT_TOOL ? history.maxAttempts : 1;
    if (tool === IDEMPOTENT_TOOL) idempotentCallsReentered += 1;
    if (entries.length > allowed) {
      callsRepeated += 1;
      duplicatesInOneCall += entries.length - allowed;
      violation(
        `one ${tool} call (delivery ${delivery}) entered its body ${entries.length} times: ${entries
          .map((entry) => {
            const lives = livesOfEntry(entry);
            const life = lives.low === lives.high ? `${lives.low}` : `${lives.low}-${lives.high}`;
            return `${entry.execId}@fence${entry.fence} in life ${life} (claim sent ${entry.claimSentMs}, replied ${entry.claimRepliedMs})`;
          })
          .join(', ')}`,
      );
    }
  }

  // ---- check (b): executions per key per life of the store ----
  let duplicatesPerLife = 0;
  let effectfulKeysOverrun = 0;
  let idempotentKeysOverrun = 0;
  let repeatedFences = 0;
  let attemptNotFence = 0;
  let keysReexecutedAfterLoss = 0;
  for (const [key, entries] of byKey) {
    const tool = history.keys.get(key) ?? entries[0]?.tool;
    for (const entry of entries) {
      if (entry.attempt !== entry.fence) {
        attemptNotFence += 1;
        violation(
          `key ${key.slice(0, 12)}: execution ${entry.execId} has attempt ${entry.attempt} under fence ${entry.fence}`,
        );
      }
    }
    const describe = () =>
      entries
        .map((entry) => {
          const lives = livesOfEntry(entry);
          const life = lives.low === lives.high ? `${lives.low}` : `${lives.low}-${lives.high}`;
          return `${entry.execId}@fence${entry.fence}/life${life}/call${entry.delivery ?? 0}`;
        })
        .join(', ');
    if (entries.length > 1 && entries.some((entry) => livesOfEntry(entry).high > 0)) {
      const first = Math.min(...entries.map((entry) => livesOfEntry(entry).high));
      if (entries.some((entry) => livesOfEntry(entry).low > first)) keysReexecutedAfterLoss += 1;
    }
    if (tool === EFFECTFUL_TOOL) {
      const shared = sharedLives(entries.map(livesOfEntry));
      if (shared > 0) {
        effectfulKeysOverrun += 1;
        duplicatesPerLife += shared;
        violation(`EFFECTFUL key ${key.slice(0, 12)} ran ${entries.length} times: ${describe()}`);
      }
    } else if (tool === IDEMPOTENT_TOOL) {
      // Per life of the key (losses and its own releases): one execution per fence, fences
      // 1..maxAttempts (so at most maxAttempts).
      const byFence = new Map<number, Lives[]>();
      for (const entry of entries) {
        const list = byFence.get(entry.fence) ?? [];
        list.push(keyLivesOf(entry));
        byFence.set(entry.fence, list);
      }
      let repeated = 0;
      for (const windows of byFence.values()) repeated += sharedLives(windows);
      const tooHigh = entries.filter((entry) => entry.fence > history.maxAttempts).length;
      if (repeated > 0) {
        repeatedFences += repeated;
        violation(
          `IDEMPOTENT key ${key.slice(0, 12)}: ${repeated} execution(s) repeated a fence: ${describe()}`,
        );
      }
      if (tooHigh > 0) {
        idempotentKeysOverrun += 1;
        violation(
          `IDEMPOTENT key ${key.slice(0, 12)} ran under fences ${[...byFence.keys()].join(',')} (maxAttempts ${history.maxAttempts})`,
        );
      }
      duplicatesPerLife += repeated + tooHigh;
    } else {
      violation(`ledger names key ${key.slice(0, 12)} that is not in the plan`);
    }
  }

  // ---- events, per execution: its call, key and fence (the latest body to end before it) ----
  const executionOf = (event: EventMessage): LedgerEntry | undefined => {
    const candidates = byCallFence.get(callFence(event.delivery, event.key, event.fence)) ?? [];
    if (candidates.length < 2) return candidates[0];
    let best: LedgerEntry | undefined;
    let bestEndMs = Number.NEGATIVE_INFINITY;
    for (const candidate of candidates) {
      const endMs = history.bodyEndTimes?.get(candidate.execId);
      if (endMs !== undefined && endMs <= event.timeMs && endMs > bestEndMs) {
        best = candidate;
        bestEndMs = endMs;
      }
    }
    return best ?? candidates.at(-1);
  };
  const staleEvents = new Map<string, number>();
  const recordedCompletions = new Map<string, number>();
  const unrecordedCompletions = new Map<string, number>();
  /** execId → when its recorded completions were reported (to tell a re-record after a loss). */
  const recordedTimes = new Map<string, number[]>();
  for (const event of history.events) {
    if (event.type !== 'tool.stale_result' && event.type !== 'tool.completed') continue;
    const id =
      executionOf(event)?.execId ?? `no execution: ${callFence(event.delivery, event.key, event.fence)}`;
    if (event.type === 'tool.stale_result') staleEvents.set(id, (staleEvents.get(id) ?? 0) + 1);
    if (event.type === 'tool.completed') {
      const map = event.recorded === false ? unrecordedCompletions : recordedCompletions;
      map.set(id, (map.get(id) ?? 0) + 1);
      if (event.recorded !== false) recordedTimes.set(id, [...(recordedTimes.get(id) ?? []), event.timeMs]);
    }
  }
  /**
   * Deliveries whose guard said it answered a value it could not record (`tool.completed` with
   * `recorded: false`). By the call, not by `key#fence`: the event's fence is that of the claim
   * the guard tried to record under, which after a lost record or a takeover (RULES G1) is not
   * the fence of the execution whose value was answered.
   */
  const unrecordedDeliveries = new Set(
    history.events
      .filter((event) => event.type === 'tool.completed' && event.recorded === false)
      .map((event) => event.delivery),
  );

  // ---- the recorded result of each key, in each life ----
  let wrongRecords = 0;
  let reRecordedOutcomes = 0;
  let unsettledKeys = 0;
  let indeterminateUnexecuted = 0;
  /**
   * `key#life` → the highest fence seen in that life of the key (record, or an execution
   * certainly in it). Lives of the key, not of the store: a release starts the key at fence 1.
   */
  const topFence = new Map<string, number>();
  const certainTop = new Map<string, number>();
  for (const entry of history.ledger) {
    const lives = keyLivesOf(entry);
    if (lives.low !== lives.high) continue;
    const id = `${entry.key}#${lives.low}`;
    certainTop.set(id, Math.max(certainTop.get(id) ?? 0, entry.fence));
  }
  for (const [id, fence] of certainTop) topFence.set(id, fence);
  const keysByLife: Set<string>[] = [];
  for (let life = 0; life <= lastLife; life++) {
    const keys = new Set<string>(life < lastLife ? losses[life]?.records.keys() : history.records.keys());
    keysByLife.push(keys);
  }
  for (let life = 0; life <= lastLife; life++) {
    for (const key of keysByLife[life] ?? []) {
      const record = recordOf(key, life);
      // The records a store life ended with are those of the key's last life in it.
      const keyLife = lastKeyLife(key, life);
      const maxCertain = certainTop.get(`${key}#${keyLife}`) ?? 0;
      if (record === null) {
        // Only at the end: a snapshot may catch a key between a release and its next attempt.
        if (life === lastLife && maxCertain > 0) {
          wrongRecords += 1;
          violation(`key ${key.slice(0, 12)} ran (fence ${maxCertain}) but has no record`);
        }
        continue;
      }
      topFence.set(`${key}#${keyLife}`, Math.max(maxCertain, record.fence));
      const executedHere = (byKey.get(key) ?? []).filter((entry) => {
        const lives = livesOfEntry(entry);
        return lives.low <= life && life <= lives.high;
      });
      if (life === lastLife) {
        if (record.state === 'in_progress') unsettledKeys += 1;
        if (record.state === 'indeterminate' && executedHere.length === 0) indeterminateUnexecuted += 1;
      }
      if (record.state !== 'completed') continue;
      const value = decodeValue(record.outcome);
      const execution = value === undefined ? undefined : byExecId.get(value.execId);
      const executionLives = execution === undefined ? undefined : keyLivesOf(execution);
      // A known outcome re-recorded under a newer claim (RULES G1: a superseded call whose own
      // body returned v and that then acquired the key, in a new life of the store or as a
      // takeover, or after a release, completes its new claim with v): the execution is of this
      // life of the key or an earlier one, under a lower fence (or any fence, in an earlier
      // life), and its body returned.
      const reRecorded =
        execution !== undefined &&
        executionLives !== undefined &&
        execution.key === key &&
        executionLives.low <= keyLife &&
        (executionLives.low < keyLife || execution.fence < record.fence) &&
        history.bodyEnds.get(execution.execId) !== false &&
        record.fence >= maxCertain;
      if (reRecorded) reRecordedOutcomes += 1;
      else if (
        value === undefined ||
        execution === undefined ||
        executionLives === undefined ||
        execution.key !== key ||
        execution.fence !== record.fence ||
        executionLives.low > keyLife ||
        executionLives.high < keyLife ||
        record.fence < maxCertain
      ) {
        wrongRecords += 1;
        violation(
          `key ${key.slice(0, 12)} (life ${life}): recorded result ${record.outcome} at fence ${record.fence}, ` +
            `highest executed fence ${maxCertain}`,
        );
      }
    }
  }

  // ---- every caller's answer, against the records of the life (lives) it was given in ----
  let unanswered = 0;
  let misanswered = 0;
  let unrecordedAnswers = 0;
  let answersAcrossLoss = 0;
  for (const call of history.calls) {
    const terminal = call.answers.filter((answer) => TERMINAL_ANSWERS.has(answer.kind));
    if (terminal.length === 0) {
      unanswered += 1;
      violation(
        `call ${call.id} got no terminal answer (${call.answers.map((a) => a.kind).join(',') || 'none'})`,
      );
      continue;
    }
    const tool = history.keys.get(call.key);
    let wrong = false;
    for (const answer of terminal) {
      const lives = livesOf(losses, answer.sentMs ?? 0, answer.answeredMs ?? Number.POSITIVE_INFINITY);
      const faults: string[] = [];
      let judged: 'ok' | 'unrecorded' | undefined;
      for (let life = lives.low; life <= lives.high && judged === undefined; life++) {
        const fault = judgeAnswer(
          answer,
          call.key,
          tool,
          recordOf(call.key, life),
          byExecId,
          unrecordedDeliveries,
        );
        if (fault === undefined) judged = 'ok';
        else if (fault === 'unrecorded') judged = 'unrecorded';
        else faults.push(lives.low === lives.high ? fault : `life ${life}: ${fault}`);
      }
      if (judged === 'unrecorded') unrecordedAnswers += 1;
      if (judged !== undefined) continue;
      const lostLife = lostLifeOf(answer, call.key, tool, losses, byExecId);
      if (lostLife === 'kind fits') {
        // The store forgot while this call was open: no record can judge it, its kind fits the tool.
        answersAcrossLoss += 1;
        continue;
      }
      wrong = true;
      violation(`call ${call.id}: ${faults.join('; ')}${lostLife === undefined ? '' : ` (${lostLife})`}`);
    }
    if (wrong) misanswered += 1;
  }

  // ---- superseded executions: their results must have been fenced ----
  let supersededExecutions = 0;
  let supersededReturned = 0;
  let supersededRecorded = 0;
  let supersededReRecorded = 0;
  let supersededUnaccounted = 0;
  const superseded = new Set<string>();
  for (const entry of history.ledger) {
    const lives = keyLivesOf(entry);
    if (lives.low !== lives.high) continue;
    const top = topFence.get(`${entry.key}#${lives.low}`) ?? entry.fence;
    if (entry.fence >= top) continue;
    supersededExecutions += 1;
    const id = entry.execId;
    superseded.add(id);
    // Recorded in its own life: a stale result got in. After a loss or a release (the record
    // the result was meant for is gone) it is the call re-recording its own value in the key's
    // new life (G1).
    const inOwnLife = (recordedTimes.get(id) ?? []).filter(
      (timeMs) =>
        !breaksOf(entry.key).some((loss) => loss.startMs >= (entry.claimSentMs ?? 0) && loss.endMs <= timeMs),
    );
    if (inOwnLife.length > 0) {
      supersededRecorded += 1;
      violation(`key ${entry.key.slice(0, 12)}: superseded fence ${entry.fence} had its result recorded`);
    } else if ((recordedCompletions.get(id) ?? 0) > 0) supersededReRecorded += 1;
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
  let staleFenced = 0;
  let staleOnCurrent = 0;
  let staleAfterLoss = 0;
  for (const [id, count] of staleEvents) {
    const entry = byExecId.get(id);
    if (superseded.has(id)) staleFenced += count;
    else if (entry !== undefined && livesOfEntry(entry).high > livesOfEntry(entry).low)
      staleAfterLoss += count;
    else if (entry !== undefined && losses.some((loss) => loss.endMs > (entry.claimSentMs ?? 0))) {
      // Its claim's life ended later: the store forgot the record it would have completed.
      staleAfterLoss += count;
    } else staleOnCurrent += count;
  }

  const duplicates = duplicatesInOneCall + duplicatesPerLife;
  const lost = unanswered + misanswered + history.hungDeliveries;
  return {
    executions: history.ledger.length,
    duplicates,
    lost,
    staleFenced,
    detail: {
      duplicatesInOneCall,
      callsRepeated,
      idempotentCallsReentered,
      duplicatesPerLife,
      effectfulKeysOverrun,
      idempotentKeysOverrun,
      repeatedFences,
      attemptNotFence,
      recordLosses: losses.length,
      keysReexecutedAfterLoss,
      executionsAcrossLoss,
      wrongRecords,
      unanswered,
      misanswered,
      answersAcrossLoss,
      hungDeliveries: history.hungDeliveries,
      supersededExecutions,
      supersededReturned,
      supersededRecorded,
      supersededReRecorded,
      supersededUnaccounted,
      reRecordedOutcomes,
      staleOnCurrent,
      staleAfterLoss,
      unrecordedAnswers,
      unsettledKeys,
      indeterminateUnexecuted,
    },
    violations,
  };
}

/**
 * An answer no record of its lives agrees with may still be right when the store forgot while
 * the call was open (a loss between the delivery being sent and answered) or forgot the value's
 * own execution (a loss after its claim): then only its kind and its value's key can be checked.
 * Returns 'kind fits', the reason it does not, or undefined when no loss can explain it.
 */
function lostLifeOf(
  answer: TimedAnswer,
  key: string,
  tool: ToolName | undefined,
  losses: readonly RecordLoss[],
  byExecId: ReadonlyMap<string, LedgerEntry>,
): 'kind fits' | string | undefined {
  const sentMs = answer.sentMs ?? 0;
  const answeredMs = answer.answeredMs ?? Number.POSITIVE_INFINITY;
  const duringCall = losses.some((loss) => loss.endMs > sentMs && loss.startMs < answeredMs);
  switch (answer.kind) {
    case 'completed':
    case 'deduplicated': {
      const execution = answer.value === undefined ? undefined : byExecId.get(answer.value.execId);
      if (execution === undefined || execution.key !== key) return undefined;
      const afterClaim = losses.some(
        (loss) => loss.endMs > (execution.claimSentMs ?? 0) && loss.startMs < answeredMs,
      );
      return duringCall || afterClaim ? 'kind fits' : undefined;
    }
    case 'indeterminate':
      if (!duringCall) return undefined;
      return tool === EFFECTFUL_TOOL ? 'kind fits' : `indeterminate for a ${tool} tool`;
    case 'abandoned':
      if (!duringCall) return undefined;
      return tool === IDEMPOTENT_TOOL ? 'kind fits' : `abandoned for a ${tool} tool`;
    default:
      return undefined;
  }
}

/**
 * Is a terminal answer one the store's record agrees with? Returns undefined when it is,
 * 'unrecorded' when it is a value the guard could not record (the store was unreachable; the
 * caller was still told the truth), or the fault in words.
 */
function judgeAnswer(
  answer: Answer,
  key: string,
  tool: ToolName | undefined,
  record: IdempotencyRecord | null,
  byExecId: ReadonlyMap<string, LedgerEntry>,
  unrecordedDeliveries: ReadonlySet<number>,
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
      // Unrecorded: this very call said so, and the value is its own execution's.
      if (unrecordedDeliveries.has(answer.id) && execution.delivery === answer.id) return 'unrecorded';
      return `${answer.kind} with ${value.execId}@fence${value.fence}, but the store recorded ${
        record === null ? 'nothing' : `${record.state} ${record.outcome ?? ''}@fence${record.fence}`
      }`;
    }
    case 'indeterminate':
      if (tool !== EFFECTFUL_TOOL) return `indeterminate for a ${tool} tool`;
      if (record?.state === 'indeterminate') return undefined;
      if (record?.state === 'completed' && record.fence === answer.fence) return undefined;
      // The guard could not mark it (the store was frozen or gone): the claim of that fence is
      // left in progress, and the next at-most-once claim after its lease marks it indeterminate.
      if (record?.state === 'in_progress' && record.fence === answer.fence) return undefined;
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
