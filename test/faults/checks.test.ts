// The checker of the fault suite must catch what it claims to catch: fed histories with a
// duplicate execution, a wrong recorded result, a lost call and an unfenced stale result, it must
// count each one. (A checker that always says 0 would make the fault runs prove nothing.)
import type { IdempotencyRecord } from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { checkHistory, type History, type RecordLoss } from './checks.js';
import {
  type Answer,
  EFFECTFUL_TOOL,
  type EventMessage,
  IDEMPOTENT_TOOL,
  type LedgerEntry,
  type ToolName,
} from './protocol.js';

const E = 'e'.repeat(64);
const I = 'i'.repeat(64);

/** An execution; `delivery` 0 (the default) leaves it out of check (a), which needs the call. */
function execution(
  key: string,
  tool: ToolName,
  fence: number,
  execId: string,
  pid = 100,
  claim: { delivery?: number; sentMs?: number; repliedMs?: number } = {},
): LedgerEntry {
  return {
    execId,
    key,
    tool,
    fence,
    attempt: fence,
    pid,
    worker: 'w',
    timeMs: claim.sentMs ?? 0,
    delivery: claim.delivery ?? 0,
    claimSentMs: claim.sentMs ?? 0,
    claimRepliedMs: claim.repliedMs ?? (claim.sentMs ?? 0) + 1,
  };
}

function record(
  key: string,
  state: IdempotencyRecord['state'],
  fence: number,
  execId?: string,
): IdempotencyRecord {
  return {
    key,
    tenant: 't',
    tool: key === E ? EFFECTFUL_TOOL : IDEMPOTENT_TOOL,
    fingerprint: key,
    state,
    fence,
    attempt: fence,
    owner: `o${fence}`,
    leaseExpiresAtMs: 0,
    expiresAtMs: 0,
    ...(execId === undefined ? {} : { outcome: JSON.stringify({ execId, fence, pid: 100 }) }),
  };
}

function value(kind: 'completed' | 'deduplicated', execId: string, fence: number): Answer {
  return { t: 'answer', id: 1, kind, value: { execId, fence, pid: 100 }, ranHere: [] };
}

function event(type: string, key: string, fence: number, recorded?: boolean, delivery = 0): EventMessage {
  return {
    t: 'event',
    type,
    key,
    fence,
    attempt: fence,
    timeMs: 0,
    delivery,
    ...(recorded === undefined ? {} : { recorded }),
  };
}

/** A clean history: E ran once; I ran under fences 1 and 2, 1 was fenced, 2 recorded. */
function clean(): History {
  return {
    maxAttempts: 3,
    keys: new Map<string, ToolName>([
      [E, EFFECTFUL_TOOL],
      [I, IDEMPOTENT_TOOL],
    ]),
    calls: [
      { id: 'c1', key: E, answers: [value('completed', 'x1', 1)] },
      { id: 'c2', key: E, answers: [value('deduplicated', 'x1', 1)] },
      {
        id: 'c3',
        key: I,
        answers: [{ t: 'answer', id: 3, kind: 'pending', ranHere: [] }, value('completed', 'y2', 2)],
      },
    ],
    ledger: [
      execution(E, EFFECTFUL_TOOL, 1, 'x1'),
      execution(I, IDEMPOTENT_TOOL, 1, 'y1'),
      execution(I, IDEMPOTENT_TOOL, 2, 'y2'),
    ],
    records: new Map([
      [E, record(E, 'completed', 1, 'x1')],
      [I, record(I, 'completed', 2, 'y2')],
    ]),
    events: [
      event('tool.completed', E, 1, true),
      event('tool.stale_result', I, 1),
      event('tool.completed', I, 2, true),
    ],
    bodyEnds: new Map([
      ['x1', true],
      ['y1', true],
      ['y2', true],
    ]),
    killedPids: new Set(),
    hungDeliveries: 0,
  };
}

