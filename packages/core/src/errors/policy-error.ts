import { ToolfenceError } from './toolfence-error.js';

/** A policy or guard option is invalid. Thrown when the policy is created or the tool wrapped. */
export class PolicyError extends ToolfenceError {
  /** The tool the policy was meant for, when known. */
  readonly tool: string | undefined;
  /** The policy field at fault, e.g. `heartbeatMs`. */
  readonly field: string;
  constructor(field: string, reason: string, options?: { tool?: string; cause?: unknown }) {
    const where = options?.tool === undefined ? '' : ` of tool "${options.tool}"`;
    super('INVALID_POLICY', `Invalid idempotency policy${where}: ${field} ${reason}`, options);
    this.name = 'PolicyError';
    this.tool = options?.tool;
    this.field = field;
  }
  static override isInstance(error: unknown): error is PolicyError {
    return ToolfenceError.hasCode(error, 'INVALID_POLICY');
  }
}
