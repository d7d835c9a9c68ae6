// The client's idempotency key of a tools/call request: `params._meta[idempotencyKeyMeta]` or the
// top-level `params.idempotencyKey`, which the SDK strips before a handler sees it, so it is read
// where the raw request passes (readTopLevelKeys).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IdempotencyPolicy } from '@toolfence/core';
import { InvalidClientKeyError } from './not-run.js';
import type { ToolHandlerExtra } from './server-options.js';

/** The longest client idempotency key accepted (UTF-16 code units); the IETF draft's keys are far shorter. */
export const MAX_CLIENT_KEY_LENGTH = 255;

// The one Protocol method every incoming request passes through with its raw JSON-RPC message:
// the SDK's tools/call schema strips `params` members it does not know (a top-level
// `idempotencyKey` among them) before any handler sees them.
export interface ProtocolInternals {
  _onrequest(request: { method?: unknown; params?: unknown }, extra?: unknown): unknown;
}

/** The top-level `params.idempotencyKey` of the tools/call request being handled, if it has one. */
interface TopLevelKey {
  readonly value: unknown;
}
const topLevelKeys = new AsyncLocalStorage<TopLevelKey | undefined>();

/** The name of the top-level `params` member read as a client key (SEP-3182's proposal). */
export const IDEMPOTENCY_KEY_PARAM = 'idempotencyKey';

/**
 * Runs each incoming tools/call request with its raw top-level `params.idempotencyKey` in
 * `topLevelKeys`, where the fenced handler reads it (the SDK's parsed request no longer has it;
 * the handler runs in the request's async context).
 */
export function readTopLevelKeys(protocol: ProtocolInternals): void {
  const onRequest = protocol._onrequest;
  if (typeof onRequest !== 'function') {
    throw new TypeError(
      'fenceMcpServer needs an McpServer of @modelcontextprotocol/sdk ^1.32.2 (with _onrequest)',
    );
  }
  protocol._onrequest = function onToolfenceRequest(this: ProtocolInternals, request, extra) {
    const params = request?.params as Record<string, unknown> | undefined;
    const key =
      request?.method === 'tools/call' &&
      params !== null &&
      typeof params === 'object' &&
      Object.hasOwn(params, IDEMPOTENCY_KEY_PARAM)
        ? { value: params[IDEMPOTENCY_KEY_PARAM] }
        : undefined;
    return topLevelKeys.run(key, () => onRequest.call(this, request, extra));
  };
}

/** The policy with the client's key as its business key, held across runs of the tenant. */
export function businessKeyPolicy(policy: IdempotencyPolicy, clientKey: string): IdempotencyPolicy {
  const { keyArguments: _ignored, ...rest } = policy;
  return { ...rest, key: () => clientKey, scope: 'tenant' };
}

/**
 * The client's key: `params._meta[metaName]` and/or the top-level `params.idempotencyKey`. Both
 * set and equal: that key; both set and different: refused (which one the client meant is
 * unknown, and either choice could merge two calls or split one).
 * @throws InvalidClientKeyError a key that is not a non-empty string of at most 255 characters,
 *   or two keys that differ (before anything is claimed).
 */
export function clientKeyOf(extra: ToolHandlerExtra, metaName: string): string | undefined {
  const meta = extra._meta as Record<string, unknown> | undefined;
  const inMeta =
    meta === undefined || meta === null || !Object.hasOwn(meta, metaName)
      ? undefined
      : checkedKey(meta[metaName], `_meta.${metaName}`);
  const topLevel = topLevelKeys.getStore();
  const inParams = topLevel === undefined ? undefined : checkedKey(topLevel.value, IDEMPOTENCY_KEY_PARAM);
  if (inMeta !== undefined && inParams !== undefined && inMeta !== inParams) {
    throw new InvalidClientKeyError(
      `params.${IDEMPOTENCY_KEY_PARAM} and params._meta.${metaName} are both set and differ: send one key`,
    );
  }
  return inMeta ?? inParams;
}

function checkedKey(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLIENT_KEY_LENGTH) {
    // Thrown before anything is claimed: answered as a "not run" result.
    throw new InvalidClientKeyError(
      `${where} must be a non-empty string of at most ${MAX_CLIENT_KEY_LENGTH} characters`,
    );
  }
  return value;
}
