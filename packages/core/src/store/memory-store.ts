import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import type {
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionEntry,
  ResolveResult,
  WaitOptions,
  WaitResult,
} from './idempotency-store.js';
import { listPage, ResolutionJournal, TenantIndex } from './memory-listing.js';
import {
  attemptsLostError,
  callInfo,
  isHolder,
  leaseExpiredError,
  type MutableRecord,
  recordId,
  resolutionEntry,
  snapshot,
  snapshotOf,
} from './memory-records.js';
import { type Waiter, waitOnRecord } from './memory-wait.js';
import {
  checkClaimOptions,
  checkHolder,
  checkLeaseMs,
  checkListOptions,
  checkOutcome,
  checkRecordedError,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkTenant,
  checkWaitOptions,
} from './store-input.js';

/** A clock in epoch milliseconds. */
export interface Clock {
  now(): number;
}

export interface MemoryStoreOptions {
  /** Clock used for leases and retention. Default `Date`. Inject one to test time. */
  readonly clock?: Clock;
}

/** How many records each write examines for expiry (incremental sweep, as Redis does). */
const SWEEP_PER_WRITE = 4;

/**
 * The embedded store: records in this process's memory. For one process (tests, demos, a single
 * server); records are lost when the process exits. Every operation is one synchronous critical
 * section, so it is atomic with respect to every other call in the process.
 *
 * Expired records are removed lazily on access and by an incremental sweep on every write, so
 * memory stays bounded by what the retention window keeps live. Waiters are woken directly when a
 * record settles (no polling) and by a timer at the holder's lease deadline.
 */