describe('checkHistory', () => {
  it('passes a clean history and counts its fenced stale result', () => {
    const checks = checkHistory(clean());
    expect(checks.violations).toEqual([]);
    expect(checks).toMatchObject({ executions: 3, duplicates: 0, lost: 0, staleFenced: 1 });
    expect(checks.detail.supersededExecutions).toBe(1);
  });

  it('counts a second execution of an EFFECTFUL key as a duplicate', () => {
    const history = clean();
    const checks = checkHistory({
      ...history,
      ledger: [...history.ledger, execution(E, EFFECTFUL_TOOL, 1, 'x2')],
    });
    expect(checks.duplicates).toBe(1);
    expect(checks.detail.effectfulKeysOverrun).toBe(1);
  });

  it('counts two executions under one fence, and attempts past maxAttempts, of an IDEMPOTENT key', () => {
    const history = clean();
    const repeated = checkHistory({
      ...history,
      ledger: [...history.ledger, execution(I, IDEMPOTENT_TOOL, 2, 'y3')],
    });
    expect(repeated.duplicates).toBe(1);
    expect(repeated.detail.repeatedFences).toBe(1);
    const beyond = checkHistory({
      ...history,
      maxAttempts: 1,
    });
    expect(beyond.duplicates).toBe(1);
    expect(beyond.detail.idempotentKeysOverrun).toBe(1);
  });

  it('flags a recorded result that is not the highest fence', () => {
    const history = clean();
    const records = new Map(history.records);
    records.set(I, record(I, 'completed', 1, 'y1'));
    const checks = checkHistory({ ...history, records });
    expect(checks.detail.wrongRecords).toBe(1);
  });

  it('counts a call with no terminal answer, and one whose answer the store contradicts, as lost', () => {
    const history = clean();
    const checks = checkHistory({
      ...history,
      calls: [
        ...history.calls,
        { id: 'c4', key: I, answers: [{ t: 'answer', id: 4, kind: 'unavailable', ranHere: [] }] },
        { id: 'c5', key: I, answers: [value('deduplicated', 'y1', 1)] },
        { id: 'c6', key: E, answers: [{ t: 'answer', id: 6, kind: 'abandoned', fence: 1, ranHere: [] }] },
      ],
      hungDeliveries: 1,
    });
    expect(checks.detail.unanswered).toBe(1);
    expect(checks.detail.misanswered).toBe(2);
    expect(checks.lost).toBe(4);
  });

  it('flags a superseded result that was recorded, and one never accounted for', () => {
    const history = clean();
    const recorded = checkHistory({
      ...history,
      events: [...history.events, event('tool.completed', I, 1, true)],
    });
    expect(recorded.detail.supersededRecorded).toBe(1);
    const silent = checkHistory({
      ...history,
      events: history.events.filter((each) => each.type !== 'tool.stale_result'),
    });
    expect(silent.staleFenced).toBe(0);
    expect(silent.detail.supersededUnaccounted).toBe(1);
    // ...unless its worker was killed before it could report.
    const killed = checkHistory({
      ...history,
      events: history.events.filter((each) => each.type !== 'tool.stale_result'),
      killedPids: new Set([100]),
    });
    expect(killed.detail.supersededUnaccounted).toBe(0);
  });

  it('counts a stale_result event of the current holder apart from fenced ones', () => {
    const history = clean();
    const checks = checkHistory({
      ...history,
      events: [...history.events, event('tool.stale_result', I, 2)],
    });
    expect(checks.staleFenced).toBe(1);
    expect(checks.detail.staleOnCurrent).toBe(1);
  });

  describe('record loss: check (a) per call, check (b) per key per life of the store', () => {
    /** The store forgot everything at 1,000 ms; just before, it held `records`. */
    const lossAt1000 = (records: [string, IdempotencyRecord][] = []): RecordLoss => ({
      startMs: 1000,
      endMs: 1005,
      records: new Map(records),
    });
    const earlier = (execId: string, delivery: number) =>
      execution(E, EFFECTFUL_TOOL, 1, execId, 100, { delivery, sentMs: 100 });
    const later = (execId: string, delivery: number) =>
      execution(E, EFFECTFUL_TOOL, 1, execId, 100, { delivery, sentMs: 2000 });

    /** E ran in two calls, once before the loss and once after: allowed (the store forgot). */
    function reexecuted(): History {
      const history = clean();
      return {
        ...history,
        // I ran after the loss (life 1), where its final record is.
        ledger: [
          earlier('x1', 1),
          later('x2', 2),
          ...history.ledger
            .filter((entry) => entry.key !== E)
            .map((entry) => ({ ...entry, claimSentMs: 3000, claimRepliedMs: 3001 })),
        ],
        records: new Map([...history.records, [E, record(E, 'completed', 1, 'x2')]]),
        losses: [lossAt1000([[E, record(E, 'completed', 1, 'x1')]])],
        calls: [
          { id: 'c1', key: E, answers: [{ ...value('completed', 'x1', 1), sentMs: 90, answeredMs: 200 }] },
          { id: 'c2', key: E, answers: [{ ...value('completed', 'x2', 1), sentMs: 1990, answeredMs: 2100 }] },
          ...history.calls.filter((call) => call.key !== E),
        ],
        events: history.events.filter((each) => each.key !== E),
      };
    }

    it('allows a second execution of an EFFECTFUL key by another call in a later life', () => {
      const checks = checkHistory(reexecuted());
      expect(checks.violations).toEqual([]);
      expect(checks.duplicates).toBe(0);
      expect(checks.lost).toBe(0);
      expect(checks.detail.keysReexecutedAfterLoss).toBe(1);
      expect(checks.detail.recordLosses).toBe(1);
    });

    it('counts it when both claims fell in one life (the loss came after both)', () => {
      const history = reexecuted();
      const checks = checkHistory({
        ...history,
        ledger: [earlier('x1', 1), execution(E, EFFECTFUL_TOOL, 1, 'x2', 100, { delivery: 2, sentMs: 500 })],
      });
      expect(checks.detail.duplicatesPerLife).toBe(1);
      expect(checks.detail.duplicatesInOneCall).toBe(0);
    });

    it('gives a claim in flight across the loss either life, but not both to two others', () => {
      const history = reexecuted();
      const straddling = execution(E, EFFECTFUL_TOOL, 1, 'x3', 100, {
        delivery: 3,
        sentMs: 990,
        repliedMs: 1010,
      });
      const one = checkHistory({ ...history, ledger: [earlier('x1', 1), straddling] });
      expect(one.detail.duplicatesPerLife).toBe(0);
      expect(one.detail.executionsAcrossLoss).toBe(1);
      const three = checkHistory({ ...history, ledger: [earlier('x1', 1), straddling, later('x2', 2)] });
      expect(three.detail.duplicatesPerLife).toBe(1);
    });

    it('counts one call entering an EFFECTFUL body twice as a duplicate, even across a loss', () => {
      const history = reexecuted();
      const checks = checkHistory({ ...history, ledger: [earlier('x1', 1), later('x2', 1)] });
      expect(checks.detail.duplicatesInOneCall).toBe(1);
      expect(checks.detail.callsRepeated).toBe(1);
      expect(checks.detail.duplicatesPerLife).toBe(0);
      expect(checks.duplicates).toBe(1);
      expect(checks.violations[0]).toContain('entered its body 2 times');
    });

    it('lets one IDEMPOTENT call re-enter up to maxAttempts times, not more', () => {
      const history = clean();
      const run = (fence: number, execId: string, sentMs: number) =>
        execution(I, IDEMPOTENT_TOOL, fence, execId, 100, { delivery: 9, sentMs });
      const within = checkHistory({
        ...history,
        ledger: [run(1, 'y1', 100), run(2, 'y2', 200)],
      });
      expect(within.detail.duplicatesInOneCall).toBe(0);
      expect(within.detail.idempotentCallsReentered).toBe(1);
      const beyond = checkHistory({
        ...history,
        losses: [lossAt1000()],
        ledger: [run(1, 'a', 100), run(2, 'b', 200), run(1, 'c', 2000), run(2, 'y2', 2100)],
      });
      expect(beyond.detail.duplicatesInOneCall).toBe(1);
      expect(beyond.detail.duplicatesPerLife).toBe(0);
    });

    it('judges an answer by the records of its own life, and one across the loss by its kind', () => {
      const history = reexecuted();
      // c1 (life 0) got x2, which only life 1 recorded: wrong.
      const wrong = checkHistory({
        ...history,
        calls: [
          { id: 'c1', key: E, answers: [{ ...value('deduplicated', 'x2', 1), sentMs: 90, answeredMs: 200 }] },
        ],
      });
      expect(wrong.detail.misanswered).toBe(1);
      expect(wrong.lost).toBe(1);
      // A call open across the loss that was told indeterminate: no record can judge it.
      const across = checkHistory({
        ...history,
        calls: [
          {
            id: 'c3',
            key: E,
            answers: [
              {
                t: 'answer',
                id: 3,
                kind: 'indeterminate',
                fence: 2,
                ranHere: [],
                sentMs: 900,
                answeredMs: 1500,
              },
            ],
          },
        ],
      });
      expect(across.lost).toBe(0);
      expect(across.detail.answersAcrossLoss).toBe(1);
      // ...but an IDEMPOTENT tool is never indeterminate, loss or not.
      const badKind = checkHistory({
        ...history,
        calls: [
          {
            id: 'c4',
            key: I,
            answers: [
              {
                t: 'answer',
                id: 4,
                kind: 'indeterminate',
                fence: 1,
                ranHere: [],
                sentMs: 900,
                answeredMs: 1500,
              },
            ],
          },
        ],
      });
      expect(badKind.lost).toBe(1);
    });

    it('accepts a known outcome re-recorded in a later life, and counts it', () => {
      const history = reexecuted();
      // x1 (life 0) returned after the loss; its call re-recorded x1 in life 1 (RULES G1).
      const checks = checkHistory({
        ...history,
        ledger: history.ledger.filter((entry) => entry.execId !== 'x2'),
        records: new Map([...history.records, [E, record(E, 'completed', 1, 'x1')]]),
        calls: [history.calls[0] as (typeof history.calls)[number]],
      });
      expect(checks.violations).toEqual([]);
      expect(checks.detail.reRecordedOutcomes).toBe(1);
      expect(checks.detail.wrongRecords).toBe(0);
    });

    it('starts an IDEMPOTENT key over at fence 1 after a release, and only then', () => {
      const history = clean();
      const run = (fence: number, execId: string, delivery: number, sentMs: number) =>
        execution(I, IDEMPOTENT_TOOL, fence, execId, 100, { delivery, sentMs });
      const ledger = [run(1, 'y1', 1, 100), run(2, 'y2', 2, 200), run(1, 'y3', 3, 2000)];
      const without = checkHistory({ ...history, ledger });
      expect(without.detail.repeatedFences).toBe(1);
      const released = checkHistory({
        ...history,
        ledger,
        releases: [{ key: I, startMs: 1000, endMs: 1001 }],
      });
      expect(released.detail.repeatedFences).toBe(0);
      expect(released.detail.duplicatesPerLife).toBe(0);
    });

    it('judges the record and the superseded fences per life of the key: a release starts it at fence 1 again', () => {
      // y1@1 and y2@2 ran, the fence-3 claim was released before its body (RULES G2), y3 ran at
      // fence 1 in the key's new life and is the record. Without the release that record is a
      // superseded fence's result recorded: both checks must still say so.
      const history = clean();
      const run = (fence: number, execId: string, delivery: number, sentMs: number) =>
        execution(I, IDEMPOTENT_TOOL, fence, execId, 100, { delivery, sentMs });
      const ledger = [
        execution(E, EFFECTFUL_TOOL, 1, 'x1'),
        run(1, 'y1', 1, 100),
        run(2, 'y2', 2, 200),
        run(1, 'y3', 3, 2000),
      ];
      const base = {
        ...history,
        ledger,
        records: new Map([...history.records, [I, record(I, 'completed', 1, 'y3')]]),
        calls: history.calls.slice(0, 2),
        events: [
          event('tool.completed', E, 1, true),
          event('tool.stale_result', I, 1, undefined, 1),
          event('tool.stale_result', I, 2, undefined, 2),
          { ...event('tool.completed', I, 1, true, 3), timeMs: 2100 },
        ],
        bodyEnds: new Map([...history.bodyEnds, ['y3', true]]),
      };
      const released = checkHistory({ ...base, releases: [{ key: I, startMs: 1000, endMs: 1001 }] });
      expect(released.violations).toEqual([]);
      expect(released.detail.wrongRecords).toBe(0);
      expect(released.detail.supersededRecorded).toBe(0);
      const unreleased = checkHistory(base);
      expect(unreleased.detail.wrongRecords).toBe(1);
      expect(unreleased.detail.supersededRecorded).toBe(1);
      expect(unreleased.detail.repeatedFences).toBe(1);
      // Another key's release excuses nothing.
      const other = checkHistory({ ...base, releases: [{ key: E, startMs: 1000, endMs: 1001 }] });
      expect(other.detail.wrongRecords).toBe(1);
      expect(other.detail.supersededRecorded).toBe(1);
    });

    it('accepts a value answered unrecorded only from the call that said so, with its own execution', () => {
      // Delivery 7 ran y2@fence2, lost its lease to fence 3 (which recorded y3), and could not
      // ask the store again: the guard answered y2 and said `recorded: false` (RULES G1).
      const history = clean();
      const ledger = [
        ...history.ledger.filter((entry) => entry.key !== I),
        execution(I, IDEMPOTENT_TOOL, 2, 'y2', 100, { delivery: 7, sentMs: 10 }),
        execution(I, IDEMPOTENT_TOOL, 3, 'y3', 100, { delivery: 8, sentMs: 20 }),
      ];
      const answer: Answer = { ...value('completed', 'y2', 2), id: 7 };
      const base = {
        ...history,
        ledger,
        records: new Map([...history.records, [I, record(I, 'completed', 3, 'y3')]]),
        calls: [history.calls[0] as (typeof history.calls)[number], { id: 'c7', key: I, answers: [answer] }],
        bodyEnds: new Map([...history.bodyEnds, ['y3', true]]),
      };
      const events = [event('tool.completed', E, 1, true), event('tool.stale_result', I, 2, undefined, 7)];
      const said = checkHistory({ ...base, events: [...events, event('tool.completed', I, 1, false, 7)] });
      expect(said.detail.misanswered).toBe(0);
      expect(said.detail.unrecordedAnswers).toBe(1);
      const silent = checkHistory({ ...base, events });
      expect(silent.detail.misanswered).toBe(1);
      // Another call's unrecorded value at the same fence excuses nothing.
      const other = checkHistory({ ...base, events: [...events, event('tool.completed', I, 2, false, 9)] });
      expect(other.detail.misanswered).toBe(1);
    });

    it('accepts an indeterminate answer whose own fence is still in progress (the mark did not land)', () => {
      const history = clean();
      const answer: Answer = { t: 'answer', id: 5, kind: 'indeterminate', fence: 1, ranHere: [] };
      const calls = [{ id: 'c5', key: E, answers: [answer] }];
      const pending = checkHistory({
        ...history,
        calls,
        records: new Map([...history.records, [E, record(E, 'in_progress', 1)]]),
      });
      expect(pending.detail.misanswered).toBe(0);
      const otherFence = checkHistory({
        ...history,
        calls,
        records: new Map([...history.records, [E, record(E, 'in_progress', 2)]]),
      });
      expect(otherFence.detail.misanswered).toBe(1);
    });

    it('checks the records a loss took: a completed record must name an execution of that life', () => {
      const history = reexecuted();
      const checks = checkHistory({
        ...history,
        losses: [lossAt1000([[E, record(E, 'completed', 1, 'x2')]])],
      });
      expect(checks.detail.wrongRecords).toBe(1);
    });
  });
});
