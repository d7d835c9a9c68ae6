import { createHash } from 'node:crypto';
import { canonicalJson, type ToolCallContext } from '@toolfence/core';

/**
 * The key a fenced client sends with one `callTool` made inside a guarded call:
 *
 * ```
 * lowercase_hex(SHA-256(UTF-8(canonical(
 *   { "v": 1, "mcpCall": { "key": <guarded key>, "tool": <tool>, "arguments": <arguments>, "n": <n> } }
 * ))))
 * ```
 *
 * `canonical` is the canonical JSON of docs/key-spec.md; `arguments` are the call's (`{}` when
 * absent); `n` is the 0-based ordinal of this call among the calls with the same tool and
 * canonical arguments made so far by the same attempt of the guarded call (a `tools/call` that
 * retries an `input_required` round, with `inputResponses` or `requestState`, is the same call
 * and gets the same `n`). So three different
 * calls get three keys, two identical ones two keys, and a retry of the guarded call (same key,
 * same calls in the same order) sends the same keys again: the server replays each.
 *
 * @param guardedKey the guarded call's `idempotencyKey` (64 lowercase hex characters).
 * @param ordinal a whole number, 0 for the first such call.
 * @returns 64 lowercase hexadecimal characters.
 * @throws CanonicalizationError the arguments are not JSON-representable (nothing is sent).
 * @throws TypeError a bad `guardedKey`, `tool` or `ordinal`.
 */
export function mcpCallKey(guardedKey: string, tool: string, args: unknown, ordinal: number): string {
  if (typeof guardedKey !== 'string' || guardedKey === '')
    throw new TypeError('mcpCallKey: guardedKey must be a non-empty string');
  if (typeof tool !== 'string' || tool === '')
    throw new TypeError('mcpCallKey: tool must be a non-empty string');
  if (!Number.isSafeInteger(ordinal) || ordinal < 0)
    throw new TypeError('mcpCallKey: ordinal must be a whole number >= 0');
  const envelope = { v: 1, mcpCall: { key: guardedKey, tool, arguments: args ?? {}, n: ordinal } };
  return createHash('sha256').update(canonicalJson(envelope), 'utf8').digest('hex');
}

// Per attempt of a guarded call (its context object): how many calls of each (tool, arguments)
// it has made. A retry is a new attempt, a new context, and counts from 0 again.
const ordinals = new WeakMap<ToolCallContext, Map<string, number>>();

/**
 * The key for the next `callTool(tool, args)` of the guarded call `context`. A `retryRound`
 * (the same call sent again with the answers to an `input_required` round) is no new call: it
 * gets the key of the last identical call, so the key is stable across the rounds.
 */
export function nextCallKey(
  context: ToolCallContext,
  tool: string,
  args: unknown,
  retryRound = false,
): string {
  let counts = ordinals.get(context);
  if (counts === undefined) {
    counts = new Map();
    ordinals.set(context, counts);
  }
  const identity = canonicalJson([tool, args ?? {}]);
  const made = counts.get(identity) ?? 0;
  if (retryRound && made > 0) return mcpCallKey(context.idempotencyKey, tool, args, made - 1);
  counts.set(identity, made + 1);
  return mcpCallKey(context.idempotencyKey, tool, args, made);
}