export class MemoryStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  private readonly records = new Map<string, MutableRecord>();
  private readonly index = new TenantIndex();
  private readonly journal = new ResolutionJournal();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly clock: Clock;
  private sweepCursor: Iterator<[string, MutableRecord]> | undefined;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? Date;
  }

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.records.size;
  }

  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    checkRecordRef(ref);
    checkClaimOptions(options);
    this.assertOpen('claim');
    const id = recordId(ref);
    const now = this.clock.now();
    this.sweep(now);
    const record = this.live(id, now);
    if (record === undefined) {
      const created: MutableRecord = {
        key: ref.key,
        tenant: ref.tenant,
        tool: options.tool,
        fingerprint: options.fingerprint,
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: options.owner,
        leaseExpiresAtMs: now + options.leaseMs,
        expiresAtMs: now + options.leaseMs + options.retentionMs,
        ...callInfo(options),
        claimedAtMs: now,
        updatedAtMs: now,
        retentionMs: options.retentionMs,
      };
      this.records.set(id, created);
      this.index.add(ref.tenant, id);
      return {
        status: 'acquired',
        fence: 1,
        attempt: 1,
        leaseExpiresAtMs: created.leaseExpiresAtMs,
        takeover: false,
      };
    }
    if (
      record.tool !== options.tool ||
      (options.checkFingerprint && record.fingerprint !== options.fingerprint)
    ) {
      return { status: 'conflict', record: snapshot(record) };
    }
    if (record.state === 'in_progress' && record.owner === options.owner) {
      // The holder asking again (a resent request whose reply was lost): answer as the first time,
      // with the lease restarted, since the claimer never got the first answer.
      record.leaseExpiresAtMs = Math.max(record.leaseExpiresAtMs, now + options.leaseMs);
      record.expiresAtMs = Math.max(record.expiresAtMs, record.leaseExpiresAtMs + options.retentionMs);
      return {
        status: 'acquired',
        fence: record.fence,
        attempt: record.attempt,
        leaseExpiresAtMs: record.leaseExpiresAtMs,
        takeover: record.attempt > 1,
      };
    }
    // completed / indeterminate / abandoned: that state, with the record.
    if (record.state !== 'in_progress') return { status: record.state, record: snapshot(record) };
    if (record.leaseExpiresAtMs > now) {
      return { status: 'busy', record: snapshot(record), nowMs: now };
    }
    if (options.mode === 'at-most-once') {
      record.state = 'indeterminate';
      record.error = leaseExpiredError(record);
      record.expiresAtMs = now + options.retentionMs;
      record.updatedAtMs = now;
      this.notify(id, 'settled');
      return { status: 'indeterminate', record: snapshot(record) };
    }
    if (record.attempt >= options.maxAttempts) {
      record.state = 'abandoned';
      record.error = attemptsLostError(record, options.maxAttempts);
      record.expiresAtMs = now + options.retentionMs;
      record.updatedAtMs = now;
      this.notify(id, 'settled');
      return { status: 'abandoned', record: snapshot(record) };
    }
    record.fence += 1;
    record.attempt += 1;
    record.owner = options.owner;
    record.leaseExpiresAtMs = now + options.leaseMs;
    record.expiresAtMs = now + options.leaseMs + options.retentionMs;
    record.retentionMs = options.retentionMs;
    Object.assign(record, callInfo(options), { claimedAtMs: now, updatedAtMs: now });
    return {
      status: 'acquired',
      fence: record.fence,
      attempt: record.attempt,
      leaseExpiresAtMs: record.leaseExpiresAtMs,
      takeover: true,
    };
  }

  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkLeaseMs(leaseMs);
    this.assertOpen('renew');
    const now = this.clock.now();
    const record = this.live(recordId(ref), now);
    if (record === undefined) return { status: 'lost', reason: 'not_found' };
    if (!isHolder(record, holder)) return { status: 'lost', reason: 'stale' };
    if (record.state !== 'in_progress') return { status: 'lost', reason: 'settled' };
    record.leaseExpiresAtMs = now + leaseMs;
    // As Redis and PostgreSQL: a live claim outlives its lease by a full retention window, so a
    // long-running holder's record can never expire with its lease (found by the spin model).
    record.expiresAtMs = Math.max(record.expiresAtMs, record.leaseExpiresAtMs + record.retentionMs);
    return { status: 'renewed', leaseExpiresAtMs: record.leaseExpiresAtMs };
  }

  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkOutcome(outcome);
    checkRetentionMs(retentionMs);
    this.assertOpen('complete');
    const id = recordId(ref);
    const now = this.clock.now();
    this.sweep(now);
    const record = this.live(id, now);
    if (record === undefined) return { status: 'not_found' };
    if (!isHolder(record, holder) || record.state === 'completed') {
      return { status: 'stale', record: snapshot(record) };
    }
    record.state = 'completed';
    record.outcome = outcome;
    delete record.error;
    record.expiresAtMs = now + retentionMs;
    record.updatedAtMs = now;
    this.notify(id, 'settled');
    return { status: 'completed' };
  }

  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    this.assertOpen('release');
    const id = recordId(ref);
    const now = this.clock.now();
    const record = this.live(id, now);
    if (record === undefined) return { status: 'not_found' };
    if (!isHolder(record, holder) || record.state !== 'in_progress') {
      return { status: 'stale', record: snapshot(record) };
    }
    this.drop(id, record);
    this.notify(id, 'settled');
    return { status: 'released' };
  }

  async markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkRecordedError(error);
    checkRetentionMs(retentionMs);
    this.assertOpen('markIndeterminate');
    const id = recordId(ref);
    const now = this.clock.now();
    const record = this.live(id, now);
    if (record === undefined) return { status: 'not_found' };
    if (!isHolder(record, holder) || record.state !== 'in_progress') {
      return { status: 'stale', record: snapshot(record) };
    }
    record.state = 'indeterminate';
    record.error = { type: error.type, message: error.message };
    record.expiresAtMs = now + retentionMs;
    record.updatedAtMs = now;
    this.notify(id, 'settled');
    return { status: 'marked' };
  }

  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    checkRecordRef(ref);
    this.assertOpen('get');
    const record = this.live(recordId(ref), this.clock.now());
    return record === undefined ? null : snapshot(record);
  }

  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    checkRetentionMs(retentionMs);
    this.assertOpen('resolve');
    const id = recordId(ref);
    const now = this.clock.now();
    const record = this.live(id, now);
    if (record === undefined) return { status: 'not_found' };
    if (record.state !== 'indeterminate' && record.state !== 'abandoned') {
      return { status: 'not_resolvable', record: snapshot(record) };
    }
    const entry = resolutionEntry(record, resolution, now);
    if ('outcome' in resolution) {
      record.state = 'completed';
      record.outcome = resolution.outcome;
      delete record.error;
      record.expiresAtMs = now + retentionMs;
      record.updatedAtMs = now;
      record.resolution = entry;
    } else {
      this.drop(id, record);
    }
    this.journal.add(id, entry, now + retentionMs);
    this.notify(id, 'settled');
    return { status: 'resolved' };
  }

  async list(options: ListOptions): Promise<ListPage> {
    checkListOptions(options);
    this.assertOpen('list');
    const now = this.clock.now();
    return listPage(this.index, (id) => snapshotOf(this.live(id, now)), options, now);
  }

  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    checkRecordRef(ref);
    this.assertOpen('resolutions');
    return this.journal.read(recordId(ref), this.clock.now());
  }

  async forget(options: { readonly tenant: string }): Promise<number> {
    checkTenant(options?.tenant);
    this.assertOpen('forget');
    let erased = 0;
    for (const [id, record] of this.records) {
      if (record.tenant === options.tenant) {
        this.drop(id, record);
        this.notify(id, 'settled');
        erased += 1;
      }
    }
    this.journal.forget(options.tenant);
    return erased;
  }

  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    this.assertOpen('waitForSettle');
    const id = recordId(ref);
    const now = this.clock.now();
    const record = this.live(id, now);
    if (record === undefined || record.state !== 'in_progress') return Promise.resolve('settled');
    if (record.leaseExpiresAtMs <= now) return Promise.resolve('lease_expired');
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);

    return waitOnRecord(
      { clock: this.clock, waiters: this.waiters, live: (nowMs) => this.live(id, nowMs) },
      id,
      record.leaseExpiresAtMs,
      now,
      options,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [id] of this.waiters) this.notify(id, 'settled');
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new StoreUnavailableError(operation, 'the MemoryStore is closed');
  }

  /** The record if it exists and is within retention; removes it otherwise. */
  private live(id: string, now: number): MutableRecord | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    if (record.expiresAtMs <= now) {
      this.drop(id, record);
      return undefined;
    }
    return record;
  }

  private sweep(now: number): void {
    for (let examined = 0; examined < SWEEP_PER_WRITE; examined++) {
      this.sweepCursor ??= this.records.entries();
      const next = this.sweepCursor.next();
      if (next.done === true) {
        this.sweepCursor = undefined;
        return;
      }
      const [id, record] = next.value;
      if (record.expiresAtMs <= now) this.drop(id, record);
    }
  }

  /** Delete a record and its index entry, in the same synchronous step. */
  private drop(id: string, record: MutableRecord): void {
    this.records.delete(id);
    this.index.remove(record.tenant, id);
  }

  private notify(id: string, result: WaitResult): void {
    const set = this.waiters.get(id);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.wake(result);
  }
}
