// A small Map-based store, correct with no bug switched on, and the realistic bugs a store author
// writes, each behind a flag. The mutants (mutants.ts) are this store with one bug each; the
// conformance suite must catch every one of them (mutants.test.ts). Kept out of the package: a
// deliberately broken store is not something to ship to users.
import {
  type ApprovalDecision,
  afterCursor,
  approvalClaimDecision,
  approvalDecision,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  checkApprovalDecision,
  checkClaimOptions,
  checkHolder,
  checkLeaseMs,
  checkListOptions,
  checkOutcome,
  checkRecordedError,
  checkRecordRef,
  checkResolutionAudit,
  checkResolutionCondition,
  checkResolutionForce,
  checkRetentionMs,
  claimConflicts,
  compareListPositions,
  type DecideResult,
  decodeListCursor,
  encodeListCursor,
  type Holder,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  listedStates,
  type MarkIndeterminateResult,
  overridesLiveHolder,
  type RecordedError,
  type RecordRef,
  type ReleaseResult,
  type RenewResult,
  type Resolution,
  type ResolutionEntry,
  type ResolveResult,
  recordMatches,
  resolveDecision,
  StoreInputError,
  StoreUnavailableError,
  type WaitOptions,
  type WaitResult,
} from '@toolfence/core/store';

export type Bug =
  | 'claim-read-await-write'
  | 'takeover-read-await-write'
  | 'mark-expired-read-await-write'
  | 'complete-read-await-write'
  | 'renew-read-await-write'
  | 'release-read-await-write'
  | 'mark-read-await-write'
  | 'resolve-read-await-write'
  | 'complete-unfenced'
  | 'holder-fence-only'
  | 'holder-owner-only'
  | 'renew-unchecked'
  | 'release-unchecked'
  | 'resolve-in-progress'
  | 'resolve-refuses-expired'
  | 'resolve-forced-unmarked'
  | 'resolve-expect-fence-only'
  | 'resolve-ignores-expect'
  | 'retention-from-claim'
  | 'retention-in-seconds'
  | 'renew-keeps-retention'
  | 'worker-clock'
  | 'wait-misses-release'
  | 'wait-fires-early'
  | 'forget-prefix'
  | 'conflict-ignores-fingerprint'
  | 'answers-when-down'
  | 'takeover-keeps-attempt'
  | 'max-attempts-off-by-one'
  | 'complete-overwrites-completed'
  | 'resend-busy'
  | 'input-unchecked'
  | 'nul-truncates-outcome'
  | 'lone-surrogate-replaced'
  | 'outcome-limit-1mib'
  | 'at-most-once-takes-over'
  | 'list-returns-outcome'
  | 'release-drops-resolution'
  | 'approval-consume-read-await-write'
  | 'approval-ignores-fingerprint'
  | 'denial-overridable';

export interface MapStoreOptions {
  readonly bugs?: readonly Bug[];
  /** The store's clock (epoch ms); the worker's is `Date.now()`. */
  readonly clock?: () => number;
  /** The backend is unreachable. */
  readonly down?: boolean;
}

type Row = { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } & {
  retentionMs: number;
  claimedAtMs: number;
};

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

