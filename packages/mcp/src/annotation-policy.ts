import { Idempotency, type IdempotencyPolicy } from '@toolfence/core';

/** The MCP tool annotations the policy is read from (`ToolAnnotations` of the specification). */
export interface ToolHints {
  readonly readOnlyHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly openWorldHint?: boolean | undefined;
}

// One object per kind, so the guard resolves each once.
const readOnlyPolicy: IdempotencyPolicy = Object.freeze({ kind: Idempotency.READ_ONLY });
const idempotentPolicy: IdempotencyPolicy = Object.freeze({ kind: Idempotency.IDEMPOTENT });
const effectfulPolicy: IdempotencyPolicy = Object.freeze({ kind: Idempotency.EFFECTFUL });

/**
 * The policy a tool's MCP annotations describe: `readOnlyHint: true` -> READ_ONLY,
 * `idempotentHint: true` -> IDEMPOTENT, anything else (no annotations included) -> EFFECTFUL,
 * the specification's defaults (`readOnlyHint: false`, `idempotentHint: false`). Key on all
 * arguments, run scope, every duration the guard's default.
 *
 * Only trust the annotations of a server you run: the specification says clients must treat
 * annotations from untrusted servers as untrusted.
 */
export function policyFromAnnotations(annotations: ToolHints | undefined): IdempotencyPolicy {
  if (annotations?.readOnlyHint === true) return readOnlyPolicy;
  if (annotations?.idempotentHint === true) return idempotentPolicy;
  return effectfulPolicy;
}
