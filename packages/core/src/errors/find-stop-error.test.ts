import { describe, expect, it } from 'vitest';
import { ExecutionAbandonedError } from './execution-abandoned-error.js';
import { findStopError } from './find-stop-error.js';
import { IndeterminateOutcomeError } from './indeterminate-outcome-error.js';
import { StepStoppedError } from './step-stopped-error.js';
import { isCallStopError, stopReport } from './stop-errors.js';

const unknown = (key: string) =>
  new IndeterminateOutcomeError({
    key,
    tool: 'refund',
    attempt: 1,
    fence: 2,
    reasonType: 'ECONNRESET',
    reason: 'r',
  });
const abandoned = (key: string) => new ExecutionAbandonedError({ key, tool: 'ship', attempt: 3, fence: 3 });

describe('findStopError', () => {
  it('finds one stop under cause chains and AggregateError errors, and returns it itself', () => {
    const stop = unknown('k1');
    const wrapped = new AggregateError([new Error('other'), new Error('wrap', { cause: stop })], 'step');
    expect(findStopError(wrapped)).toBe(stop);
    expect(findStopError(new Error('plain'))).toBeUndefined();
    expect(findStopError('text')).toBeUndefined();
    expect(findStopError(null)).toBeUndefined();
  });

  it('returns several distinct stops as one StepStoppedError, in the order found, each once', () => {
    const first = unknown('k1');
    const second = abandoned('k2');
    const found = findStopError([first, { cause: second }, first]);
    expect(StepStoppedError.isInstance(found)).toBe(true);
    expect((found as StepStoppedError).stops.map((call) => [call.key, call.callId])).toEqual([
      ['k1', undefined],
      ['k2', undefined],
    ]);
  });

  it('returns a StepStoppedError found anywhere as it is', () => {
    const step = new StepStoppedError([
      { key: 'a', tool: 'refund', callId: 'c1', error: unknown('a') },
      { key: 'b', tool: 'ship', callId: 'c2', error: abandoned('b') },
    ]);
    expect(findStopError([unknown('k0'), { errors: [step] }])).toBe(step);
  });

  it('looks through the places childrenOf names, with their call ids, and ignores cycles', () => {
    const first = unknown('k1');
    const second = abandoned('k2');
    const parts: Record<string, unknown> = {
      parts: [
        { error: first, id: 'call_1' },
        { error: second, id: 'call_2' },
      ],
    };
    parts.self = parts;
    const childrenOf = (value: object) => {
      const record = value as { parts?: unknown; error?: unknown; id?: unknown; self?: unknown };
      const children = [];
      if (Array.isArray(record.parts)) children.push({ value: record.parts });
      if (record.self !== undefined) children.push({ value: record.self });
      if (record.error !== undefined) children.push({ value: record.error, callId: record.id as string });
      return children;
    };
    expect(findStopError(parts)).toBeUndefined();
    const found = findStopError(parts, { childrenOf }) as StepStoppedError;
    expect(found.stops.map((call) => [call.key, call.callId])).toEqual([
      ['k1', 'call_1'],
      ['k2', 'call_2'],
    ]);
  });

  it('gives a stop met first without a call id the call id it is met with later', () => {
    const first = unknown('k1');
    const second = abandoned('k2');
    const childrenOf = (value: object) => {
      const record = value as { part?: { error: unknown; id: string } };
      return record.part === undefined ? [] : [{ value: record.part.error, callId: record.part.id }];
    };
    const found = findStopError([first, second, { part: { error: first, id: 'call_1' } }], { childrenOf });
    expect((found as StepStoppedError).stops.map((call) => call.callId)).toEqual(['call_1', undefined]);
  });

  it('stops 16 levels deep', () => {
    const stop = unknown('deep');
    let nested: unknown = stop;
    for (let level = 0; level < 16; level += 1) nested = { cause: nested };
    expect(findStopError(nested)).toBe(stop);
    expect(findStopError({ cause: nested })).toBeUndefined();
  });
});

describe('stop errors', () => {
  it('isCallStopError is true for the two call stops only', () => {
    expect(isCallStopError(unknown('k'))).toBe(true);
    expect(isCallStopError(abandoned('k'))).toBe(true);
    expect(isCallStopError(new Error('x'))).toBe(false);
    expect(isCallStopError(undefined)).toBe(false);
  });

  it('stopReport names the tool, the reason and the key, and says not to retry', () => {
    expect(stopReport(unknown('k1'))).toBe(
      'Tool "refund" did not finish cleanly: its outcome is unknown (ECONNRESET). The action may have happened. ' +
        'Do NOT call this tool again to retry it; tell the user the action must be verified ' +
        'before anything else is done about it. (toolfence idempotency key k1)',
    );
    expect(stopReport(abandoned('k2'))).toMatch(
      /^Tool "ship" did not finish cleanly: it was abandoned after 3 lost attempt\(s\)\. .*key k2\)$/,
    );
  });
});
