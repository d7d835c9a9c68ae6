// What a guarded server's replay looks like: the recorded result plus the replayed marker in
// `_meta` (issue #36), for tests that compare a repeat with the first answer.
import { REPLAYED_META } from '@toolfence/mcp';

/** `result` as a replay of it arrives: the same, with `_meta["io.toolfence/replayed"]: true`. */
export function replayOf<T>(result: T): T {
  const own = (result as { _meta?: Record<string, unknown> })._meta;
  return { ...result, _meta: { ...(own ?? {}), [REPLAYED_META]: true } };
}

/** `result` without the replayed marker (and without `_meta` when nothing else was in it). */
export function withoutReplayMarker<T>(result: T): T {
  const { _meta: own, ...rest } = result as { _meta?: Record<string, unknown> };
  if (own === undefined) return result;
  const { [REPLAYED_META]: _marker, ...meta } = own;
  return (Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta }) as T;
}
