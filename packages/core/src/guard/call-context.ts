import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a guarded tool body can know about the call it runs, reachable without changing the
 * tool's signature through {@link currentToolCall}.
 */
export interface ToolCallContext {
  /** The idempotency key (lowercase hex SHA-256). Pass it to a provider that dedupes by key. */
  readonly idempotencyKey: string;
  /** 1 for the first attempt; +1 for every takeover after a lost holder. */
  readonly attempt: number;
  /**
   * Fencing token of this attempt: strictly increasing across the attempts of one claim (each
   * takeover of a lost holder adds 1). Pass it, with the idempotency key, to a downstream that can
   * reject writes from a superseded attempt. A claim that ends without an outcome (a failed
   * IDEMPOTENT attempt releases it; an operator releases an indeterminate one) or that passes its
   * retention window is gone: the next claim of the key starts again at 1, so a downstream
   * should compare fences per claim (key + `attempt` 1 marks a new one), not across releases.
   */
  readonly fence: number;
  /**
   * Aborted when the lease is lost (reason: `LeaseLostError`), at the policy's `timeoutMs`
   * (reason: `ToolTimeoutError`), or when the caller's own signal aborts.
   */
  readonly signal: AbortSignal;
  readonly tenant: string;
  readonly runId: string | undefined;
  readonly callId: string | undefined;
  readonly tool: string;
}

const storage = new AsyncLocalStorage<ToolCallContext>();

/** The context of the guarded call the current code runs in, or `undefined` outside one. */
export function currentToolCall(): ToolCallContext | undefined {
  return storage.getStore();
}

/** Run `fn` with `context` as the current tool call. Internal to the guard. */
export function runWithToolCall<T>(context: ToolCallContext, fn: () => T): T {
  return storage.run(context, fn);
}
