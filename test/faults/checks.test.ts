// The checker of the fault suite must catch what it claims to catch: fed histories with a
// duplicate execution, a wrong recorded result, a lost call and an unfenced stale result, it must
// count each one. (A checker that always says 0 would make the fault runs prove nothing.)
import type { IdempotencyRecord } from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { checkHistory, type History } from './checks.js';
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

function execution(key: string, tool: ToolName, fence: number, execId: string, pid = 100): LedgerEntry {
  return { execId, key, tool, fence, attempt: fence, pid, worker: 'w', timeMs: 0 };
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

function event(type: string, key: string, fence: number, recorded?: boolean): EventMessage {
  return { t: 'event', type, key, fence, attempt: fence, ...(recorded === undefined ? {} : { recorded }) };
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
});
