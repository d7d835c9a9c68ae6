import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { checkApprovalDecision } from '../store/approval-decisions.js';
import type {
  ApprovalDecision,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  DecideResult,
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
} from '../store/idempotency-store.js';
import * as input from '../store/store-input.js';
import { decideOn } from './approvals.js';
import { MemoryRecords } from './backend.js';
import { decideClaim } from './claim.js';
import { decideComplete, decideMarkIndeterminate, decideRelease, decideRenew } from './holder-writes.js';
import { listPage, ResolutionJournal } from './operator-reads.js';
import { decideResolve, forgetTenant } from './operator-writes.js';
import type { Clock, MemoryStoreOptions } from './options.js';
import { recordId, snapshot } from './record-codec.js';
import { MemoryWaiters } from './settle-wait.js';

/**
 * The embedded store: records in this process's memory. For one process (tests, demos, a single
 * server); records are lost when the process exits. Every operation is one synchronous critical
 * section, so it is atomic with respect to every other call in the process.
 *
 * Expired records are removed lazily on access and by an incremental sweep on every claim that
 * adds a record and every complete, so memory stays bounded by what the retention window keeps
 * live. Waiters are woken directly when a record settles (no polling) and by a timer at the
 * holder's lease deadline.
 */
export class MemoryStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  private readonly records = new MemoryRecords();
  private readonly journal = new ResolutionJournal();
  private readonly waiters: MemoryWaiters;
  private readonly clock: Clock;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? Date;
    this.waiters = new MemoryWaiters(this.records, this.clock);
  }

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.records.size;
  }

  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    input.checkRecordRef(ref);
    input.checkClaimOptions(options);
    this.assertOpen('claim');
    return decideClaim(this.records, ref, options, this.clock.now(), this.settled);
  }

  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkLeaseMs(leaseMs);
    this.assertOpen('renew');
    return decideRenew(this.records, ref, holder, leaseMs, this.clock.now());
  }

  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkOutcome(outcome);
    input.checkRetentionMs(retentionMs);
    this.assertOpen('complete');
    return this.settle(
      ref,
      decideComplete(this.records, ref, holder, outcome, retentionMs, this.clock.now()),
    );
  }

  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    this.assertOpen('release');
    return this.settle(ref, decideRelease(this.records, ref, holder, this.clock.now()));
  }

  async markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkRecordedError(error);
    input.checkRetentionMs(retentionMs);
    this.assertOpen('markIndeterminate');
    const now = this.clock.now();
    return this.settle(ref, decideMarkIndeterminate(this.records, ref, holder, error, retentionMs, now));
  }

  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    input.checkRecordRef(ref);
    this.assertOpen('get');
    const record = this.records.live(ref, this.clock.now());
    return record === undefined ? null : snapshot(record);
  }

  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    input.checkRecordRef(ref);
    input.checkResolution(resolution);
    input.checkRetentionMs(retentionMs);
    this.assertOpen('resolve');
    const now = this.clock.now();
    return this.settle(ref, decideResolve(this.records, this.journal, ref, resolution, retentionMs, now));
  }

  async decideApproval(
    ref: RecordRef,
    decision: ApprovalDecision,
    retentionMs: number,
  ): Promise<DecideResult> {
    input.checkRecordRef(ref);
    checkApprovalDecision(decision);
    input.checkRetentionMs(retentionMs);
    this.assertOpen('decideApproval');
    // Nobody waits on a record before its claim (waitForSettle answers it settled at once).
    return decideOn(this.records, ref, decision, retentionMs, this.clock.now());
  }

  async list(options: ListOptions): Promise<ListPage> {
    input.checkListOptions(options);
    this.assertOpen('list');
    const now = this.clock.now();
    const tenant = options.allTenants === true ? undefined : options.tenant;
    // Snapshots: a listed record must not carry the store's own fields.
    return listPage(Array.from(this.records.liveOf(tenant, now), snapshot), options, now);
  }

  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    input.checkRecordRef(ref);
    this.assertOpen('resolutions');
    return this.journal.read(recordId(ref), this.clock.now());
  }

  async forget(options: { readonly tenant: string }): Promise<number> {
    input.checkTenant(options?.tenant);
    this.assertOpen('forget');
    const settled = (id: string) => this.waiters.notify(id, 'settled');
    return forgetTenant(this.records, this.journal, options.tenant, settled);
  }

  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    input.checkRecordRef(ref);
    input.checkWaitOptions(options);
    this.assertOpen('waitForSettle');
    return this.waiters.wait(ref, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiters.notifyAll();
  }

  private assertOpen(operation: string): void {
    if (this.closed)
      throw new StoreUnavailableError(operation, 'the MemoryStore is closed', { outcome: 'not-applied' });
  }

  /** Wakes the record's waiters: it left `in_progress` (or is gone). One closure per store, not per claim. */
  private readonly settled = (ref: RecordRef): void => this.waiters.notifySettled(ref);

  /** The decision's result, after waking the waiters when it settled the record. */
  private settle<T>(ref: RecordRef, decided: { result: T; settled: boolean }): T {
    if (decided.settled) this.settled(ref);
    return decided.result;
  }
}
