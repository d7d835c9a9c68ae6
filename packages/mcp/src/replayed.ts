/**
 * The `_meta` field a guarded server sets to `true` on a result it did not produce for this
 * request: a repeat of a recorded call (the recorded result), or a duplicate that waited for the
 * call holding its key (that call's result). Nothing ran for this request: no notification, no
 * sampling or elicitation request was sent, and what the content says about the request (a
 * progress token, a user's answer, a time) is the first request's. Absent on a result the tool
 * produced for this request.
 */
export const REPLAYED_META = 'io.toolfence/replayed';

/** Whether a result carries `_meta["io.toolfence/replayed"]: true` (see {@link REPLAYED_META}). */
export function isReplayed(result: unknown): boolean {
  if (result === null || typeof result !== 'object') return false;
  const meta = (result as { _meta?: unknown })._meta;
  return (
    meta !== null && typeof meta === 'object' && (meta as Record<string, unknown>)[REPLAYED_META] === true
  );
}

/** `result` with the replayed marker added to its `_meta` (a copy; other values as they are). */
export function markedReplayed(result: unknown): unknown {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return result;
  const own = (result as { _meta?: unknown })._meta;
  const meta = own !== null && typeof own === 'object' ? (own as Record<string, unknown>) : {};
  return { ...result, _meta: { ...meta, [REPLAYED_META]: true } };
}
