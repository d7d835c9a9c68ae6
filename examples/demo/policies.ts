// The whole toolfence configuration of the demo: how repeating each tool affects the world. The
// same table guards the LangChain agent (toolfenceMiddleware) and the AI SDK agent (fenceTools).
import { Idempotency, type IdempotencyPolicy } from '@toolfence/core';

export const policies = {
  lookup_order: { kind: Idempotency.READ_ONLY },
  update_address: { kind: Idempotency.IDEMPOTENT },
  refund_payment: { kind: Idempotency.EFFECTFUL },
} as const satisfies Record<string, IdempotencyPolicy>;

export type ToolName = keyof typeof policies;

/** The tenant every demo call runs under. */
export const TENANT = 'demo-shop';

/** One tool call the scripted model makes. */
export interface ScriptedCall {
  readonly name: ToolName | 'ask_approval';
  readonly args: Record<string, unknown>;
  readonly id: string;
}

/** What the scripted model says at each step: tool calls, or a final text. */
export type Script = ReadonlyArray<ReadonlyArray<ScriptedCall> | string>;
