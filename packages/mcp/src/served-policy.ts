// The policy a tool is served with: given, else from its annotations; checked once per tool; an
// EFFECTFUL one also releases on the MCP answers that did nothing; waits bounded for MCP clients.
import type { RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type Guard,
  Idempotency,
  type IdempotencyPolicy,
  PolicyError,
  type PolicyMap,
} from '@toolfence/core';
import { policyFromAnnotations } from './annotation-policy.js';
import { isClientActionError } from './client-action.js';
import { IncompleteRound } from './rounds.js';
import { McpToolError } from './tool-error.js';

export type PolicyOf = (toolName: string, tool: RegisteredTool) => IdempotencyPolicy | undefined;

/** A tool's policy (given, else from its annotations), checked once per tool and policy. */
export function policyLookup(
  guard: Guard,
  policies: PolicyMap,
  fromAnnotations: boolean,
  waits: WaitSettings,
): PolicyOf {
  const checked = new WeakMap<RegisteredTool, IdempotencyPolicy>();
  const adapted = new WeakMap<IdempotencyPolicy, IdempotencyPolicy>();
  return (toolName, tool) => {
    const policy = Object.hasOwn(policies, toolName)
      ? policies[toolName]
      : fromAnnotations
        ? policyFromAnnotations(tool.annotations)
        : undefined;
    if (policy === undefined) return undefined;
    // Checked once per tool and policy, against the tool's parameters.
    if (checked.get(tool) !== policy) {
      if (policy.key === 'call') {
        // The call id here is the JSON-RPC request id: a per-connection counter that a retry does
        // not repeat and another connection does reuse, so it would both miss repeats and merge
        // different calls.
        throw new PolicyError(
          'key',
          "'call' is not a key on an MCP server (the JSON-RPC request id is a per-connection counter): " +
            "use the client's _meta idempotency key, 'arguments' or a business key",
          { tool: toolName },
        );
      }
      guard.checkPolicy(policy, { tool: toolName, parameterNames: parameterNamesOf(tool.inputSchema) });
      checked.set(tool, policy);
    }
    if (policy.kind === Idempotency.READ_ONLY) return policy;
    // One copy per policy: the guard resolves each policy object once.
    let served = adapted.get(policy);
    if (served === undefined) {
      const resolvedWaitMs = guard.checkPolicy(policy, { tool: toolName }).waitTimeoutMs;
      served = servedPolicy(policy, resolvedWaitMs, waits);
      adapted.set(policy, served);
    }
    return served;
  };
}

export interface WaitSettings {
  readonly answerInFlight: boolean;
  readonly waitLimitMs: number;
}

/**
 * The policy as the server runs it: an EFFECTFUL one also releases on an error result the tool
 * marked as without effect, on an input_required round and on an error asking the client to act;
 * a duplicate of a running call waits at most `waitLimitMs` unless the policy sets its own
 * `waitTimeoutMs` (the resolved default, 60 s, equals the SDK client's request timeout: the
 * waiter's client would give up just as its answer came); with `inFlight: 'answer'` it waits
 * 1 ms, so it is answered "in progress" (`OutcomePendingError`, a retryable "not run") at once.
 */
function servedPolicy(
  policy: IdempotencyPolicy,
  resolvedWaitMs: number,
  waits: WaitSettings,
): IdempotencyPolicy {
  const effectful = policy.kind === Idempotency.EFFECTFUL ? acceptingNoEffectResults(policy) : policy;
  if (waits.answerInFlight) return { ...effectful, waitTimeoutMs: 1 };
  if (policy.waitTimeoutMs === undefined && resolvedWaitMs > waits.waitLimitMs) {
    return { ...effectful, waitTimeoutMs: waits.waitLimitMs };
  }
  return effectful;
}

/** An EFFECTFUL policy that also releases on an error result the tool marked as having had no effect. */
function acceptingNoEffectResults(policy: IdempotencyPolicy): IdempotencyPolicy {
  const own = policy.isNoEffectError;
  return {
    ...policy,
    isNoEffectError: (error) =>
      (McpToolError.isInstance(error) && error.noEffect) ||
      // A round that asked for input did not do the effect: that happens on the final round.
      IncompleteRound.isInstance(error) ||
      // "The user must open this URL first": nothing ran; the client gets the JSON-RPC error.
      isClientActionError(error) ||
      (own !== undefined && own(error) === true),
  };
}

/** The top-level parameter names of a registered tool's (zod object) input schema. */
function parameterNamesOf(schema: unknown): readonly string[] | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const internals = schema as {
    _zod?: { def?: { type?: unknown; shape?: unknown } };
    _def?: { typeName?: unknown; shape?: unknown };
  };
  const zod4 = internals._zod?.def;
  if (zod4 !== undefined) {
    return zod4.type === 'object' && isRecord(zod4.shape) ? Object.keys(zod4.shape) : undefined;
  }
  const zod3 = internals._def;
  if (zod3?.typeName === 'ZodObject') {
    const shape = typeof zod3.shape === 'function' ? (zod3.shape as () => unknown)() : zod3.shape;
    return isRecord(shape) ? Object.keys(shape) : undefined;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}