export class MapStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  readonly #rows = new Map<string, Row>();
  readonly #journal = new Map<string, { entry: ResolutionEntry; expiresAtMs: number }[]>();
  readonly #waiters = new Map<string, Set<(result: WaitResult) => void>>();
  readonly #bugs: ReadonlySet<Bug>;
  readonly #clock: () => number;
  readonly #down: boolean;
  #closed = false;

  constructor(options: MapStoreOptions = {}) {
    this.#bugs = new Set(options.bugs ?? []);
    this.#clock = options.clock ?? Date.now;
    this.#down = options.down ?? false;
  }

  #has(bug: Bug): boolean {
    return this.#bugs.has(bug);
  }

  #check(run: () => void): void {
    if (!this.#has('input-unchecked')) run();
  }

  #open(operation: string): void {
    if (this.#closed) throw new StoreUnavailableError(operation, 'the store is closed');
    if (this.#down) throw new StoreUnavailableError(operation, 'connection refused');
  }

  #live(id: string, now: number): Row | undefined {
    const row = this.#rows.get(id);
    if (row !== undefined && row.expiresAtMs <= now) {
      this.#rows.delete(id);
      return undefined;
    }
    return row;
  }

  #isHolder(row: Row, holder: Holder): boolean {
    if (this.#has('holder-fence-only')) return row.fence === holder.fence;
    if (this.#has('holder-owner-only')) return row.owner === holder.owner;
    return row.fence === holder.fence && row.owner === holder.owner;
  }

  #expiry(deadlineMs: number): number {
    // Whole seconds, as with EXPIRE instead of PEXPIRE.
    return this.#has('retention-in-seconds') ? Math.floor(deadlineMs / 1000) * 1000 : deadlineMs;
  }

  #settleExpiry(row: Row, now: number, retentionMs: number): number {
    return this.#expiry(
      this.#has('retention-from-claim') ? row.claimedAtMs + retentionMs : now + retentionMs,
    );
  }

  #store(outcome: string): string {
    if (this.#has('nul-truncates-outcome') && outcome.includes('\u0000'))
      return outcome.slice(0, outcome.indexOf('\u0000'));
    if (this.#has('lone-surrogate-replaced'))
      return (outcome as string & { toWellFormed(): string }).toWellFormed();
    return outcome;
  }

  #checkOutcome(outcome: string): void {
    if (this.#has('lone-surrogate-replaced')) {
      if (typeof outcome !== 'string') throw new StoreInputError('outcome', 'must be a string');
      return;
    }
    this.#check(() => checkOutcome(outcome));
    if (this.#has('outcome-limit-1mib') && outcome.length > 1_048_576 + 64) {
      throw new StoreInputError('outcome', 'must be at most 1 MiB');
    }
  }

  #notify(id: string, result: WaitResult): void {
    for (const wake of [...(this.#waiters.get(id) ?? [])]) wake(result);
  }

  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkClaimOptions(options);
    });
    this.#open('claim');
    const id = idOf(ref);
    // The worker's clock for deadlines, the store's for judging them.
    const deadlineNow = this.#has('worker-clock') ? Date.now() : this.#clock();
    let now = this.#clock();
    let row = this.#live(id, now);
    if (row === undefined && options.approval === 'required') {
      const request: Row = {
        ...beforeClaim(ref, options, 'awaiting_approval', now, this.#expiry(now + options.retentionMs)),
        owner: options.owner,
        retentionMs: options.retentionMs,
        ...callInfo(options),
        ...(options.codec === undefined ? {} : { codec: options.codec }),
      };
      this.#rows.set(id, request);
      return { status: 'approval_required', record: view(request) };
    }
    if (row === undefined) {
      if (this.#has('claim-read-await-write')) {
        await pause();
        now = this.#clock();
      }
      const created: Row = {
        key: ref.key,
        tenant: ref.tenant,
        tool: options.tool,
        fingerprint: options.fingerprint,
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: options.owner,
        leaseExpiresAtMs: deadlineNow + options.leaseMs,
        expiresAtMs: this.#expiry(deadlineNow + options.leaseMs + options.retentionMs),
        retentionMs: options.retentionMs,
        ...callInfo(options),
        ...(options.codec === undefined ? {} : { codec: options.codec }),
        claimedAtMs: now,
        updatedAtMs: now,
      };
      this.#rows.set(id, created);
      return {
        status: 'acquired',
        fence: 1,
        attempt: 1,
        leaseExpiresAtMs: created.leaseExpiresAtMs,
        takeover: false,
      };
    }
    const conflicts = this.#has('approval-ignores-fingerprint')
      ? // "the approval is under the key already": the old check, blind to the approval's arguments
        row.tool !== options.tool || (options.checkFingerprint && row.fingerprint !== options.fingerprint)
      : this.#has('conflict-ignores-fingerprint')
        ? row.tool !== options.tool
        : claimConflicts(row, options);
    if (conflicts) return { status: 'conflict', record: view(row) };
    const approval = approvalClaimDecision(row);
    if (approval === 'consume') {
      if (this.#has('approval-consume-read-await-write')) {
        // Read "approved", await (a round trip), then write the claim computed from the read.
        const seen = { ...row };
        await pause();
        row = { ...seen };
        this.#rows.set(id, row);
      }
      Object.assign(row, {
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: options.owner,
        leaseExpiresAtMs: deadlineNow + options.leaseMs,
        expiresAtMs: this.#expiry(deadlineNow + options.leaseMs + options.retentionMs),
        retentionMs: options.retentionMs,
        claimedAtMs: now,
        updatedAtMs: now,
      });
      delete row.runId;
      delete row.callId;
      delete row.description;
      Object.assign(row, callInfo(options));
      return {
        status: 'acquired',
        fence: 1,
        attempt: 1,
        leaseExpiresAtMs: row.leaseExpiresAtMs,
        takeover: false,
      };
    }
    if (approval !== undefined) return { status: approval, record: view(row) };
    if (row.state === 'in_progress' && row.owner === options.owner && !this.#has('resend-busy')) {
      row.leaseExpiresAtMs = Math.max(row.leaseExpiresAtMs, deadlineNow + options.leaseMs);
      row.expiresAtMs = Math.max(row.expiresAtMs, this.#expiry(row.leaseExpiresAtMs + options.retentionMs));
      return {
        status: 'acquired',
        fence: row.fence,
        attempt: row.attempt,
        leaseExpiresAtMs: row.leaseExpiresAtMs,
        takeover: row.attempt > 1,
      };
    }
    if (row.state !== 'in_progress') return { status: row.state, record: view(row) } as ClaimResult;
    if (row.leaseExpiresAtMs > now) return { status: 'busy', record: view(row), nowMs: now };
    if (options.mode === 'at-most-once' && !this.#has('at-most-once-takes-over')) {
      if (this.#has('mark-expired-read-await-write')) {
        const seen = { ...row };
        await pause();
        row = { ...seen, state: 'indeterminate', error: leaseExpired(seen.attempt), updatedAtMs: now };
        row.expiresAtMs = this.#expiry(this.#clock() + options.retentionMs);
        this.#rows.set(id, row);
      } else {
        row.state = 'indeterminate';
        row.error = leaseExpired(row.attempt);
        row.expiresAtMs = this.#expiry(now + options.retentionMs);
        row.updatedAtMs = now;
      }
      this.#notify(id, 'settled');
      return { status: 'indeterminate', record: view(row) };
    }
    const exhausted = this.#has('max-attempts-off-by-one')
      ? row.attempt > options.maxAttempts
      : row.attempt >= options.maxAttempts;
    if (exhausted) {
      row.state = 'abandoned';
      row.error = leaseExpired(row.attempt);
      row.updatedAtMs = now;
      row.expiresAtMs = this.#expiry(now + options.retentionMs);
      this.#notify(id, 'settled');
      return { status: 'abandoned', record: view(row) };
    }
    let target = row;
    if (this.#has('takeover-read-await-write')) {
      // Read, await (a network round trip in a real store), write what was computed from the read.
      const seen = { ...row };
      await pause();
      target = { ...seen };
      this.#rows.set(id, target);
    }
    target.fence += 1;
    if (!this.#has('takeover-keeps-attempt')) target.attempt += 1;
    target.owner = options.owner;
    target.leaseExpiresAtMs = deadlineNow + options.leaseMs;
    target.expiresAtMs = this.#expiry(deadlineNow + options.leaseMs + options.retentionMs);
    target.retentionMs = options.retentionMs;
    delete target.runId;
    delete target.callId;
    delete target.description;
    Object.assign(target, callInfo(options));
    target.claimedAtMs = now;
    target.updatedAtMs = now;
    return {
      status: 'acquired',
      fence: target.fence,
      attempt: target.attempt,
      leaseExpiresAtMs: target.leaseExpiresAtMs,
      takeover: true,
    };
  }

  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkHolder(holder);
      checkLeaseMs(leaseMs);
    });
    this.#open('renew');
    const id = idOf(ref);
    let row = this.#live(id, this.#clock());
    if (row === undefined) return { status: 'lost', reason: 'not_found' };
    if (!this.#has('renew-unchecked') && !this.#isHolder(row, holder))
      return { status: 'lost', reason: 'stale' };
    if (row.state !== 'in_progress') return { status: 'lost', reason: 'settled' };
    if (this.#has('renew-read-await-write')) {
      const seen = { ...row };
      await pause();
      row = { ...seen };
      this.#rows.set(id, row);
    }
    row.leaseExpiresAtMs = this.#clock() + leaseMs;
    if (!this.#has('renew-keeps-retention')) {
      row.expiresAtMs = Math.max(row.expiresAtMs, this.#expiry(row.leaseExpiresAtMs + row.retentionMs));
    }
    return { status: 'renewed', leaseExpiresAtMs: row.leaseExpiresAtMs };
  }

  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkHolder(holder);
      checkRetentionMs(retentionMs);
    });
    this.#checkOutcome(outcome);
    this.#open('complete');
    const id = idOf(ref);
    let row = this.#live(id, this.#clock());
    if (row === undefined) return { status: 'not_found' };
    const accepted =
      (this.#has('complete-unfenced') || this.#isHolder(row, holder)) &&
      (row.state !== 'completed' || this.#has('complete-overwrites-completed'));
    if (!accepted) return { status: 'stale', record: view(row) };
    if (this.#has('complete-read-await-write')) {
      const seen = { ...row };
      await pause();
      row = { ...seen };
      this.#rows.set(id, row);
    }
    row.state = 'completed';
    row.outcome = this.#store(outcome);
    delete row.error;
    row.expiresAtMs = this.#settleExpiry(row, this.#clock(), retentionMs);
    row.updatedAtMs = this.#clock();
    this.#notify(id, 'settled');
    return { status: 'completed' };
  }

  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkHolder(holder);
    });
    this.#open('release');
    const id = idOf(ref);
    const row = this.#live(id, this.#clock());
    if (row === undefined) return { status: 'not_found' };
    if ((!this.#has('release-unchecked') && !this.#isHolder(row, holder)) || row.state !== 'in_progress') {
      return { status: 'stale', record: view(row) };
    }
    if (this.#has('release-read-await-write')) await pause();
    this.#rows.delete(id);
    if (!this.#has('wait-misses-release')) this.#notify(id, 'settled');
    return { status: 'released' };
  }

  async markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkHolder(holder);
      checkRecordedError(error);
      checkRetentionMs(retentionMs);
    });
    this.#open('markIndeterminate');
    const id = idOf(ref);
    let row = this.#live(id, this.#clock());
    if (row === undefined) return { status: 'not_found' };
    if (!this.#isHolder(row, holder) || row.state !== 'in_progress')
      return { status: 'stale', record: view(row) };
    if (this.#has('mark-read-await-write')) {
      const seen = { ...row };
      await pause();
      row = { ...seen };
      this.#rows.set(id, row);
    }
    row.state = 'indeterminate';
    row.error = { type: error.type, message: error.message };
    row.expiresAtMs = this.#settleExpiry(row, this.#clock(), retentionMs);
    row.updatedAtMs = this.#clock();
    this.#notify(id, 'settled');
    return { status: 'marked' };
  }

  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    this.#check(() => checkRecordRef(ref));
    if (this.#down && this.#has('answers-when-down')) return null; // "catch { return null }"
    this.#open('get');
    const row = this.#live(idOf(ref), this.#clock());
    return row === undefined ? null : view(row);
  }

  /** Whether `row` has the holder the resolution expects (any, without `expect`). */
  #expected(row: Row, resolution: Resolution): boolean {
    const { expect } = resolution;
    if (expect === undefined || this.#has('resolve-ignores-expect')) return true;
    if (this.#has('resolve-expect-fence-only')) return row.fence === expect.fence;
    return row.fence === expect.fence && row.owner === expect.owner;
  }

  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkRetentionMs(retentionMs);
    });
    if ('outcome' in resolution) this.#checkOutcome(resolution.outcome);
    this.#check(() => checkResolutionAudit(resolution));
    this.#check(() => checkResolutionCondition(resolution));
    this.#check(() => checkResolutionForce(resolution));
    this.#open('resolve');
    const id = idOf(ref);
    let row = this.#live(id, this.#clock());
    if (row === undefined) return { status: 'not_found' };
    if (!this.#expected(row, resolution)) return { status: 'changed', record: view(row) };
    const now = this.#clock();
    if (!this.#has('resolve-in-progress')) {
      // "only indeterminate and abandoned records": the old rule, blind to a gone holder.
      const stateOnly = this.#has('resolve-refuses-expired') && row.state === 'in_progress';
      const decision = stateOnly ? 'not_resolvable' : resolveDecision(row, resolution, now);
      if (decision !== 'settle') return { status: decision, record: view(row) };
    }
    const forced = overridesLiveHolder(row, now) && !this.#has('resolve-forced-unmarked');
    if (this.#has('resolve-read-await-write')) {
      const seen = { ...row };
      await pause();
      row = { ...seen };
      this.#rows.set(id, row);
    }
    const entry = {
      ...entryOf(row, resolution, this.#clock()),
      ...(forced ? { forced: true as const } : {}),
    };
    if ('outcome' in resolution) {
      row.state = 'completed';
      row.outcome = this.#store(resolution.outcome);
      delete row.error;
      row.expiresAtMs = this.#expiry(this.#clock() + retentionMs);
      row.updatedAtMs = this.#clock();
      row.resolution = entry;
    } else {
      this.#rows.delete(id);
    }
    if (!('released' in resolution && this.#has('release-drops-resolution'))) {
      this.#journal.set(id, [
        { entry, expiresAtMs: this.#clock() + retentionMs },
        ...(this.#journal.get(id) ?? []),
      ]);
    }
    this.#notify(id, 'settled');
    return { status: 'resolved' };
  }

  async decideApproval(
    ref: RecordRef,
    decision: ApprovalDecision,
    retentionMs: number,
  ): Promise<DecideResult> {
    this.#check(() => {
      checkRecordRef(ref);
      checkApprovalDecision(decision);
      checkRetentionMs(retentionMs);
    });
    this.#open('decideApproval');
    const id = idOf(ref);
    const now = this.#clock();
    const row = this.#live(id, now);
    let action = approvalDecision(row, decision);
    // "the latest decision wins": an approval overwrites a denial.
    if (action === 'denied' && this.#has('denial-overridable')) action = 'write';
    const state = decision.approved ? 'approved' : 'denied';
    const approval = {
      approved: decision.approved,
      ...(decision.by === undefined ? {} : { by: decision.by }),
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      atMs: now,
    };
    const expiresAtMs = this.#expiry(now + retentionMs);
    switch (action) {
      case 'not_found':
        return { status: 'not_found' };
      case 'create': {
        const { approved: _approved, by: _by, reason: _reason, expect: _expect, ...fields } = decision;
        const created: Row = {
          ...beforeClaim(ref, { ...fields, owner: '' }, state, now, expiresAtMs),
          owner: '',
          retentionMs,
          approval,
          ...callInfo(fields as ClaimOptions),
          ...(fields.codec === undefined ? {} : { codec: fields.codec }),
        };
        this.#rows.set(id, created);
        return { status: 'decided', record: view(created) };
      }
      case 'write': {
        const found = row as Row;
        Object.assign(found, { state, approval, expiresAtMs, retentionMs, updatedAtMs: now });
        return { status: 'decided', record: view(found) };
      }
      case 'unchanged':
        return { status: 'decided', record: view(row as Row) };
      default:
        return { status: action, record: view(row as Row) };
    }
  }

  async list(options: ListOptions): Promise<ListPage> {
    this.#check(() => checkListOptions(options));
    this.#open('list');
    const nowMs = this.#clock();
    const order = options.order ?? 'oldest';
    const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
    const states = listedStates(options);
    const found: ListedRecord[] = [];
    // A scan: fine for a test store (a real one keeps an index, docs/store-contract.md).
    for (const id of [...this.#rows.keys()]) {
      const row = this.#live(id, nowMs);
      if (row === undefined || (options.allTenants !== true && row.tenant !== options.tenant)) continue;
      const record = view(row);
      const position = { updatedAtMs: record.updatedAtMs ?? 0, tenant: record.tenant, key: record.key };
      if (!recordMatches(record, options, states, nowMs) || !afterCursor(position, cursor, order)) continue;
      if (this.#has('list-returns-outcome')) found.push(record);
      else {
        const { outcome: _outcome, ...listed } = record;
        found.push(listed);
      }
    }
    const position = (r: ListedRecord) => ({ updatedAtMs: r.updatedAtMs ?? 0, tenant: r.tenant, key: r.key });
    found.sort((a, b) => compareListPositions(position(a), position(b)) * (order === 'oldest' ? 1 : -1));
    const records = found.slice(0, options.limit);
    const last = records.at(-1);
    if (found.length <= options.limit || last === undefined) return { records, nowMs };
    return { records, cursor: encodeListCursor(position(last), order), nowMs };
  }

  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    this.#check(() => checkRecordRef(ref));
    this.#open('resolutions');
    const nowMs = this.#clock();
    return (this.#journal.get(idOf(ref)) ?? [])
      .filter((item) => item.expiresAtMs > nowMs)
      .map((item) => item.entry);
  }

  async forget(options: { readonly tenant: string }): Promise<number> {
    this.#check(() => checkRecordRef({ tenant: options.tenant, key: 'forget' }));
    if (this.#down && this.#has('answers-when-down')) return 0;
    this.#open('forget');
    let erased = 0;
    for (const [id, row] of this.#rows) {
      const matches = this.#has('forget-prefix')
        ? row.tenant.startsWith(options.tenant)
        : row.tenant === options.tenant;
      if (matches) {
        this.#rows.delete(id);
        this.#notify(id, 'settled');
        erased += 1;
      }
    }
    for (const [id, list] of this.#journal)
      if (list[0]?.entry.tenant === options.tenant) this.#journal.delete(id);
    return erased;
  }

  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    this.#check(() => checkRecordRef(ref));
    if (this.#down && this.#has('answers-when-down')) return 'settled';
    this.#open('waitForSettle');
    const id = idOf(ref);
    const started = performance.now();
    return new Promise<WaitResult>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (result: WaitResult) => {
        if (timer !== undefined) clearTimeout(timer);
        this.#waiters.get(id)?.delete(finish);
        resolve(result);
      };
      const arm = (): void => {
        const row = this.#live(id, this.#clock());
        if (row === undefined || row.state !== 'in_progress') {
          finish('settled');
          return;
        }
        const untilLeaseMs = row.leaseExpiresAtMs - this.#clock();
        if (untilLeaseMs <= 0) {
          finish('lease_expired');
          return;
        }
        const untilTimeoutMs = started + options.timeoutMs - performance.now();
        if (untilTimeoutMs <= 0) {
          finish('timeout');
          return;
        }
        if (this.#has('wait-fires-early') && untilLeaseMs <= untilTimeoutMs) {
          // Trusts its timer (set early "to be safe") instead of the clock. Half the wait early,
          // not a few ms: a loaded machine's timers run late by more than that, which hid it.
          timer = setTimeout(() => finish('lease_expired'), Math.floor(untilLeaseMs / 2));
          return;
        }
        timer = setTimeout(arm, Math.ceil(Math.min(untilLeaseMs, untilTimeoutMs)));
      };
      let set = this.#waiters.get(id);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(id, set);
      }
      set.add(finish);
      arm();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const [id] of this.#waiters) this.#notify(id, 'settled');
  }
}

function idOf(ref: RecordRef): string {
  return `${ref.tenant}\u0000${ref.key}`;
}

/** The fields of a record before its claim: fence 0, attempt 0, no lease. */
function beforeClaim(
  ref: RecordRef,
  call: { readonly tool: string; readonly fingerprint: string; readonly owner: string },
  state: 'awaiting_approval' | 'approved' | 'denied',
  now: number,
  expiresAtMs: number,
): Omit<Row, 'retentionMs'> {
  return {
    key: ref.key,
    tenant: ref.tenant,
    tool: call.tool,
    fingerprint: call.fingerprint,
    state,
    fence: 0,
    attempt: 0,
    owner: call.owner,
    leaseExpiresAtMs: 0,
    expiresAtMs,
    claimedAtMs: 0,
    updatedAtMs: now,
  };
}

function leaseExpired(attempt: number): RecordedError {
  return { type: 'LeaseExpired', message: `attempt ${attempt} lost its lease` };
}

function view(row: Row): IdempotencyRecord {
  return { ...row };
}

function callInfo(options: ClaimOptions): Partial<Pick<Row, 'runId' | 'callId' | 'description'>> {
  return {
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.callId === undefined ? {} : { callId: options.callId }),
    ...(options.description === undefined ? {} : { description: options.description }),
  };
}

function entryOf(row: Row, resolution: Resolution, atMs: number): ResolutionEntry {
  return {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: row.state as ResolutionEntry['fromState'],
    fence: row.fence,
    attempt: row.attempt,
    ...(row.error === undefined ? {} : { error: { ...row.error } }),
    ...(resolution.by === undefined ? {} : { by: resolution.by }),
    ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
    atMs,
  };
}
