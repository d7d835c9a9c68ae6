// A record's version, carried by the action forms: an action is refused when the record changed
// since the operator looked at it (another operator settled it, the holder stated its outcome
// late, the key was released and a new life of it stopped again). The owner tells two lives of a
// key apart (a new life starts again at fence 1), the fence and attempt the attempts of one life.
// This check is a read before the write, for the friendly message; what decides is the store:
// /resolve passes the form's fence and owner as `resolution.expect` (routes/action-route.ts).
import { createHash } from 'node:crypto';
import type { IdempotencyRecord } from '@toolfence/core';

/** A short digest of what identifies the record's current state, life and attempt. */
export function recordVersion(record: IdempotencyRecord): string {
  const identity = JSON.stringify([
    record.state,
    record.owner,
    record.fence,
    record.attempt,
    record.updatedAtMs ?? null,
    record.claimedAtMs ?? null,
  ]);
  return createHash('sha256').update(identity).digest('base64url').slice(0, 22);
}
