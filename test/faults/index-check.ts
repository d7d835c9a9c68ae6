// After a fault run, the operator's listing must agree with the records themselves: every live
// record the store returns by `get` is listed once, in its state, with its fence and owner, and
// nothing is listed that `get` does not return. On Redis the listing is an index of sorted sets
// kept beside the records by the same scripts (a record loss, a killed connection or a frozen
// store between two of them would show here); on PostgreSQL and SQLite it is a partial index of
// the records table. An index that disagrees sends an operator to a call that is not waiting, or
// hides one that is (docs/operations.md).
import type { IdempotencyRecord, IdempotencyStore, ListedRecord, ListState } from '@toolfence/core';

/** Every state a record can be listed in (`lease_expired` is a subset of `in_progress`). */
const ALL_STATES: readonly ListState[] = ['in_progress', 'indeterminate', 'abandoned', 'completed'];
const PAGE = 500;

/** Every record of `tenant`, by every state, all pages. */
export async function listEveryRecord(store: IdempotencyStore, tenant: string): Promise<ListedRecord[]> {
  const listed: ListedRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({
      tenant,
      states: ALL_STATES,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    listed.push(...page.records);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return listed;
}

export interface IndexCheck {
  /** Records `get` returned. */
  readonly records: number;
  /** Records the listing returned. */
  readonly listed: number;
  /** Live records the listing left out. */
  readonly missing: number;
  /** Listed records `get` does not return (deleted, expired, or never there). */
  readonly phantom: number;
  /** Keys listed more than once. */
  readonly repeated: number;
  /** Listed with another state, fence or owner than `get` returns. */
  readonly disagreeing: number;
  readonly violations: readonly string[];
}

/**
 * Compares the listing with the records read by `get` (both after the run, nothing running).
 * `records` maps every key of the run to its record or null.
 */
export function checkIndex(
  records: ReadonlyMap<string, IdempotencyRecord | null>,
  listed: readonly ListedRecord[],
): IndexCheck {
  const violations: string[] = [];
  const note = (text: string) => {
    if (violations.length < 20) violations.push(text);
  };
  const seen = new Map<string, ListedRecord>();
  let repeated = 0;
  let phantom = 0;
  let disagreeing = 0;
  for (const entry of listed) {
    if (seen.has(entry.key)) {
      repeated += 1;
      note(`index: key ${entry.key.slice(0, 12)} listed twice`);
      continue;
    }
    seen.set(entry.key, entry);
    const record = records.get(entry.key) ?? null;
    if (record === null) {
      phantom += 1;
      note(`index: key ${entry.key.slice(0, 12)} listed ${entry.state}, but get finds no record`);
    } else if (record.state !== entry.state || record.fence !== entry.fence || record.owner !== entry.owner) {
      disagreeing += 1;
      note(
        `index: key ${entry.key.slice(0, 12)} listed ${entry.state} fence ${entry.fence}, get says ${record.state} fence ${record.fence}`,
      );
    }
  }
  let missing = 0;
  let present = 0;
  for (const [key, record] of records) {
    if (record === null) continue;
    present += 1;
    if (!seen.has(key)) {
      missing += 1;
      note(`index: key ${key.slice(0, 12)} (${record.state}, fence ${record.fence}) is not listed`);
    }
  }
  return { records: present, listed: listed.length, missing, phantom, repeated, disagreeing, violations };
}
