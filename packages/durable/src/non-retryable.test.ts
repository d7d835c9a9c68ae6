import { IndeterminateOutcomeError } from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { nonRetryableError, temporalNonRetryable } from './non-retryable.js';

const stop = new IndeterminateOutcomeError({
  key: 'k'.repeat(64),
  tool: 'chargeCard',
  attempt: 1,
  fence: 1,
  reasonType: 'Error',
  reason: 'socket hang up',
});

describe('nonRetryableError', () => {
  it('passes message and cause to a class that takes both (Inngest, Restate)', () => {
    class NonRetriableError extends Error {
      override name = 'NonRetriableError';
    }
    const error = nonRetryableError(NonRetriableError)(stop);
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(error.message).toBe(stop.message);
    expect(error.cause).toBe(stop);
  });

  it('sets the cause on a class that takes a message only (Workflow DevKit FatalError)', () => {
    class FatalError extends Error {
      constructor(message: string) {
        super(message);
        this.name = 'FatalError';
      }
    }
    const error = nonRetryableError(FatalError)(stop);
    expect(error).toBeInstanceOf(FatalError);
    expect(error.cause).toBe(stop);
  });

  it('refuses what is not a class', () => {
    expect(() => nonRetryableError(undefined as never)).toThrow(TypeError);
  });
});

describe('temporalNonRetryable', () => {
  it('creates a non-retryable ApplicationFailure typed by the stop, with its key', () => {
    const created: unknown[] = [];
    const ApplicationFailure = {
      create(options: Record<string, unknown>) {
        created.push(options);
        return Object.assign(new Error(String(options.message)), options);
      },
    };
    const error = temporalNonRetryable(ApplicationFailure)(stop);
    expect(created).toEqual([
      {
        message: stop.message,
        type: 'IndeterminateOutcomeError',
        nonRetryable: true,
        details: [{ key: stop.key, tool: 'chargeCard', code: 'INDETERMINATE_OUTCOME' }],
        cause: stop,
      },
    ]);
    expect(error).toMatchObject({ nonRetryable: true });
    expect(() => temporalNonRetryable({} as never)).toThrow(TypeError);
  });
});
