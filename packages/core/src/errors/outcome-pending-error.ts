import { ToolfenceError } from './toolfence-error.js';

/**
 * Another caller is still running the same call, and its answer did not arrive within
 * `waitTimeoutMs`. The call has NOT failed: its outcome is pending. Ask again later; the repeat
 * gets the recorded result once the holder finishes.
 */
export class OutcomePendingError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  /** How long this caller waited, in milliseconds. */
  readonly waitedMs: number;
  constructor(details: { key: string; tool: string; waitedMs: number }) {
    super(
      'OUTCOME_PENDING',
      `Tool "${details.tool}" is still running in another caller (idempotency key ${details.key}); ` +
        `its outcome is pending, not failed. Waited ${details.waitedMs} ms; ask again later.`,
    );
    this.name = 'OutcomePendingError';
    this.key = details.key;
    this.tool = details.tool;
    this.waitedMs = details.waitedMs;
  }
  static override isInstance(error: unknown): error is OutcomePendingError {
    return ToolfenceError.hasCode(error, 'OUTCOME_PENDING');
  }
}
