import { ToolfenceError } from './toolfence-error.js';

/**
 * A guarded body ran past the policy's `timeoutMs`. Its `signal` was aborted with this error.
 * For IDEMPOTENT tools the caller receives it (the claim is released); for EFFECTFUL tools the
 * caller receives an `IndeterminateOutcomeError` whose cause is this error.
 */
export class ToolTimeoutError extends ToolfenceError {
  readonly tool: string;
  readonly timeoutMs: number;
  constructor(tool: string, timeoutMs: number) {
    super('TOOL_TIMEOUT', `Tool "${tool}" did not finish within ${timeoutMs} ms.`);
    this.name = 'ToolTimeoutError';
    this.tool = tool;
    this.timeoutMs = timeoutMs;
  }
  static override isInstance(error: unknown): error is ToolTimeoutError {
    return ToolfenceError.hasCode(error, 'TOOL_TIMEOUT');
  }
}
